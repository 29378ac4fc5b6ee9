/**
 * `membench generate` end to end on the built CLI: files that validate and run, byte-identical for
 * the same spec and seed, never written over without --overwrite, and bad specs refused with a
 * located message (exit 2). Also: `list scenarios` and `run --help` name the built-in suite.
 * generate starts no child process: most cases run its built command module in this process
 * (test/helpers/cli-in-process.ts); a CLI process makes one generation, one run and one refusal.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateWorkload } from '../../harness/scenarios/generator.js';
import { loadSpecFile } from '../../harness/scenarios/generator-spec.js';
import { MANIFEST_FILE } from '../../harness/core/manifest.js';
import { membench } from './helpers.js';
import { commandHelp } from '../helpers/cli-help.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import { tempDir as newTempDir } from '../helpers/temp-dir.js';

const tempDir = () => newTempDir('membench-generate-cli-');
const TINY = [
  'name: tiny',
  'exchanges: 40',
  'distances: [1, 2, 4, 8, 16, 32]',
  'facts: { fact: 2, distractor: 1, update: 1, multi-hop: 1, temporal: 1, abstention: 2 }',
  'sessions: { every: 10 }',
  '',
].join('\n');

async function tinySpec(): Promise<{ dir: string; spec: string }> {
  const dir = await tempDir();
  const spec = path.join(dir, 'tiny.yaml');
  await writeFile(spec, TINY);
  return { dir, spec };
}

describe('membench generate', () => {
  it('writes one valid scenario file per language, the same bytes again for the same seed, others for another', async () => {
    const { dir, spec } = await tinySpec();
    const out = path.join(dir, 'out');
    const first = await membench(['generate', spec, '--out', out]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(readdirSync(out).sort()).toEqual([MANIFEST_FILE, 'tiny-en.yaml', 'tiny-zh.yaml']);
    expect(first.stdout).toMatch(
      /^tiny-en\.yaml: 40 exchanges in 4 sessions, \d+ probes at distances 1–32 \(abstention 2, distractor\/\w+ \d+, /mu,
    );
    expect(first.stdout).toMatch(/^wrote 2 scenario files \(\d+ probes\) to /mu);
    const files = readdirSync(out)
      .filter((name) => name.endsWith('.yaml'))
      .map((name) => path.join(out, name));
    const validate = await membenchInProcess(['validate', ...files]);
    expect(validate.stdout.trim()).toBe('2 files checked: 2 valid, 0 invalid');
    const bytes = files.map((file) => readFileSync(file, 'utf8'));

    const refused = await membenchInProcess(['generate', spec, '--out', out, '--seed', '9']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `${out} already holds 2 scenario files (tiny-en.yaml, tiny-zh.yaml): choose another --out, or pass --overwrite`,
    );
    expect(files.map((file) => readFileSync(file, 'utf8'))).toEqual(bytes);

    expect((await membenchInProcess(['generate', spec, '--out', out, '--overwrite'])).code).toBe(0);
    expect(files.map((file) => readFileSync(file, 'utf8'))).toEqual(bytes);
    expect((await membenchInProcess(['generate', spec, '--out', out, '--overwrite', '--seed', '9'])).code).toBe(0);
    expect(files.map((file) => readFileSync(file, 'utf8'))).not.toEqual(bytes);
  });

  it('refuses an --out that is a file, or a run dir, before writing anything', async () => {
    const { dir, spec } = await tinySpec();
    const file = path.join(dir, 'a-file');
    await writeFile(file, 'x');
    const onFile = await membenchInProcess(['generate', spec, '--out', file]);
    expect(onFile.code).toBe(2);
    expect(onFile.stderr).toContain(`--out ${file}: a file of that name (or on its path) exists, not a directory`);
    const run = path.join(dir, 'run');
    await mkdir(run);
    await writeFile(path.join(run, 'results.json'), '{}');
    const intoRun = await membenchInProcess(['generate', spec, '--out', run, '--overwrite']);
    expect(intoRun.code).toBe(2);
    expect(intoRun.stderr).toContain(
      `--out ${run} is a membench run dir (it holds results.json): choose another --out`,
    );
    expect(readdirSync(run)).toEqual(['results.json']);
  });

  it('refuses to write a generated file over the spec it comes from, even with --overwrite', async () => {
    const { dir } = await tinySpec();
    // The spec named as its English file will be: generating into its own dir would replace it.
    const spec = path.join(dir, 'tiny-en.yaml');
    await writeFile(spec, TINY);
    const refused = await membenchInProcess(['generate', spec, '--out', dir, '--overwrite']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      `--out ${dir}: the generated tiny-en.yaml would replace ${spec}, the spec it is generated from: choose another --out, or rename the spec`,
    );
    expect(readFileSync(spec, 'utf8')).toBe(TINY);
    expect(existsSync(path.join(dir, 'tiny-zh.yaml'))).toBe(false);
  });

  it('the files run like any scenario: buffer, which keeps everything, finds every expect string', async () => {
    const { dir, spec } = await tinySpec();
    const out = path.join(dir, 'out');
    expect((await membenchInProcess(['generate', spec, '-o', out])).code).toBe(0);
    const run = await membench([
      'run',
      '-c',
      path.join(out, 'tiny-en.yaml'),
      '-c',
      path.join(out, 'tiny-zh.yaml'),
      '-s',
      'buffer',
      '-s',
      'window',
      '-w',
      '1',
      '-o',
      path.join(dir, 'run'),
      '-q',
    ]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const results = JSON.parse(readFileSync(path.join(dir, 'run', 'results.json'), 'utf8')) as {
      cells: { id: string; probes: { contextRecall?: boolean; category: string; label?: string }[] }[];
    };
    for (const cell of results.cells) {
      const answerable = cell.probes.filter((probe) => probe.category !== 'abstention');
      expect(answerable.length).toBeGreaterThan(20);
      expect(cell.probes.every((probe) => probe.label !== undefined)).toBe(true);
      if (cell.id.includes('/buffer'))
        expect(
          answerable.every((probe) => probe.contextRecall === true),
          cell.id,
        ).toBe(true);
      else
        expect(
          answerable.some((probe) => probe.contextRecall === false),
          cell.id,
        ).toBe(true);
    }
  }, 120_000);

  it('the built-in suite by name: the files hold exactly what run -c generated replays', async () => {
    const out = path.join(await tempDir(), 'suite');
    const result = await membenchInProcess(['generate', 'generated', '-o', out]);
    expect(result.code).toBe(0);
    const expected = generateWorkload(await loadSpecFile('scenarios/suites/generated.yaml'));
    expect(readdirSync(out).sort()).toEqual([MANIFEST_FILE, 'generated-en.yaml', 'generated-zh.yaml']);
    for (const item of expected)
      expect(readFileSync(path.join(out, `${item.document.name}.yaml`), 'utf8')).toBe(item.yaml);
  });

  it.each([
    [
      ['generate', 'no-such-suite'],
      'membench: unknown suite "no-such-suite": built-in suites are generated; or give a path to a generator spec (.yaml/.json)',
    ],
    [['generate', 'missing.yaml'], 'missing.yaml:1:1: (document): cannot read: no such file'],
    [['generate', 'generated', '--seed', '-1'], 'membench: --seed -1: expected a whole number from 0 to 4294967295'],
    [['generate', 'generated', '--seed', 'abc'], 'membench: --seed abc: expected a whole number from 0 to 4294967295'],
    [
      ['generate', 'generated', '--seed', '4294967296'],
      'membench: --seed 4294967296: expected a whole number from 0 to 4294967295',
    ],
    [
      ['generate', 'fixtures/generator/broken/seed-too-large.yaml'],
      'fixtures/generator/broken/seed-too-large.yaml:3:7: seed: expected a whole number from 0 to 4294967295',
    ],
    [
      ['generate', 'fixtures/generator/broken/duplicate-distances.yaml'],
      'fixtures/generator/broken/duplicate-distances.yaml:3:12: distances: a distance is listed twice',
    ],
  ])('bad input %j: exit 2, a clear message, nothing written', async (args, message) => {
    const out = path.join(await tempDir(), 'out');
    const result = await membenchInProcess([...args, '-o', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toMatch(/\n\s+at /u);
    expect(existsSync(out)).toBe(false);
  });

  it('an empty --out is refused (exit 2) instead of writing into the working dir', async () => {
    const cwd = await tempDir();
    const result = await membench(['generate', path.resolve('scenarios/suites/generated.yaml'), '-o', ''], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'membench: --out is empty (an unset variable?): give the output dir, or leave --out out for the default\n',
    );
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('an invalid spec: every problem located, exit 2, nothing written', async () => {
    const dir = await tempDir();
    const spec = path.join(dir, 'bad.yaml');
    await writeFile(spec, 'exchanges: 50\nfacts:\n  facts: 3\n');
    const out = path.join(dir, 'out');
    const result = await membenchInProcess(['generate', spec, '-o', out]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `membench: ${spec}: invalid generator spec (1 problem)\n${spec}:3:3: facts.facts: unknown key "facts" (did you mean fact?) (known: fact, distractor, update, multi-hop, temporal, abstention)\n`,
    );
    expect(existsSync(out)).toBe(false);
  });

  it('list scenarios and run --help name the built-in suite', async () => {
    const list = await membenchInProcess(['list', 'scenarios']);
    expect(list.stdout).toMatch(
      /^generated +suite +generated in memory: generated-en \(280 exchanges, \d+ probes\), generated-zh \(280 exchanges, \d+ probes\)/mu,
    );
    // --help as docs/cli.md holds it: test/docs/docs.test.ts holds that block to what the built CLI prints.
    const help = commandHelp('run');
    expect(help).toMatch(/a suite \(generated\) expands into its\s+generated scenarios/u);
    expect(help).toContain('membench run -c generated');
  });
});
