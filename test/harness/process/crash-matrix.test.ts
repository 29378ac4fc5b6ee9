/**
 * The crash matrix for the exchange-retrieving strategies, through real agent processes killed
 * with SIGKILL, in sync mode, with every invariant holding: all three on remember-then-crash
 * (after_ack, mid_memory_write inside an exchange's transaction, before_model_call). Concurrent
 * writers of one store are tested at the store level (vector.test.ts, bm25.test.ts).
 * (The whole matrix, every built-in crash scenario × bm25, hybrid, vector, is a slower run:
 * `membench run -s bm25 -s hybrid -s vector -c crash-mid-tool-call -c remember-then-crash -c stale-background-job -c concurrent-edits`.)
 */
import { describe, expect, it } from 'vitest';
import type * as Runner from '../../../harness/run/runner.js';
import { builtModule } from '../../helpers/built.js';
import { allOk, ok } from '../../helpers/cells.js';

// The built run (test/helpers/built.ts): agent processes start from the bundle, as a user's do.
const { runBenchmark } = await builtModule<typeof Runner>('harness/run/runner.js');

describe('crash matrix: bm25, hybrid and vector', () => {
  it('hold every invariant in sync mode', { timeout: 240_000 }, async () => {
    const result = await runBenchmark({
      scenarios: ['remember-then-crash'],
      strategies: ['bm25', 'hybrid', 'vector'],
      durabilities: ['sync'],
      workers: 2,
    });
    expect(result.cells).toHaveLength(3);
    for (const cell of allOk(result).cells) {
      const faults = cell.durabilityOutcome!;
      for (const [id, outcome] of Object.entries(faults.invariants))
        expect(outcome.held, `${cell.id} invariant ${id}: ${outcome.details.join('; ')}`).toBe(true);
      expect(faults.counts.unexpectedExits).toBe(0);
    }
    // mid_memory_write is a real crash point of these strategies: the process died inside an exchange's transaction.
    for (const strategy of ['bm25', 'hybrid', 'vector']) {
      const crashes = result.cells.find((cell) => cell.id === `remember-then-crash/${strategy}`)!.durabilityOutcome!
        .crashes;
      expect(crashes.find((crash) => crash.point === 'mid_memory_write')).toMatchObject({
        reached: true,
        signal: 'SIGKILL',
      });
    }
  });
});

/**
 * The peers through the same matrix: SIGKILL at the harness's crash points only (their libraries
 * have none of their own, so mid_memory_write is never reached), and what each loses asserted as
 * measured, not patched: mem0 persists an exchange once answered (the user's message in flight is
 * lost at before_model_call), LangGraph's in-memory store loses every remembered item.
 */
describe('crash matrix: the peers mem0 and langgraph', () => {
  it('lose what their designs lose, and nothing else', { timeout: 240_000 }, async () => {
    const result = await runBenchmark({
      scenarios: ['remember-then-crash'],
      strategies: ['mem0', 'langgraph'],
      workers: 2,
    });
    const cell = (strategy: string) =>
      result.cells.find((item) => item.scenario === 'remember-then-crash' && item.strategy === strategy)!;
    for (const strategy of ['mem0', 'langgraph']) {
      const { durabilityOutcome } = ok(cell(strategy));
      expect(durabilityOutcome!.counts.unexpectedExits).toBe(0);
      const reached = durabilityOutcome!.crashes.filter((crash) => crash.reached).map((crash) => crash.point);
      expect(reached).toContain('before_model_call');
      expect(reached).toContain('after_ack');
      expect(reached).not.toContain('mid_memory_write');
      expect(
        durabilityOutcome!.crashes.filter((crash) => crash.reached).every((crash) => crash.signal === 'SIGKILL'),
      ).toBe(true);
    }
    const mem0 = cell('mem0').durabilityOutcome!;
    expect(mem0.invariants['1']!.held).toBe(true);
    expect(mem0.counts).toMatchObject({ acknowledgedLost: 0, messagesLost: 1 });
    expect(mem0.invariants['2']!.details.join(' ')).toMatch(/before_model_call.*user input not persisted/u);
    const langgraph = cell('langgraph').durabilityOutcome!;
    expect(langgraph.counts).toMatchObject({ acknowledgedLost: 7, messagesLost: 0 });
    expect(langgraph.invariants['2']!.held).toBe(true);
  });
});
