/**
 * What a crash and its recovery cost, per strategy, against the fork + SIGKILL + reopen floor:
 * `remember-then-crash` replayed in agent processes (one cell at a time, in this process, so no
 * other cell competes for the cores), and for every reached crash the time from the armed step's
 * request to the fresh process opened on the same dir and checked. Spares are warm by then (the
 * harness arms a crash only once one is), so the figure is the kill, the exit, the reopen and the
 * invariant checks — not a process start.
 */
import { distribution } from '../core/metrics.js';
import { errorCells } from '../results/cells.js';
import { runBenchmark } from '../run/runner.js';
import { phaseTotals } from '../../reports/profile.js';

/** The scenario every strategy is crashed in: kills after acknowledgements, mid memory write, before a model call. */
export const RECOVERY_SCENARIO = 'remember-then-crash';

/** One strategy's crashes. */
export interface RecoveryRow {
  strategy: string;
  crashes: number;
  /** Per reached crash: armed step → fresh process opened and checked. */
  p50Ms: number;
  maxMs: number;
  /** Agent processes the cell used, and the CPU each had spent starting (modules, tokenizer) by the time it was ready. */
  processes: number;
  processCpuMsEach: number;
  /** Time the cell waited for a spare to be ready (before its first process and before each armed crash). */
  spareWaitMs: number;
}

/** Every strategy's row. */
export interface RecoveryResult {
  scenario: string;
  rows: RecoveryRow[];
  errors: string[];
}

/** Runs the recovery scenario for each strategy, one cell at a time. */
export async function benchRecovery(options: {
  strategies: readonly string[];
  onProgress?: (line: string) => void;
}): Promise<RecoveryResult> {
  const rows: RecoveryRow[] = [];
  const errors: string[] = [];
  for (const strategy of options.strategies) {
    options.onProgress?.(`recovery: ${strategy}, ${RECOVERY_SCENARIO} in agent processes`);
    const result = await runBenchmark({
      scenarios: [RECOVERY_SCENARIO],
      strategies: [strategy],
      workers: 1,
      profile: true,
    });
    for (const cell of errorCells(result.cells)) errors.push(`${cell.id}: ${cell.error}`);
    const times = result.cells.flatMap((cell) =>
      (cell.durabilityOutcome?.crashes ?? []).flatMap((crash) =>
        crash.recoveryMs === undefined ? [] : [crash.recoveryMs],
      ),
    );
    const totals = phaseTotals(result);
    const spread = distribution(times);
    rows.push({
      strategy,
      crashes: times.length,
      p50Ms: times.length > 0 ? spread.p50 : NaN,
      maxMs: times.length > 0 ? spread.max : NaN,
      processes: totals.processes,
      processCpuMsEach: totals.processes > 0 ? totals.processCpuMs / totals.processes : 0,
      spareWaitMs: totals.spareWaitMs,
    });
  }
  return { scenario: RECOVERY_SCENARIO, rows, errors };
}
