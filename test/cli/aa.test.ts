/**
 * The gate checked as a CI maintainer would: the same code run twice must pass `compare` (an A/A
 * test), and regressions planted between two runs under the same setting name must fail it, named.
 * The plants come from fixtures/strategies/planted.mjs, steered by environment variables so its
 * cells keep their ids: a window keeping one exchange where base kept two, a save ten times slower.
 *
 * The A/A matrix is the smallest whose latency the gate judges: three scripted cells with durable
 * saves (each fsynced), enough turns a side for an interval. The two runs of a pair start together,
 * but beside a full test suite their fsync-bound saves still meet different moments of the shared
 * disk: two runs of the same window differed ×5.54 [×2.66, ×8.51] in save p50 (1.95 → 11.65 ms), which
 * the default ×2 limit flags. So the A/A pair is judged at a ×8 limit (latency judged, not skipped;
 * `membench bench --only aa` checks the default limit on two runs one after another, as CI runs
 * them), the k=1 plant's pair without latency (it is a recall plant), and the slow save at ×10.
 * That a figure regresses only when its whole interval clears the limit (`lo`, not `hi`, in
 * reports/compare-latency.ts) is held by test/reports/compare.test.ts on samples made for it.
 * Crash and concurrent cells add no judged latency (too few turns; interleaved cells are not
 * gated): their figures are pinned run to run by run.test.ts's same-seed test and, for interleaving,
 * by test/reports/compare.test.ts. The runs are CLI processes; the comparisons, which start none, run
 * compare's built command module in this process (test/helpers/cli-in-process.ts).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { membench } from './helpers.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';

const PLANTED = './fixtures/strategies/planted.mjs';
/** Two built-ins and the planted window on a scripted scenario: every cell's saves judged. */
const MATRIX = [...['buffer', 'window', PLANTED].flatMap((strategy) => ['-s', strategy]), '-c', 'recipes-en', '-q'];
/** The planted window alone, stretched to 60 user turns: enough saves for an interval that a shared machine's noise does not blur. */
const STRETCHED = ['-s', PLANTED, '-c', 'recipes-en', '--stretch', '60', '-q'];

let dir: string;
/** The matrix run twice, at the same time (the same machine's moment for both). */
let runs: { a: string; b: string };
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'membench-aa-'));
  const [a, b] = await Promise.all([runInto('a', MATRIX), runInto('b', MATRIX)]);
  runs = { a, b };
}, 600_000);
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
  it('passes the same matrix run twice, compared either way', async () => {
    for (const [base, head] of [
      [runs.a, runs.b],
      [runs.b, runs.a],
    ] as const) {
      const result = await membenchInProcess(['compare', base, head, '--max-latency-ratio', '8']);
      expect(result.stdout, result.stdout).toMatch(
        /OK: no regression \(3 cells compared, 0 missing, 0 new, 0 in error\)/u,
      );
      expect(result.code).toBe(0);
      // Latency was judged (one machine), not skipped.
      expect(result.stdout).not.toContain('latency not compared');
    }
  });

  it('fails a window keeping one exchange where base kept two, under the same setting name, and nothing else', {
    timeout: 300_000,
  }, async () => {
    // A recall plant, compared without latency: two runs of the same window, even started together,
    // met different moments of a shared disk in their saves (×5.54, flagged; see the file's header).
    const [base, head] = await Promise.all([runInto('k2', MATRIX), runInto('k1', MATRIX, { MEMBENCH_PLANTED_K: '1' })]);
    const result = await membenchInProcess(['compare', base, head, '--no-latency']);
    expect(result.code, result.stdout).toBe(1);
    expect(result.stdout).toMatch(/recipes-en\/planted +│ evidence recall +│ 0\.14 \(n=7\) +│ 0\.00 \(n=7\)/u);
    // The plant and the run's pooled figure it moves; buffer and window, unchanged, pass.
    expect(result.stdout).toMatch(/REGRESSION: 2 regressed metric\(s\) in 2 cell\(s\) \(3 cells compared/u);
    expect(result.stdout).not.toMatch(/│ recipes-en\/(?:buffer|window)/u);
  });

  it('fails a save made ten times slower, naming the cell and showing both runs and the interval', {
    timeout: 300_000,
  }, async () => {
    // Ten times, not the five `membench bench`'s A/A section plants: the slow run lasts longer than
    // the fast one, so most of its fsync-bound saves meet other moments of a shared disk. Beside a
    // full test suite (load 7–12) the fast run's save p50 swung 2.7–8.6 ms from pair to pair, and
    // a ×5 plant read ×2.64 [×1.83, ×3.72] in 1 of 8 pairs (in CI too); ×10 read at least
    // ×5.48 [×3.88, …] in 8 of 8.
    const [base, head] = await Promise.all([
      runInto('fast', STRETCHED),
      runInto('slow', STRETCHED, { MEMBENCH_PLANTED_SAVE_SLOWDOWN: '10' }),
    ]);
    const result = await membenchInProcess(['compare', base, head]);
    expect(result.code, result.stdout).toBe(1);
    expect(result.stdout).toMatch(
      /recipes-en~60\/planted +│ save time +│ p50 \S+ ms, p95 \S+ ms +│ p50 \S+ ms, p95 \S+ ms +│ ×\S+ \[×\S+, ×\S+\]/u,
    );
    expect(result.stdout).toMatch(/REGRESSION: 1 regressed metric\(s\) in 1 cell\(s\)/u);
  });
});
