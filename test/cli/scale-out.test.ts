/**
 * Scaling a run out and back in on the built CLI: --shard and membench merge, --resume of a run
 * stopped half-way (SIGKILL, Ctrl-C) or with cells in error. The matrices are small scenario files
 * (test/helpers/small-scenario.ts): each path needs a few cells, not long conversations; the
 * uninterrupted run they are compared with runs in this process, from the build.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readResults } from '../../harness/results/read.js';
import { mergeShards } from '../../reports/merge.js';
import type * as Runner from '../../harness/run/runner.js';
import type { ShardedRunHeader } from '../../harness/results/shard.js';
import { membench, ROOT, startMembench, until } from './helpers.js';
import type { RunResult } from '../../harness/results/schema.js';
import { builtModule } from '../helpers/built.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import { withoutTiming } from '../helpers/same-seed.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';
import { tempDir } from '../helpers/temp-dir.js';

const { runBenchmark } = await builtModule<typeof Runner>('harness/run/runner.js');

const scaleDir = () => tempDir('membench-scale-');
const results = (dir: string): RunResult =>
  JSON.parse(readFileSync(path.join(dir, 'results.json'), 'utf8')) as RunResult;
const cellFiles = (dir: string): string[] =>
  existsSync(path.join(dir, 'cells'))
    ? readdirSync(path.join(dir, 'cells')).filter((name) => /^\d+\.json$/u.test(name))
    : [];

/** Three small scenarios, `a`, `b` and `c`: a cell of one replays in milliseconds. */
let scenarios: { dir: string; a: string; b: string; c: string };
beforeAll(async () => {
  const dir = await tempDir('membench-scale-scenarios-');
  scenarios = {
    dir,
    a: writeSmallScenario(dir, 'a'),
    b: writeSmallScenario(dir, 'b', 'middle shelf'),
    c: writeSmallScenario(dir, 'c', 'bottom shelf'),
  };
});

/**
 * 9 cells: buffer, window(k=2) and a `gated` cell per scenario, which opens only once the test
 * creates the gate file, so a run stopped half-way cannot have finished before the signal reaches
 * it. Cells run costliest scenario first, each scenario's in plan order: a worker that reaches a
 * gated cell waits there, so under -w 2 the cells of the third scenario never start.
 */
const GATED = path.join(ROOT, 'fixtures/strategies/gated.mjs');
const STRATEGIES = ['buffer', 'window', GATED];
const matrix = (): string[] => [
  ...[scenarios.a, scenarios.b, scenarios.c].flatMap((file) => ['-c', file]),
  ...STRATEGIES.flatMap((strategy) => ['-s', strategy]),
  '-p',
  'window.k=2',
];

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
    const args = ['-c', scenarios.a, '-c', scenarios.b, '-s', 'buffer', '-s', 'window', '-p', 'window.k=2,4'];
    const [one, two, kept, whole] = await Promise.all([
      membench(['run', ...args, '-q', '-w', '1', '--shard', '1/2', '-o', path.join(dir, 's1')]),
      membench(['run', ...args, '-q', '-w', '1', '--shard', '2/2', '-o', path.join(dir, 's2')]),
      membench(['run', ...args, '-q', '-w', '1', '--shard', '2/2', '--keep-rankings', '-o', path.join(dir, 's2k')]),
      runBenchmark({
        scenarios: [scenarios.a, scenarios.b],
        strategies: ['buffer', 'window'],
        params: ['window.k=2,4'],
      }),
    ]);
    expect([one.code, two.code, kept.code]).toEqual([0, 0, 0]);
    expect(results(path.join(dir, 's2k')).header).toHaveProperty('keepRankings', true);
    expect(results(path.join(dir, 's2')).header).not.toHaveProperty('keepRankings');
    expect(results(path.join(dir, 's1')).cells.map((cell) => cell.id)).toEqual([
      'a/buffer',
      'a/window(k=4)',
      'b/window(k=2)',
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
    expect(withoutTiming(results(path.join(dir, 'merged')))).toEqual(withoutTiming(whole));

    const [twice, missing, ontoShard, rankings] = await Promise.all([
      membench(['merge', path.join(dir, 's1'), path.join(dir, 's1'), '-o', path.join(dir, 'never')]),
      membench(['merge', path.join(dir, 's1'), '-o', path.join(dir, 'never')]),
      membench(['merge', path.join(dir, 's1'), path.join(dir, 's2'), '-o', `${path.join(dir, 's2')}/`, '--overwrite']),
      membench(['merge', path.join(dir, 's1'), path.join(dir, 's2k'), '-o', path.join(dir, 'never')]),
    ]);
    // Whole rankings in one shard, the top 50 in the other: the merged `retrieved` would mean two things.
    expect(rankings.code).toBe(2);
    expect(rankings.stderr).toMatch(
      /merge: .*s2k\/results\.json and .*s1\/results\.json differ in --keep-rankings \(whole rankings kept vs the top of each ranking kept\): run every shard with the same --keep-rankings/u,
    );
    // The merged run written over shard 2 would leave no shard 2 to merge again.
    expect(ontoShard.code).toBe(2);
    expect(ontoShard.stderr).toMatch(/--out .*s2\/: it holds .*s2\/results\.json, one of the shards being merged/u);
    expect(results(path.join(dir, 's2')).header).toHaveProperty('shard.index', 2);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/s1\/results\.json is given twice/u);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('merge: shard 2/2 missing: a merged run needs every shard');
    expect(existsSync(path.join(dir, 'never'))).toBe(false);

    writeFileSync(path.join(dir, 'whole.json'), JSON.stringify(whole));
    const [s1, s2, all] = await Promise.all(
      [path.join(dir, 's1'), path.join(dir, 's2'), path.join(dir, 'whole.json')].map((file) => readResults(file)),
    );
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
    // Shard 1 judged, shard 2 not: the merged judge figures would pool half the cells as the whole run's.
    const judge = { judge: 'offline', label: 'offline judge', prompts: 'membench rules', judged: 6, unparsed: 0 };
    const judged = {
      ...s1!,
      result: {
        ...s1!.result,
        judges: [{ ...judge, requests: 0, cached: 0, tokens: 0, judgedAt: whole.header.startedAt }],
      },
    };
    expect(() => mergeShards([judged, s2!])).toThrow(
      /s2\/results\.json and .*s1\/results\.json differ in judges \(\[\] vs \["offline \(membench rules\)"\]\): judge every shard alike/u,
    );
    expect(mergeShards([judged, { ...s2!, result: { ...s2!.result, judges: judged.result.judges } }]).judges).toEqual([
      expect.objectContaining({ judge: 'offline', judged: 12 }),
    ]);
  });
});

