/**
 * The durability matrix (strategy × durability mode × crash point) and the price of each mode
 * (save latency beside its losses), derived from the cells that ran with faults.
 */
import { distribution } from '../core/metrics.js';
import { cellsByStatus } from './cells.js';
import type { CellResult, InvariantId, InvariantOutcome, MatrixRow, ModePrice } from './schema.js';

/** Rows of the matrix, one per strategy × mode × keys × crash point, from the cells' crash records. */
export function durabilityMatrix(cells: readonly CellResult[]): MatrixRow[] {
  const rows = new Map<string, MatrixRow>();
  for (const cell of cells) {
    if (!cell.durabilityOutcome) continue;
    for (const crash of cell.durabilityOutcome.crashes) {
      const key = [cell.strategy, cell.durability, cell.durabilityOutcome.idempotencyKeys, crash.point].join('|');
      const row = rows.get(key) ?? {
        strategy: cell.strategy,
        durability: cell.durability,
        idempotencyKeys: cell.durabilityOutcome.idempotencyKeys,
        point: crash.point,
        armed: 0,
        reached: 0,
        acknowledgedLost: 0,
        messagesLost: 0,
        effectsDuplicated: 0,
        toolsMisclassified: 0,
        tornFiles: 0,
        indexMismatches: 0,
      };
      row.armed++;
      if (crash.reached) row.reached++;
      if (crash.found) {
        row.acknowledgedLost += crash.found.acknowledgedLost;
        row.messagesLost += crash.found.messagesLost;
        row.effectsDuplicated += crash.found.effectsDuplicated;
        row.toolsMisclassified += crash.found.toolsMisclassified;
        row.tornFiles += crash.found.tornFiles;
        row.indexMismatches += crash.found.indexMismatches;
      }
      rows.set(key, row);
    }
  }
  return [...rows.values()].sort(
    (a, b) =>
      a.strategy.localeCompare(b.strategy) ||
      a.durability.localeCompare(b.durability) ||
      Number(b.idempotencyKeys) - Number(a.idempotencyKeys) ||
      a.point.localeCompare(b.point),
  );
}

/** Each durability mode's save latency beside what it lost, per strategy and idempotency setting. */
export function modePrices(cells: readonly CellResult[]): ModePrice[] {
  const groups = new Map<string, CellResult[]>();
  for (const cell of cells) {
    if (!cell.durabilityOutcome) continue;
    const key = `${cell.strategy}|${cell.durability}|${cell.durabilityOutcome.idempotencyKeys}`;
    groups.set(key, [...(groups.get(key) ?? []), cell]);
  }
  return [...groups.values()]
    .map((group) => {
      const { ok, errors } = cellsByStatus(group);
      const saves = distribution(ok.flatMap((cell) => cell.turns.map((turn) => turn.saveMs)));
      const sum = (key: keyof ModePrice['losses']): number =>
        group.reduce((total, cell) => total + cell.durabilityOutcome!.counts[key], 0);
      const violations: Record<string, number> = {};
      // An errored cell stopped before its checks: it proves no invariant held.
      for (const cell of ok) {
        for (const [id, outcome] of Object.entries(cell.durabilityOutcome!.invariants))
          if (outcome.checked > 0 || outcome.violations > 0)
            violations[id] = (violations[id] ?? 0) + outcome.violations;
      }
      return {
        strategy: group[0]!.strategy,
        durability: group[0]!.durability,
        idempotencyKeys: group[0]!.durabilityOutcome!.idempotencyKeys,
        saveP50: saves.p50,
        saveP95: saves.p95,
        cells: group.length,
        crashes: group.reduce(
          (total, cell) => total + cell.durabilityOutcome!.crashes.filter((crash) => crash.reached).length,
          0,
        ),
        losses: {
          acknowledgedLost: sum('acknowledgedLost'),
          messagesLost: sum('messagesLost'),
          effectsDuplicated: sum('effectsDuplicated'),
          lostUpdates: sum('lostUpdates'),
          tornFiles: sum('tornFiles'),
          indexMismatches: sum('indexMismatches'),
          pendingJobsLost: sum('pendingJobsLost'),
          staleOverwrites: sum('staleOverwrites'),
          compressedAway: sum('compressedAway'),
        },
        violations,
        errored: errors.length,
      };
    })
    .sort(
      (a, b) =>
        a.strategy.localeCompare(b.strategy) ||
        a.durability.localeCompare(b.durability) ||
        Number(b.idempotencyKeys) - Number(a.idempotencyKeys),
    );
}

