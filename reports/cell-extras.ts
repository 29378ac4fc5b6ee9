/**
 * Readers for the durability outcome of a cell (`cells[].faults`, DESIGN §6: crashes injected and
 * invariants 1–6 checked after each recovery). Only cells run in agent processes carry it, so
 * every reporter reads it here, tolerantly, and skips what is absent.
 */
import type { CellResult } from '../harness/results/schema.js';

/** One invariant on a cell: how often it was checked and violated, with the checker's explanations. */
export interface InvariantOutcome {
  invariant: string;
  checks: number;
  violations: number;
  details: string[];
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);

/** The cell's `faults` object, or undefined for cells run without agent processes. */
function faultsOf(cell: CellResult): Record<string, unknown> | undefined {
  const faults = (cell as { faults?: unknown }).faults;
  return isRecord(faults) ? faults : undefined;
}

/** Invariant outcomes by id (`faults.invariants: { [id]: { checked, violations, details } }`), [] when absent. */
export function cellInvariants(cell: CellResult): InvariantOutcome[] {
  const invariants = faultsOf(cell)?.invariants;
  if (!isRecord(invariants)) return [];
  return Object.entries(invariants).flatMap(([invariant, outcome]) =>
    isRecord(outcome)
      ? [{
          invariant,
          checks: count(outcome.checked),
          violations: count(outcome.violations),
          details: Array.isArray(outcome.details) ? outcome.details.filter((line): line is string => typeof line === 'string') : [],
        }]
      : [],
  );
}

/** Invariants the cell violated at least once. */
export function violatedInvariants(cell: CellResult): InvariantOutcome[] {
  return cellInvariants(cell).filter((outcome) => outcome.violations > 0);
}

/** Crashes the process actually reached (`faults.crashes[].reached`); 0 when absent. */
export function crashesReached(cell: CellResult): number {
  const crashes = faultsOf(cell)?.crashes;
  return Array.isArray(crashes) ? crashes.filter((crash) => isRecord(crash) && crash.reached === true).length : 0;
}

/** Rows (labels: strategy × durability mode) × columns (invariant ids): what the durability chart draws. */
export interface DurabilityMatrix {
  rows: string[];
  columns: string[];
  /** `values[row][column]`; null where that invariant was never checked for that label. */
  values: ({ checks: number; violations: number } | null)[][];
  /** Crashes reached per row, summed over scenarios and trials. */
  crashes: number[];
}

/** Sums invariant outcomes per label over scenarios and trials; null when no cell carries durability data. */
export function durabilityMatrix(cells: readonly CellResult[]): DurabilityMatrix | null {
  const totals = new Map<string, { crashes: number; invariants: Map<string, { checks: number; violations: number }> }>();
  const columns = new Set<string>();
  for (const cell of cells) {
    const faults = faultsOf(cell);
    if (!faults) continue;
    // Cells run without idempotency keys get their own row: they are a different setting.
    const label = faults.idempotencyKeys === false ? `${cell.label} [no idempotency keys]` : cell.label;
    const row = totals.get(label) ?? { crashes: 0, invariants: new Map<string, { checks: number; violations: number }>() };
    row.crashes += crashesReached(cell);
    for (const outcome of cellInvariants(cell)) {
      if (outcome.checks === 0 && outcome.violations === 0) continue;
      columns.add(outcome.invariant);
      const sum = row.invariants.get(outcome.invariant) ?? { checks: 0, violations: 0 };
      row.invariants.set(outcome.invariant, { checks: sum.checks + outcome.checks, violations: sum.violations + outcome.violations });
    }
    totals.set(label, row);
  }
  if (totals.size === 0) return null;
  const rows = [...totals.keys()];
  const sortedColumns = [...columns].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  return {
    rows,
    columns: sortedColumns,
    values: rows.map((row) => sortedColumns.map((column) => totals.get(row)!.invariants.get(column) ?? null)),
    crashes: rows.map((row) => totals.get(row)!.crashes),
  };
}