describe('an empty shard (a CI matrix with more shards than cells)', () => {
  it('warns and writes results of no cell that merge takes; a --recall-threshold fails on it, exit 1', {
    timeout: 120_000,
  }, async () => {
    const dir = await scaleDir();
    const args = ['-c', scenarios.a, '-s', 'buffer', '-q', '-w', '1'];
    const [one, empty, gated] = await Promise.all([
      membench(['run', ...args, '--shard', '1/3', '-o', path.join(dir, 's1')]),
      membench(['run', ...args, '--shard', '3/3', '-o', path.join(dir, 's3')]),
      membench(['run', ...args, '--shard', '2/3', '--recall-threshold', '0.5', '-o', path.join(dir, 's2')]),
    ]);
    const words = "holds none of the plan's 1 cell (only shard 1 holds one)";
    expect([one.code, empty.code], empty.stderr).toEqual([0, 0]);
    expect(empty.stderr).toContain(`warning: --shard 3/3 ${words}: nothing runs`);
    expect(results(path.join(dir, 's3')).cells).toEqual([]);
    expect(gated.code, gated.stderr).toBe(1);
    expect(gated.stderr).toContain(
      `FAILED recall threshold: context recall: 0 cells run: shard 2/3 ${words}; the threshold 0.50 cannot pass on an empty measurement`,
    );
    expect(readFileSync(path.join(dir, 's2', 'junit.xml'), 'utf8')).toContain('tests="1" failures="1"');
    // The shards still merge into the whole run; reporting an empty shard alone is refused, saying why.
    const merged = await membench([
      'merge',
      ...['s1', 's2', 's3'].map((name) => path.join(dir, name)),
      '-o',
      path.join(dir, 'm'),
    ]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stdout).toContain('merged 3 shards (1 cells)');
    const report = await membenchInProcess(['report', path.join(dir, 's3')]);
    expect(report.code).toBe(2);
    expect(report.stderr).toContain(`has no cells: nothing to report (shard 3/3 ${words}): merge the shards`);
  });
});

