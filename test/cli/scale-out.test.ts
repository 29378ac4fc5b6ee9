import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readResults } from '../../harness/results/read.js';
import { mergeShards } from '../../reports/merge.js';
import { runBenchmark } from '../../harness/run/runner.js';
import type { ShardedRunHeader } from '../../harness/results/shard.js';
import { membench, ROOT, startMembench, until } from './helpers.js';
import type { RunResult } from '../../harness/results/schema.js';
import { withoutTiming } from '../helpers/same-seed.js';
import { tempDir } from '../helpers/temp-dir.js';

const scaleDir = () => tempDir('membench-scale-');
const results = (dir: string): RunResult =>
  JSON.parse(readFileSync(path.join(dir, 'results.json'), 'utf8')) as RunResult;
const cellFiles = (dir: string): string[] =>
  existsSync(path.join(dir, 'cells'))
    ? readdirSync(path.join(dir, 'cells')).filter((name) => /^\d+\.json$/u.test(name))
    : [];

/**
 * 18 cells: 15 quick ones and one `gated` cell per scenario, which opens only once the test creates
 * the gate file, so a run stopped half-way cannot have finished before the signal reaches it.
 */
const GATED = path.join(ROOT, 'fixtures/strategies/gated.ts');
const MATRIX = [
  '-c',
  'recipes-en',
  '-c',
  'recipes-zh',
  '-c',
  'preference-corrections',
  '-s',
  'buffer',
  '-s',
  'window',
  '-s',
  GATED,
  '-p',
  'window.k=1,2,4,8',
];
const MATRIX_OPTIONS = {
  scenarios: ['recipes-en', 'recipes-zh', 'preference-corrections'],
  strategies: ['buffer', 'window', GATED],
  params: ['window.k=1,2,4,8'],
};

/** Starts the CLI behind a closed gate and stops it with `signal` once `cells` cell files exist; resolves with its exit. */
async function stopHalfWay(
  out: string,
  gate: string,
  args: readonly string[],
  signal: NodeJS.Signals,
  cells: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const run = startMembench(['run', ...args, '-o', out], { env: { MEMBENCH_TEST_GATE: gate } });
  await until(() => cellFiles(out).length >= cells, run);
  run.child.kill(signal);
  return { ...(await run.exited), stderr: run.stderr() };
}

describe('--shard and membench merge', () => {
  it('merges two shards into the unsharded run (apart from timing) and refuses inputs that do not belong together', {
    timeout: 120_000,
  }, async () => {
    const dir = await scaleDir();
    const args = [
      '-c',
      'recipes-en',
      '-c',
      'preference-corrections',
      '-s',
      'buffer',
      '-s',
      'window',
      '-p',
      'window.k=2,4',
      '-q',
      '-w',
      '1',
    ];
    const [one, two, whole] = await Promise.all([
      membench(['run', ...args, '--shard', '1/2', '-o', path.join(dir, 's1')]),
      membench(['run', ...args, '--shard', '2/2', '-o', path.join(dir, 's2')]),
      membench(['run', ...args, '-o', path.join(dir, 'whole')]),
    ]);
    expect([one.code, two.code, whole.code]).toEqual([0, 0, 0]);
    expect(results(path.join(dir, 's1')).cells.map((cell) => cell.id)).toEqual([
      'recipes-en/buffer',
      'recipes-en/window(k=4)',
      'preference-corrections/window(k=2)',
    ]);
    expect((results(path.join(dir, 's2')).header as { shard?: unknown }).shard).toMatchObject({
      index: 2,
      count: 2,
      planned: 6,
    });

    const merged = await membench([
      'merge',
      path.join(dir, 's2'),
      path.join(dir, 's1'),
      '-o',
      path.join(dir, 'merged'),
    ]);
    expect(merged.code).toBe(0);
    expect(merged.stdout).toContain('merged 2 shards (6 cells)');
    expect(existsSync(path.join(dir, 'merged', 'report.html'))).toBe(true);
    expect(withoutTiming(results(path.join(dir, 'merged')))).toEqual(withoutTiming(results(path.join(dir, 'whole'))));

    const twice = await membench(['merge', path.join(dir, 's1'), path.join(dir, 's1'), '-o', path.join(dir, 'never')]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/s1\/results\.json is given twice/u);
    const missing = await membench(['merge', path.join(dir, 's1'), '-o', path.join(dir, 'never')]);
    expect(missing.stderr).toContain('merge: shard 2/2 missing: a merged run needs every shard');
    expect(existsSync(path.join(dir, 'never'))).toBe(false);

    const [s1, s2, all] = await Promise.all(['s1', 's2', 'whole'].map((name) => readResults(path.join(dir, name))));
    expect(() => mergeShards([s1!, all!])).toThrow(/is a whole run \(no --shard\), so it overlaps every other input/u);
    const reseeded = { ...s2!, result: { ...s2!.result, header: { ...s2!.result.header, seed: 3 } } };
    expect(() => mergeShards([s1!, reseeded])).toThrow(/differ in seed \(3 vs 42\): they are not shards of one run/u);
    const sameIndex = {
      ...s2!,
      file: 'other.json',
      result: {
        ...s2!.result,
        header: { ...s2!.result.header, shard: { ...(s1!.result.header as ShardedRunHeader).shard! } },
      },
    };
    expect(() => mergeShards([s1!, sameIndex])).toThrow(/are both shard 1\/2/u);
  });
});