/** One invariant on one cell, by id: how often it was checked and violated, with the checker's explanations. */
export type CellInvariant = InvariantOutcome & { invariant: InvariantId };

/** The cell's invariant outcomes in id order; [] for cells run without agent processes. */
export function cellInvariants(cell: CellResult): CellInvariant[] {
  if (!cell.durabilityOutcome) return [];
  return (Object.entries(cell.durabilityOutcome.invariants) as [InvariantId, InvariantOutcome][])
    .map(([invariant, outcome]) => ({ invariant, ...outcome }))
    .sort((a, b) => a.invariant.localeCompare(b.invariant, undefined, { numeric: true }));
}

/** Invariants the cell violated at least once. */
export function violatedInvariants(cell: CellResult): CellInvariant[] {
  return cellInvariants(cell).filter((outcome) => outcome.violations > 0);
}

/** Crashes the process actually reached; 0 for cells run without faults. */
export function crashesReached(cell: CellResult): number {
  return cell.durabilityOutcome?.crashes.filter((crash) => crash.reached).length ?? 0;
}

/** Strategy settings (rows) × invariants (columns): what the durability chart and table draw. */
export interface InvariantGrid {
  /** Strategy labels; cells run without idempotency keys get a row of their own. */
  rows: string[];
  columns: InvariantId[];
  /** `values[row][column]`; null where that invariant was never checked for that setting. */
  values: ({ checks: number; violations: number } | null)[][];
  /** Crashes reached per row, summed over scenarios and trials. */
  crashes: number[];
  /** Cells per row that errored: their invariants are left out (neither held nor violated). */
  errored: number[];
}

/** Sums invariant outcomes per strategy setting over scenarios and trials; null when no cell ran with faults. */
export function invariantGrid(cells: readonly CellResult[]): InvariantGrid | null {
  const totals = new Map<
    string,
    { crashes: number; errored: number; invariants: Map<InvariantId, { checks: number; violations: number }> }
  >();
  const columns = new Set<InvariantId>();
  for (const cell of cells) {
    if (!cell.durabilityOutcome) continue;
    const label = cell.durabilityOutcome.idempotencyKeys ? cell.setting : `${cell.setting} [no idempotency keys]`;
    const row = totals.get(label) ?? {
      crashes: 0,
      errored: 0,
      invariants: new Map<InvariantId, { checks: number; violations: number }>(),
    };
    row.crashes += crashesReached(cell);
    totals.set(label, row);
    if (cell.status === 'error') {
      row.errored++;
      continue;
    }
    for (const outcome of cellInvariants(cell)) {
      if (outcome.checked === 0 && outcome.violations === 0) continue;
      columns.add(outcome.invariant);
      const sum = row.invariants.get(outcome.invariant) ?? { checks: 0, violations: 0 };
      row.invariants.set(outcome.invariant, {
        checks: sum.checks + outcome.checked,
        violations: sum.violations + outcome.violations,
      });
    }
  }
  if (totals.size === 0) return null;
  const rows = [...totals.keys()];
  const sortedColumns = [...columns].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  return {
    rows,
    columns: sortedColumns,
    values: rows.map((row) => sortedColumns.map((column) => totals.get(row)!.invariants.get(column) ?? null)),
    crashes: rows.map((row) => totals.get(row)!.crashes),
    errored: rows.map((row) => totals.get(row)!.errored),
  };
}