describe('--resume of a run SIGKILLed half-way', () => {
  // One run killed under -w 2 once 3 cells are finished; the first test only reads it (and puts
  // back what it edits), the second resumes it.
  let out: string;
  let gate: string;
  let finished: number;
  beforeAll(async () => {
    const dir = await scaleDir();
    out = path.join(dir, 'run');
    gate = path.join(dir, 'gate');
    const killed = await stopHalfWay(out, gate, [...matrix(), '-w', '2'], 'SIGKILL', 3);
    expect(killed.signal).toBe('SIGKILL');
    finished = cellFiles(out).length;
  }, 120_000);

  it('refuses a fresh run on it, another matrix, an edited scenario file and another membench version (exit 2)', {
    timeout: 60_000,
  }, async () => {
    // At least 3 cells finished; the gated ones and the third scenario's had not.
    expect(finished).toBeGreaterThanOrEqual(3);
    expect(finished).toBeLessThanOrEqual(4);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);
    const planFile = path.join(out, 'plan.json');
    const plan = readFileSync(planFile, 'utf8');
    const older = JSON.parse(plan) as { membench: { version: string; commit: string | null } };
    writeSmallScenario(scenarios.dir, 'c', 'top shelf');
    try {
      // One after another: each takes the dir's lock before it refuses.
      const fresh = await membench(['run', ...matrix(), '-o', out, '-q']);
      const otherMatrix = await membench(['run', '--resume', out, '-s', 'buffer', '-q']);
      const edited = await membench(['run', '--resume', out, '-q']);
      expect(fresh.code).toBe(2);
      expect(fresh.stderr).toContain(
        `holds an interrupted run (plan.json, ${finished} finished cells): resume it with membench run --resume ${out}`,
      );
      expect(otherMatrix.code).toBe(2);
      expect(otherMatrix.stderr).toContain(
        `the run was planned with strategies ["buffer","window",${JSON.stringify(GATED)}], not ["buffer"]`,
      );
      expect(edited.code).toBe(2);
      expect(edited.stderr).toContain(
        `--resume ${out}: the matrix is not the one the run began with (a scenario file, dataset or strategy option changed?): start a fresh run`,
      );
    } finally {
      writeSmallScenario(scenarios.dir, 'c', 'bottom shelf');
    }
    writeFileSync(planFile, JSON.stringify({ ...older, membench: { ...older.membench, version: '0.0.1' } }));
    try {
      const otherVersion = await membench(['run', '--resume', out, '-q']);
      expect(otherVersion.code).toBe(2);
      expect(otherVersion.stderr).toMatch(
        /the run began with membench 0\.0\.1( \([0-9a-f]{12}\))?, this is \d+\.\d+\.\d+.*: its cells would mix two versions; start a fresh run/u,
      );
    } finally {
      writeFileSync(planFile, plan);
    }
    expect(cellFiles(out)).toHaveLength(finished);
  });

  it('finishes it with the results of an uninterrupted run', { timeout: 120_000 }, async () => {
    writeFileSync(gate, 'open');
    const [resumed, uninterrupted] = await Promise.all([
      membench(['run', '--resume', out, '-w', '1'], { env: { MEMBENCH_TEST_GATE: gate } }),
      runBenchmark({
        scenarios: [scenarios.a, scenarios.b, scenarios.c],
        strategies: STRATEGIES,
        params: ['window.k=2'],
      }),
    ]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`membench: running ${9 - finished} cells (${finished} of 9 finished earlier)`);
    expect(readdirSync(out)).not.toContain('plan.json');
    expect(readdirSync(out)).not.toContain('cells');
    expect(withoutTiming(results(out))).toEqual(withoutTiming(uninterrupted));

    const again = await membench(['run', '--resume', out, '-q']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('the run is complete (results.json, no plan.json): nothing to resume');
  });
});

describe('--resume', () => {
  it('reruns only the cells in error: a cell that timed out runs again, the finished one is kept as it was', {
    timeout: 120_000,
  }, async () => {
    const dir = await scaleDir();
    const out = path.join(dir, 'run');
    const gate = path.join(dir, 'gate');
    // The gate stays shut: the gated cell times out in open() (a cell in error), buffer's finishes.
    const args = ['-c', scenarios.a, '-s', 'buffer', '-s', GATED, '-w', '1', '--cell-timeout', '1'];
    const failed = await membench(['run', ...args, '-o', out, '-q'], { env: { MEMBENCH_TEST_GATE: gate } });
    expect(failed.code).toBe(1);
    expect(results(out).cells.map((cell) => [cell.id, cell.status])).toEqual([
      ['a/buffer', 'ok'],
      ['a/gated', 'error'],
    ]);
    expect(failed.stderr).toContain(`membench: 1 cell in error: rerun only it with membench run --resume ${out}`);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);
    const kept = results(out).cells[0];

    writeFileSync(gate, 'open');
    const resumed = await membench(['run', '--resume', out, '-w', '1'], { env: { MEMBENCH_TEST_GATE: gate } });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`--resume ${out}: 1 cell in error run again: a/gated`);
    expect(resumed.stderr).toContain('membench: running 1 cell (1 of 2 finished earlier)');
    expect(results(out).cells.map((cell) => [cell.id, cell.status])).toEqual([
      ['a/buffer', 'ok'],
      ['a/gated', 'ok'],
    ]);
    // Kept, not run again: its timings are the first run's to the millisecond.
    expect(results(out).cells[0]).toEqual(kept);
    expect(readdirSync(out)).not.toContain('plan.json');
  });

  it('stops on Ctrl-C with exit 130, keeping the finished cells for --resume', { timeout: 60_000 }, async () => {
    const dir = await scaleDir();
    const out = path.join(dir, 'run');
    const stopped = await stopHalfWay(out, path.join(dir, 'gate'), [...matrix(), '-w', '1'], 'SIGINT', 1);
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain(`interrupted: resume with membench run --resume ${out}`);
    // Under -w 1 the first scenario's gated cell holds the worker: at most the two before it finished.
    expect(cellFiles(out).length).toBeGreaterThanOrEqual(1);
    expect(cellFiles(out).length).toBeLessThanOrEqual(2);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);
    expect(existsSync(path.join(out, 'results.json'))).toBe(false);
  });
});