describe('--resume', () => {
  it('finishes a run SIGKILLed half-way with the results of an uninterrupted run', { timeout: 120_000 }, async () => {
    const dir = await scaleDir();
    const out = path.join(dir, 'run');
    const gate = path.join(dir, 'gate');
    const killed = await stopHalfWay(out, gate, [...MATRIX, '-w', '2'], 'SIGKILL', 3);
    expect(killed.signal).toBe('SIGKILL');
    const finished = cellFiles(out).length;
    expect(finished).toBeGreaterThanOrEqual(3);
    expect(finished).toBeLessThanOrEqual(15);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);

    const fresh = await membench(['run', ...MATRIX, '-o', out, '-q']);
    expect(fresh.code).toBe(2);
    expect(fresh.stderr).toContain(
      `holds an interrupted run (plan.json, ${finished} finished cells): resume it with membench run --resume ${out}`,
    );
    const otherMatrix = await membench(['run', '--resume', out, '-s', 'buffer', '-q']);
    expect(otherMatrix.code).toBe(2);
    expect(otherMatrix.stderr).toContain(
      `the run was planned with strategies ["buffer","window",${JSON.stringify(GATED)}], not ["buffer"]`,
    );

    writeFileSync(gate, 'open');
    const resumed = await membench(['run', '--resume', out], { env: { MEMBENCH_TEST_GATE: gate } });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`membench: running ${18 - finished} cells (${finished} of 18 finished earlier)`);
    expect(readdirSync(out)).not.toContain('plan.json');
    expect(readdirSync(out)).not.toContain('cells');
    const uninterrupted = await runBenchmark(MATRIX_OPTIONS);
    expect(withoutTiming(results(out))).toEqual(withoutTiming(uninterrupted));

    const again = await membench(['run', '--resume', out, '-q']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('the run is complete (results.json, no plan.json): nothing to resume');
  });

  it('refuses to resume after the scenario file was edited, or under another membench version (exit 2)', {
    timeout: 60_000,
  }, async () => {
    const dir = await scaleDir();
    const out = path.join(dir, 'run');
    const gate = path.join(dir, 'gate');
    const scenario = path.join(dir, 'pantry.yaml');
    const original =
      'name: pantry\nsteps:\n  - user: The rice is on the top shelf.\n    assistant: Noted.\n  - probe: Where is the rice?\n    expect: ["top shelf"]\n';
    writeFileSync(scenario, original);
    const stopped = await stopHalfWay(
      out,
      gate,
      ['-c', scenario, '-s', 'buffer', '-s', GATED, '-w', '1'],
      'SIGTERM',
      1,
    );
    expect(stopped.code).toBe(130);

    writeFileSync(scenario, original.replace('top shelf', 'bottom shelf'));
    const edited = await membench(['run', '--resume', out, '-q']);
    expect(edited.code).toBe(2);
    expect(edited.stderr).toContain(
      `--resume ${out}: the matrix is not the one the run began with (a scenario file, dataset or strategy option changed?): start a fresh run`,
    );
    writeFileSync(scenario, original);

    const planFile = path.join(out, 'plan.json');
    const plan = readFileSync(planFile, 'utf8');
    const older = JSON.parse(plan) as { membench: { version: string; commit: string | null } };
    writeFileSync(planFile, JSON.stringify({ ...older, membench: { ...older.membench, version: '0.0.1' } }));
    const otherVersion = await membench(['run', '--resume', out, '-q']);
    expect(otherVersion.code).toBe(2);
    expect(otherVersion.stderr).toMatch(
      /the run began with membench 0\.0\.1( \([0-9a-f]{12}\))?, this is \d+\.\d+\.\d+.*: its cells would mix two versions; start a fresh run/u,
    );
    writeFileSync(planFile, plan);

    // Unedited, the same run resumes.
    writeFileSync(gate, 'open');
    const resumed = await membench(['run', '--resume', out, '-q'], { env: { MEMBENCH_TEST_GATE: gate } });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(results(out).cells.map((cell) => [cell.id, cell.status])).toEqual([
      ['pantry/buffer', 'ok'],
      ['pantry/gated', 'ok'],
    ]);
  });

  it('reruns only the cells in error: a cell that timed out runs again, the finished one is kept as it was', {
    timeout: 120_000,
  }, async () => {
    const dir = await scaleDir();
    const out = path.join(dir, 'run');
    const gate = path.join(dir, 'gate');
    // The gate stays shut: the gated cell times out in open() (a cell in error), buffer's finishes.
    const args = ['-c', 'recipes-en', '-s', 'buffer', '-s', GATED, '-w', '1', '--cell-timeout', '1'];
    const failed = await membench(['run', ...args, '-o', out, '-q'], { env: { MEMBENCH_TEST_GATE: gate } });
    expect(failed.code).toBe(1);
    expect(results(out).cells.map((cell) => [cell.id, cell.status])).toEqual([
      ['recipes-en/buffer', 'ok'],
      ['recipes-en/gated', 'error'],
    ]);
    expect(failed.stderr).toContain(`membench: 1 cell in error: rerun only it with membench run --resume ${out}`);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);
    const kept = results(out).cells[0];

    writeFileSync(gate, 'open');
    const resumed = await membench(['run', '--resume', out], { env: { MEMBENCH_TEST_GATE: gate } });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`--resume ${out}: 1 cell in error run again: recipes-en/gated`);
    expect(resumed.stderr).toContain('membench: running 1 cells (1 of 2 finished earlier)');
    expect(results(out).cells.map((cell) => [cell.id, cell.status])).toEqual([
      ['recipes-en/buffer', 'ok'],
      ['recipes-en/gated', 'ok'],
    ]);
    // Kept, not run again: its timings are the first run's to the millisecond.
    expect(results(out).cells[0]).toEqual(kept);
    expect(readdirSync(out)).not.toContain('plan.json');
  });

  it('stops on Ctrl-C with exit 130, keeping the finished cells for --resume', { timeout: 60_000 }, async () => {
    const dir = await scaleDir();
    const out = path.join(dir, 'run');
    const stopped = await stopHalfWay(out, path.join(dir, 'gate'), [...MATRIX, '-w', '1'], 'SIGINT', 1);
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain(`interrupted: resume with membench run --resume ${out}`);
    expect(cellFiles(out).length).toBeGreaterThanOrEqual(1);
    expect(cellFiles(out).length).toBeLessThanOrEqual(5);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);
    expect(existsSync(path.join(out, 'results.json'))).toBe(false);
  });
});
