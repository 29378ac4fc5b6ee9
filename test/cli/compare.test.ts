import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { membench, ROOT } from './helpers.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import type { OkRun } from '../helpers/cells.js';
import { tempDir as newTempDir } from '../helpers/temp-dir.js';

const COMMITTED = path.join(ROOT, 'baselines/offline.json');
const tempDir = () => newTempDir('membench-compare-');

/**
 * The committed baseline cut to its two recipe scenarios (18 of its cells, as `run -c recipes-en -c
 * recipes-zh` writes them): what the gate does with a cell is the same, at a fraction of the whole
 * file's reading and comparing. The committed file itself is compared with a fresh run below.
 */
let BASELINE: string;
let cut: string;
beforeAll(async () => {
  const committed = JSON.parse(readFileSync(COMMITTED, 'utf8')) as OkRun;
  cut = JSON.stringify({
    ...committed,
    cells: committed.cells.filter((cell) => ['recipes-en', 'recipes-zh'].includes(cell.scenario)),
  });
  BASELINE = await writeResults(JSON.parse(cut));
});
const baseline = (): OkRun => JSON.parse(cut) as OkRun;

async function writeResults(result: unknown): Promise<string> {
  const file = path.join(await tempDir(), 'results.json');
  await writeFile(file, JSON.stringify(result, null, 2));
  return file;
}

/**
 * compare starts no child process: most cases run its built command module in this process
 * (test/helpers/cli-in-process.ts); one CLI process per exit code (0, 1, 2) checks what leaves it.
 */
