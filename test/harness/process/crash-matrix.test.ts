/**
 * The crash matrix for the exchange-retrieving strategies, through real agent processes killed
 * with SIGKILL, in sync mode, with every invariant holding: all three on remember-then-crash
 * (after_ack, mid_memory_write inside an exchange's transaction, before_model_call). Concurrent
 * writers of one store are tested at the store level (vector.test.ts, bm25.test.ts).
 * (The whole matrix, every built-in crash scenario × bm25, hybrid, vector, is a slower run:
 * `membench run -s bm25 -s hybrid -s vector -c crash-mid-tool-call -c remember-then-crash -c stale-background-job -c concurrent-edits`.)
 */
import { describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../harness/run/runner.js';

describe('crash matrix: bm25, hybrid and vector', () => {
  it('hold every invariant in sync mode', { timeout: 240_000 }, async () => {
    const result = await runBenchmark({ scenarios: ['remember-then-crash'], strategies: ['bm25', 'hybrid', 'vector'], durabilities: ['sync'], workers: 2 });
    expect(result.cells).toHaveLength(3);
    for (const cell of result.cells) {
      expect(cell.status, `${cell.id}: ${cell.error ?? ''}`).toBe('ok');
      const faults = cell.faults!;
      for (const [id, outcome] of Object.entries(faults.invariants)) expect(outcome.held, `${cell.id} invariant ${id}: ${outcome.details.join('; ')}`).toBe(true);
      expect(faults.counts.unexpectedExits).toBe(0);
    }
    // mid_memory_write is a real crash point of these strategies: the process died inside an exchange's transaction.
    for (const strategy of ['bm25', 'hybrid', 'vector']) {
      const crashes = result.cells.find((cell) => cell.id === `remember-then-crash/${strategy}`)!.faults!.crashes;
      expect(crashes.find((crash) => crash.point === 'mid_memory_write')).toMatchObject({ reached: true, signal: 'SIGKILL' });
    }
  });
});
