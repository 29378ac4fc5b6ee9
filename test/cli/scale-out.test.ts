import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { readResults } from '../../harness/results/read.js';
import { mergeShards } from '../../reports/merge.js';
import { runBenchmark } from '../../harness/run/runner.js';
import type { ShardedRunHeader } from '../../harness/results/shard.js';
import { membench, ROOT } from './helpers.js';
import { withoutTiming, type RunResult } from '../../harness/results/schema.js';

const tempDir = () => mkdtemp(path.join(os.tmpdir(), 'membench-scale-'));
const results = (dir: string): RunResult => JSON.parse(readFileSync(path.join(dir, 'results.json'), 'utf8')) as RunResult;
const cellFiles = (dir: string): string[] => (existsSync(path.join(dir, 'cells')) ? readdirSync(path.join(dir, 'cells')).filter((name) => /^\d+\.json$/u.test(name)) : []);

/** 15 quick cells: enough that a run can be stopped half-way. */
const MATRIX = ['-c', 'recipes-en', '-c', 'recipes-zh', '-c', 'preference-corrections', '-s', 'buffer', '-s', 'window', '-p', 'window.k=1,2,4,8'];
const MATRIX_OPTIONS = { scenarios: ['recipes-en', 'recipes-zh', 'preference-corrections'], strategies: ['buffer', 'window'], params: ['window.k=1,2,4,8'] };

/** Starts the CLI and stops it with `signal` once `cells` cell files exist; resolves with its exit. */
async function stopHalfWay(out: string, args: readonly string[], signal: NodeJS.Signals, cells: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/membench.js'), 'run', ...args, '-o', out], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, exitSignal) => resolve({ code, signal: exitSignal })));
  let done = false;
  void exited.then(() => (done = true));
  while (!done && cellFiles(out).length < cells) await sleep(20);
  child.kill(signal);
  return { ...(await exited), stderr };
}

describe('--shard and membench merge', () => {
  it('merges two shards into the unsharded run (apart from timing) and refuses inputs that do not belong together', { timeout: 120_000 }, async () => {
    const dir = await tempDir();
    const args = ['-c', 'recipes-en', '-c', 'preference-corrections', '-s', 'buffer', '-s', 'window', '-p', 'window.k=2,4', '-q', '-w', '1'];
    const [one, two, whole] = await Promise.all([
      membench(['run', ...args, '--shard', '1/2', '-o', path.join(dir, 's1')]),
      membench(['run', ...args, '--shard', '2/2', '-o', path.join(dir, 's2')]),
      membench(['run', ...args, '-o', path.join(dir, 'whole')]),
    ]);
    expect([one.code, two.code, whole.code]).toEqual([0, 0, 0]);
    expect(results(path.join(dir, 's1')).cells.map((cell) => cell.id)).toEqual(['recipes-en/buffer', 'recipes-en/window(k=4)', 'preference-corrections/window(k=2)']);
    expect((results(path.join(dir, 's2')).header as { shard?: unknown }).shard).toMatchObject({ index: 2, count: 2, planned: 6 });

    const merged = await membench(['merge', path.join(dir, 's2'), path.join(dir, 's1'), '-o', path.join(dir, 'merged')]);
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
    const sameIndex = { ...s2!, file: 'other.json', result: { ...s2!.result, header: { ...s2!.result.header, shard: { ...(s1!.result.header as ShardedRunHeader).shard! } } } };
    expect(() => mergeShards([s1!, sameIndex])).toThrow(/are both shard 1\/2/u);
  });
});

describe('--resume', () => {
  it('finishes a run SIGKILLed half-way with the results of an uninterrupted run', { timeout: 120_000 }, async () => {
    const out = path.join(await tempDir(), 'run');
    const killed = await stopHalfWay(out, [...MATRIX, '-w', '2'], 'SIGKILL', 3);
    expect(killed.signal).toBe('SIGKILL');
    const finished = cellFiles(out).length;
    expect(finished).toBeGreaterThanOrEqual(3);
    expect(finished).toBeLessThan(15);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);

    const fresh = await membench(['run', ...MATRIX, '-o', out, '-q']);
    expect(fresh.code).toBe(2);
    expect(fresh.stderr).toContain(`holds an interrupted run (plan.json, ${finished} finished cells): resume it with membench run --resume ${out}`);
    const otherMatrix = await membench(['run', '--resume', out, '-s', 'buffer', '-q']);
    expect(otherMatrix.code).toBe(2);
    expect(otherMatrix.stderr).toContain('the run was planned with strategies ["buffer","window"], not ["buffer"]');

    const resumed = await membench(['run', '--resume', out]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`membench: running ${15 - finished} cells (${finished} of 15 finished earlier)`);
    expect(readdirSync(out)).not.toContain('plan.json');
    expect(readdirSync(out)).not.toContain('cells');
    const uninterrupted = await runBenchmark(MATRIX_OPTIONS);
    expect(withoutTiming(results(out))).toEqual(withoutTiming(uninterrupted));

    const again = await membench(['run', '--resume', out, '-q']);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('the run is complete (results.json, no plan.json): nothing to resume');
  });

  it('stops on Ctrl-C with exit 130, keeping the finished cells for --resume', { timeout: 60_000 }, async () => {
    const out = path.join(await tempDir(), 'run');
    const stopped = await stopHalfWay(out, [...MATRIX, '-w', '1'], 'SIGINT', 1);
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain(`interrupted: resume with membench run --resume ${out}`);
    expect(cellFiles(out).length).toBeGreaterThanOrEqual(1);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);
    expect(existsSync(path.join(out, 'results.json'))).toBe(false);
  });
});