describe('membench compare', () => {
  it('passes a run compared with itself (exit 0)', async () => {
    const result = await membench(['compare', BASELINE, BASELINE]);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/OK: no regression \(\d+ cells compared, 0 missing, 0 new, 0 in error\)/u);
  });

  it('fails a doctored recall drop and token increase (exit 1), naming cell and metric', async () => {
    const head = baseline();
    const cell = head.cells.find((item) => item.id === 'recipes-en/buffer')!;
    cell.recall.contextRecall = { n: cell.recall.contextRecall.n, hits: 0, value: 0 };
    const window = head.cells.find((item) => item.id === 'recipes-zh/window(k=2)')!;
    window.tokens.contextTotal = Math.round(window.tokens.contextTotal * 1.5);
    const result = await membench(['compare', BASELINE, await writeResults(head)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/recipes-en\/buffer +│ context recall +│ 1\.00 \(7\/7\) +│ 0\.00 \(0\/7\)/u);
    expect(result.stdout).toMatch(/recipes-zh\/window\(k=2\) +│ context tokens .*│ \+50\.0%/u);
    expect(result.stdout).toContain('REGRESSION');
    expect(
      (
        await membenchInProcess([
          'compare',
          BASELINE,
          await writeResults(head),
          '--max-recall-drop',
          '1',
          '--max-token-increase',
          '0.6',
        ])
      ).code,
    ).toBe(0);
  });

  it('accepts the committed baseline against a fresh offline run of the same matrix', async () => {
    const out = path.join(await tempDir(), 'current');
    // Three of the baseline's scenarios (English corrections, the Chinese recipes, a generated
    // conversation's 268 probes) by its two cheapest strategies and a retriever: the generated
    // probes are where a change to retrieval moves recall (a baseline older than the probe queries'
    // date prefix failed the docs' CI step with 26 regressions, none in the two scripted scenarios).
    const run = await membench([
      'run',
      ...['buffer', 'window', 'bm25'].flatMap((strategy) => ['-s', strategy]),
      ...['preference-corrections', 'recipes-zh', 'generated-en'].flatMap((scenario) => ['-c', scenario]),
      '-o',
      out,
      '-q',
    ]);
    expect(run.code).toBe(0);
    // Latency is left out by default: the baseline does not say it was timed on this machine.
    // A subset of the baseline's matrix: its other cells are missing by design.
    const result = await membenchInProcess(['compare', COMMITTED, out, '--allow-missing']);
    expect(result.stdout).toContain('latency not compared: base does not record the machine it was timed on');
    expect(result.stdout).toContain('OK: no regression');
    expect(result.code).toBe(0);
  });

  it('fails a head that lost cells (exit 1, naming them) unless --allow-missing', async () => {
    const base = baseline();
    const shrunk = await writeResults({ ...base, cells: base.cells.slice(0, 2) });
    const result = await membenchInProcess(['compare', BASELINE, shrunk]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      `Missing (only in base): ${base.cells
        .slice(2)
        .map((cell) => cell.id)
        .join(', ')}`,
    );
    expect(result.stdout).toContain(
      `REGRESSION: ${base.cells.length - 2} regressed metric(s) in ${base.cells.length - 2} cell(s) (2 cells compared, ${base.cells.length - 2} missing, 0 new, 0 in error)`,
    );
    expect(result.stdout).toMatch(
      new RegExp(`${base.cells[2]!.id.replace(/[()]/gu, '\\$&')} +│ missing from head +│ ok +│ absent`, 'u'),
    );
    const allowed = await membenchInProcess(['compare', BASELINE, shrunk, '--allow-missing']);
    expect(allowed.stdout).toContain(
      `OK: no regression (2 cells compared, ${base.cells.length - 2} missing, 0 new, 0 in error)`,
    );
    expect(allowed.code).toBe(0);
  });

  it('fails a cell in error in head even when it was in error in base (exit 1) unless --allow-missing', async () => {
    const run = baseline();
    Object.assign(run.cells[1]!, { status: 'error', error: 'the pool worker exited unexpectedly' });
    const file = await writeResults(run);
    const result = await membenchInProcess(['compare', file, file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`In error in head: ${run.cells[1]!.id}`);
    expect((await membenchInProcess(['compare', file, file, '--allow-missing'])).code).toBe(0);
  });

  it('refuses an empty head with exit 2 instead of "OK"', async () => {
    const empty = await writeResults({ ...baseline(), cells: [] });
    const result = await membenchInProcess(['compare', BASELINE, empty]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`membench: ${empty} has no cells: nothing to compare with ${BASELINE}`);
    expect(result.stdout).not.toContain('OK');
  });

  it('writes the comparison to GITHUB_STEP_SUMMARY with --github-summary', async () => {
    const summary = path.join(await tempDir(), 'summary.md');
    const result = await membenchInProcess(['compare', BASELINE, BASELINE, '--github-summary'], {
      env: { GITHUB_STEP_SUMMARY: summary },
    });
    expect(result.code).toBe(0);
    expect(readFileSync(summary, 'utf8')).toMatch(/^## membench compare: OK: no regression/u);
  });

  it.each([
    [['compare', 'missing.json', 'baselines/offline.json'], 'membench: missing.json: no such file or directory'],
    [
      ['compare', 'package.json', 'baselines/offline.json'],
      'package.json: not a membench results file (expected a "header"',
    ],
    [['compare', 'README.md', 'baselines/offline.json'], 'README.md:1:1: not a membench results file: not JSON'],
    [['compare', 'fixtures', 'baselines/offline.json'], 'fixtures: a directory without results.json'],
    [
      ['compare', 'baselines/offline.json', 'baselines/offline.json', '--max-latency-ratio', '0.5'],
      '--max-latency-ratio 0.5: expected a number >= 1',
    ],
  ])('exits 2 with a clear message for %j', async (args, message) => {
    // The bad file first, so nothing reads the baseline; the first case as the CLI process, the others in this one.
    const result = await (args[1] === 'missing.json' ? membench : membenchInProcess)(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/\n\s+at /u);
  });

  it('exits 2 on a schema version mismatch', async () => {
    const head = baseline();
    (head.header as { schemaVersion: number }).schemaVersion = 1;
    const result = await membenchInProcess(['compare', BASELINE, await writeResults(head)]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/results schema version 1, but this membench reads versions 2, 3, 4, 5, 6 and 7/u);
    expect(result.stderr).not.toMatch(/\n\s+at /u);
  });
});
