import { readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { membench, ROOT } from './helpers.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';

/** The temp dirs the tests made, removed after them. */
const made: string[] = [];
const tempDir = async (): Promise<string> => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-report-'));
  made.push(dir);
  return dir;
};
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

/*
 * report and explain start no child process: the cases run their built command modules in this
 * process (test/helpers/cli-in-process.ts); the CLI process renders the baseline below and makes one refusal.
 */

/**
 * The committed baseline cut to the cells of one scenario (as `membench run -c recipes-zh` would
 * write them), as `membench report` writes a results.json: every report and chart is still rendered
 * from it, at about a third of the whole baseline's cost per render.
 */
let baseline: string;
beforeAll(async () => {
  const run = JSON.parse(readFileSync(path.join(ROOT, 'baselines/offline.json'), 'utf8')) as {
    cells: { scenario: string }[];
  };
  const dir = await tempDir();
  const cut = path.join(dir, 'cut.json');
  await writeFile(cut, JSON.stringify({ ...run, cells: run.cells.filter((cell) => cell.scenario === 'recipes-zh') }));
  expect((await membench(['report', cut, '--out', path.join(dir, 'run')])).code).toBe(0);
  baseline = path.join(dir, 'run', 'results.json');
});

describe('membench report', () => {
  it('re-renders every report in the run dir without --overwrite', async () => {
    const dir = await tempDir();
    const results = path.join(dir, 'results.json');
    await writeFile(results, readFileSync(baseline, 'utf8'));
    const result = await membenchInProcess(['report', results]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // One line however many charts, as membench run says it (results.json was read in place, not written).
    expect(result.stdout).toMatch(
      /^wrote \S+\/ \(report\.md, report\.html, junit\.xml and \d+ charts in charts\/\)\n$/u,
    );
    expect(readFileSync(path.join(dir, 'report.html'), 'utf8')).toContain('<canvas id="chart-recall-vs-tokens"');
    expect(readFileSync(path.join(dir, 'junit.xml'), 'utf8')).toContain('<testsuite name="recipes-zh"');
    expect(readFileSync(results, 'utf8')).toBe(readFileSync(baseline, 'utf8'));
    expect((await membenchInProcess(['report', dir])).code).toBe(0);
  });

  it('leaves results.json as it was read: untouched in place, copied byte for byte to --out', async () => {
    const dir = await tempDir();
    const results = path.join(dir, 'results.json');
    // Indented differently from any membench: a render would change its bytes.
    const text = JSON.stringify(JSON.parse(readFileSync(baseline, 'utf8')), null, 1);
    await writeFile(results, text);
    const past = new Date('2026-01-01T00:00:00Z');
    utimesSync(results, past, past);
    expect((await membenchInProcess(['report', results])).code).toBe(0);
    expect(readFileSync(results, 'utf8')).toBe(text);
    expect(statSync(results).mtime).toEqual(past);
    // Still the run's own file: a later --overwrite keeps it.
    expect(JSON.parse(readFileSync(path.join(dir, '.membench-files.json'), 'utf8')).files).toContain('results.json');
    const out = path.join(dir, 'copy');
    expect((await membenchInProcess(['report', results, '--out', out])).code).toBe(0);
    expect(readFileSync(path.join(out, 'results.json'), 'utf8')).toBe(text);
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toBe(readFileSync(path.join(dir, 'report.md'), 'utf8'));
  });

  it('writes into --out, refuses an existing run there unless --overwrite, and applies --recall-threshold', async () => {
    const out = path.join(await tempDir(), 'rendered');
    expect((await membenchInProcess(['report', baseline, '--out', out, '--recall-threshold', '0.5'])).code).toBe(0);
    expect(readFileSync(path.join(out, 'junit.xml'), 'utf8')).toMatch(/<failure message="context recall 0\.\d\d/u);
    const again = await membenchInProcess(['report', baseline, '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already holds a run');
    expect((await membenchInProcess(['report', baseline, '--out', out, '--overwrite'])).code).toBe(0);
  });

  it.each([
    ['no cell', (run: { cells: unknown[] }) => ({ ...run, cells: [] }), 'has no cells: nothing to report'],
    [
      'a cell twice',
      (run: { cells: unknown[] }) => ({ ...run, cells: [run.cells[0], ...run.cells] }),
      'holds two cells with id "',
    ],
  ])('report and explain refuse results with %s (exit 2), writing nothing', async (_what, doctor, message) => {
    const dir = await tempDir();
    const results = path.join(dir, 'results.json');
    await writeFile(
      results,
      JSON.stringify(doctor(JSON.parse(readFileSync(baseline, 'utf8')) as { cells: unknown[] })),
    );
    for (const command of ['report', 'explain']) {
      const result = await membenchInProcess([command, results]);
      expect(result.code, command).toBe(2);
      expect(result.stderr, command).toContain(`membench: ${results} ${message}`);
      expect(result.stdout, command).toBe('');
    }
    expect(readdirSync(dir)).toEqual(['results.json']);
  });

  it('explain refuses a run whose every cell failed (exit 2), naming one and the way to rerun them', async () => {
    const dir = await tempDir();
    const results = path.join(dir, 'results.json');
    const run = JSON.parse(readFileSync(baseline, 'utf8')) as { cells: Record<string, unknown>[] };
    // An error cell keeps its identity (the baseline's schema version names the setting `label`), no figures.
    const identity = ['id', 'scenario', 'strategy', 'label', 'setting', 'options', 'durability', 'trial', 'seed'];
    const failed = run.cells.map((cell) => ({
      ...Object.fromEntries(identity.filter((key) => key in cell).map((key) => [key, cell[key]])),
      status: 'error',
      error: 'create says no',
      durationMs: 1,
    }));
    await writeFile(results, JSON.stringify({ ...run, cells: failed }));
    const result = await membenchInProcess(['explain', results]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `membench: ${results}: every cell of the run failed (${failed.length} in error; ${String(run.cells[0]!.id)}: create says no): nothing to explain; rerun them with membench run --resume ${dir}\n`,
    );
    expect(result.stdout).toBe('');
  });

  it('--overwrite on a run dir without a manifest replaces the fixed report names and warns of the rest', async () => {
    const out = path.join(await tempDir(), 'old');
    expect((await membenchInProcess(['report', baseline, '-o', out])).code).toBe(0);
    await rm(path.join(out, '.membench-files.json'));
    await writeFile(path.join(out, 'notes.md'), 'mine\n');
    const result = await membenchInProcess(['report', baseline, '-o', out, '--overwrite']);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      /^warning: .* has no \.membench-files\.json \(written by an older membench, or not by membench\), so --overwrite removes nothing there but results\.json, report\.md, report\.html, junit\.xml: \d+ other files stay \(notes\.md, charts\/.*\), written over only where a new file has the same name/u,
    );
    expect(readFileSync(path.join(out, 'notes.md'), 'utf8')).toBe('mine\n');
  });

  it('exits 2 for a missing file or a bad threshold', async () => {
    expect((await membenchInProcess(['report', 'nowhere.json'])).stderr).toContain(
      'nowhere.json: no such file or directory',
    );
    const bad = await membench(['report', baseline, '--recall-threshold', '2']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--recall-threshold 2: expected a share between 0 and 1');
  });
});
