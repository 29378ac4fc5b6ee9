/** What two runs with one seed must agree on, for reproducibility tests: the results without timing fields. */
import { TIMING_KEYS, type RunResult } from '../../harness/results/schema.js';

/** A copy of `value` without timing fields (TIMING_KEYS). */
export function withoutTiming<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, inner: unknown) => (TIMING_KEYS.has(key) ? undefined : inner))) as T;
}

/** What an interleaved cell (concurrent sessions) promises to reproduce: who it is, its status and its durability outcome. */
const INTERLEAVED_KEEPS = [
  'id',
  'scenario',
  'strategy',
  'setting',
  'options',
  'durability',
  'trial',
  'seed',
  'status',
  'error',
  'effects',
  'durabilityOutcome',
  'interleaved',
] as const;

/**
 * What two runs with one seed must agree on: everything but timing, and for interleaved cells
 * only their identity, status and durability outcome (their tokens and recall depend on how the
 * concurrent sessions interleaved).
 */
export function sameSeedView(result: RunResult): unknown {
  const cells = result.cells.map((cell) =>
    cell.interleaved
      ? Object.fromEntries(
          INTERLEAVED_KEEPS.flatMap((key) => {
            const value = (cell as Record<string, unknown>)[key];
            return value === undefined ? [] : [[key, value]];
          }),
        )
      : cell,
  );
  return withoutTiming({ ...result, cells });
}
