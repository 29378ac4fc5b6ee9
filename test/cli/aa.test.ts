/**
 * The gate checked as a CI maintainer would: the same code run twice must pass `compare` (an A/A
 * test), and regressions planted between two runs under the same setting name must fail it, named.
 * The plants come from fixtures/strategies/planted.ts, steered by environment variables so its
 * cells keep their ids: a window keeping one exchange where base kept two, a save five times slower.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { membench } from './helpers.js';

const PLANTED = './fixtures/strategies/planted.ts';
/** A crash scenario, a concurrent one and a scripted one; two built-ins and the planted window. */
const MATRIX = [
  ...['buffer', 'window', PLANTED].flatMap((strategy) => ['-s', strategy]),
  ...['remember-then-crash', 'concurrent-edits', 'recipes-en'].flatMap((scenario) => ['-c', scenario]),
  '--price-durability',
  'none',
  '-q',
];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'membench-aa-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Runs the CLI into `dir/name` and returns that dir (its exit code is the run's verdict, not this test's). */
async function runInto(name: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const out = path.join(dir, name);
  const result = await membench(['run', ...args, '-o', out], { env });
  expect(existsSync(path.join(out, 'results.json')), result.stderr).toBe(true);
  return out;
}

describe('the compare gate, A/A and planted regressions', () => {
  it('passes the same matrix run twice (crash, concurrent and scripted cells)', { timeout: 900_000 }, async () => {
    const first = await runInto('a', MATRIX);
    const second = await runInto('b', MATRIX);
    const result = await membench(['compare', first, second]);
    expect(result.stdout).toMatch(/OK: no regression \(9 cells compared, 0 missing, 0 new, 0 in error\)/u);
    expect(result.code).toBe(0);
    // Latency was judged (one machine), not skipped.
    expect(result.stdout).not.toContain('latency not compared');
  });

  it('fails a window keeping one exchange where base kept two, under the same setting name', {
    timeout: 600_000,
  }, async () => {
    const base = await runInto('k2', ['-s', PLANTED, '-c', 'recipes-en', '-q']);
    const head = await runInto('k1', ['-s', PLANTED, '-c', 'recipes-en', '-q'], { MEMBENCH_PLANTED_K: '1' });
    const result = await membench(['compare', base, head]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/recipes-en\/planted +│ evidence recall +│ 0\.14 \(n=7\) +│ 0\.00 \(n=7\)/u);
  });

  it('fails a save made five times slower, naming the cell and showing both runs and the interval', {
    timeout: 600_000,
  }, async () => {
    // Stretched to 60 user turns: enough saves for an interval that a shared machine's noise does not blur.
    const args = ['-s', PLANTED, '-c', 'recipes-en', '--stretch', '60', '-q'];
    const base = await runInto('fast', args);
    const head = await runInto('slow', args, { MEMBENCH_PLANTED_SAVE_SLOWDOWN: '5' });
    const result = await membench(['compare', base, head]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /recipes-en~60\/planted +│ save time +│ p50 \S+ ms, p95 \S+ ms +│ p50 \S+ ms, p95 \S+ ms +│ ×\S+ \[×\S+, ×\S+\]/u,
    );
    expect(result.stdout).toMatch(/REGRESSION: 1 regressed metric\(s\) in 1 cell\(s\)/u);
  });
});
