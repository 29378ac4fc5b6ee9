/**
 * `--profile`: where a run's time went, by phase — the agent processes' start (Node, module
 * loading, the tokenizer), waiting for spares, strategy open, replay, crash recovery, invariant
 * checks, closing — summed from the cells' `phases`, plus the phases of this process the caller
 * timed (planning and running the cells, reports, charts).
 */
import { distribution } from '../harness/core/metrics.js';
import { emptyPhases, type CellPhases, type RunResult } from '../harness/results/schema.js';
import { markdownTable } from './summary.js';

/** A phase the caller timed in its own process. */
export interface RunPhase {
  name: string;
  ms: number;
}

/** The cells' phases summed, with the counts that make them readable (per process, per crash). */
export interface PhaseTotals extends CellPhases {
  cells: number;
  /** Cells replayed in agent processes. */
  processCells: number;
  crashes: number;
  /** Median per reached crash: the armed step to the fresh process opened and checked. */
  recoveryP50Ms: number;
}

/** Sums the `phases` of the cells that have them (a run with `--profile`). */
export function phaseTotals(result: RunResult): PhaseTotals {
  const totals: PhaseTotals = {
    cells: 0,
    processCells: 0,
    crashes: 0,
    recoveryP50Ms: 0,
    ...emptyPhases(),
  };
  const recoveries: number[] = [];
  for (const cell of result.cells) {
    if (!cell.phases) continue;
    totals.cells++;
    if (cell.phases.processes > 0) totals.processCells++;
    for (const key of Object.keys(cell.phases) as (keyof CellPhases)[]) totals[key] += cell.phases[key];
    for (const crash of cell.durabilityOutcome?.crashes ?? [])
      if (crash.recoveryMs !== undefined) recoveries.push(crash.recoveryMs);
  }
  totals.crashes = recoveries.length;
  totals.recoveryP50Ms = recoveries.length > 0 ? distribution(recoveries).p50 : 0;
  return totals;
}

const ms = (value: number): string => `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ms`;
const per = (value: number, count: number, unit: string): string =>
  count > 0 ? `${ms(value / count)} per ${unit}` : '';

/** The profile as a Markdown table (stderr of `membench run --profile`). */
export function renderProfile(result: RunResult, main: readonly RunPhase[] = []): string {
  const totals = phaseTotals(result);
  const p = totals.processes;
  // A process's start is counted once, at its first open: a process reopened for a later cell or session started once.
  const started = totals.snapshotStarts + totals.otherStarts;
  const rows: string[][] = [
    ...main.map((phase) => [phase.name, ms(phase.ms), '', 'this process']),
    [
      'agent process start (Node bootstrap)',
      ms(totals.processStartMs),
      per(totals.processStartMs, started, 'process'),
      `${p} processes for ${totals.processCells} cells`,
    ],
    [
      'module loading (agent modules + tokenizer)',
      ms(totals.moduleLoadMs),
      per(totals.moduleLoadMs, started, 'process'),
      'paid by spares ahead of need; modules from the startup snapshot cost ~0 (the rest: the tokenizer ranks)',
    ],
    [
      'CPU of a process start',
      ms(totals.processCpuMs),
      per(totals.processCpuMs, started, 'process'),
      `user + system, until ready; ${started} processes started (${totals.snapshotStarts} from the startup snapshot), the other opens reused one`,
    ],
    ['waiting for a spare', ms(totals.spareWaitMs), '', "before a cell's first process and before each armed crash"],
    [
      'strategy open',
      ms(totals.openMs),
      per(totals.openMs, totals.cells, 'cell'),
      'reopens after crashes and sessions included',
    ],
    ['replay (steps)', ms(totals.replayMs), per(totals.replayMs, totals.cells, 'cell'), ''],
    [
      'crash recovery (kill → reopened)',
      ms(totals.recoveryMs),
      totals.crashes > 0 ? `${ms(totals.recoveryP50Ms)} median per crash, checks included` : '',
      `${totals.crashes} crashes`,
    ],
    ['invariant checks', ms(totals.checkMs), '', ''],
    ['close (flush + close)', ms(totals.closeMs), '', ''],
  ];
  return [
    `## Profile: ${totals.cells} cells, wall ${ms(result.header.durationMs)}`,
    '',
    'Agent-process phases are summed over processes that run side by side (and spares boot while cells run), so their sums exceed the wall time.',
    '',
    markdownTable(['phase', 'total', 'per', 'note'], rows),
    '',
  ].join('\n');
}
