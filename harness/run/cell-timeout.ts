/**
 * The per-cell time limit: a cell still running after `--cell-timeout` is recorded as an error
 * naming the phase it hung in (`open`, `step 12 (user)`, `close`...), and the run goes on. In a
 * pool worker the pool kills the worker's process group; in this process the cell's promise is
 * abandoned (which stops a strategy that awaits forever, not one that blocks the event loop:
 * that is why the CLI runs every cell in a worker).
 */
import { performance } from 'node:perf_hooks';
import { failedCell, type CellTask, type PhaseListener } from './cell.js';
import type { CellResult } from '../results/schema.js';

/** The phase a worker reports while it imports the cell's strategy module. */
export const LOADING = 'loading the strategy';

/** The phase a fresh worker reports while it replays its warm-up cells (pool.ts warmUpTasks), before its first cell. */
export const WARMING = 'warming up the worker';

/** Phases before a cell starts, under the loading limit (loadLimitMs) rather than the cell's own. */
export const UNTIMED_PHASES: ReadonlySet<string> = new Set([LOADING, WARMING]);

/**
 * Importing a strategy module (and a fresh worker's warm-up) has its own limit, at least a minute: a
 * TypeScript strategy is compiled on a worker's first import, which on a loaded machine can take
 * longer than a short `--cell-timeout` meant for the strategy's work. A module that never finishes
 * loading is still stopped.
 */
export const loadLimitMs = (cellTimeoutMs: number): number => Math.max(cellTimeoutMs, 60_000);

/** What may have hung, by phase. */
function suspect(phase: string): string {
  if (phase === 'open') return 'a strategy that never finishes open()';
  if (phase === 'close') return 'a strategy that never finishes flush() or close()';
  if (phase.startsWith('step ')) return 'a strategy that never finishes this step';
  if (phase === WARMING) return "a strategy that never finishes one of the worker's warm-up cells";
  return 'a strategy module that is slow to load';
}

/** What a timed-out cell's error says: the limit, the phase, and the remedy. */
export function timeoutMessage(limitMs: number, phase: string): string {
  return `timed out after ${formatSeconds(limitMs)} in ${phase}: the cell was stopped (${suspect(phase)}?); raise --cell-timeout if it needs longer`;
}

const formatSeconds = (ms: number): string => `${Number((ms / 1000).toFixed(3))} s`;

/** Runs `run` (which reports its phases), or settles with a timed-out error cell once `limitMs` has passed. */
export function withinTimeLimit(
  plan: CellTask,
  limitMs: number,
  run: (onPhase: PhaseListener) => Promise<CellResult>,
): Promise<CellResult> {
  const started = performance.now();
  let phase = 'start';
  return new Promise<CellResult>((resolve, reject) => {
    const timer = setTimeout(
      () => resolve(failedCell(plan, timeoutMessage(limitMs, phase), performance.now() - started, phase)),
      limitMs,
    );
    run((next) => (phase = next)).then(
      (result) => {
        clearTimeout(timer);
        resolve(result);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
