/**
 * The one place a run's cells are split by status. Only `ok` cells carry figures: tables, averages,
 * charts and gates take `ok`; an error cell is listed with its error and phase, never averaged.
 */
import type { CellResult, ErrorCell, OkCell, TurnRecord } from './schema.js';

/** A run's cells by status, each list in the run's order. */
export interface CellsByStatus {
  ok: OkCell[];
  errors: ErrorCell[];
}

/** Splits cells once by status. */
export function cellsByStatus(cells: readonly CellResult[]): CellsByStatus {
  const split: CellsByStatus = { ok: [], errors: [] };
  for (const cell of cells) {
    if (cell.status === 'ok') split.ok.push(cell);
    else split.errors.push(cell);
  }
  return split;
}

/** The cells that ran to their end: the only ones with figures. */
export function okCells(cells: readonly CellResult[]): OkCell[] {
  return cellsByStatus(cells).ok;
}

/** The cells that did not run to their end, with their errors. */
export function errorCells(cells: readonly CellResult[]): ErrorCell[] {
  return cellsByStatus(cells).errors;
}

/** Pairs of one cell in two runs (base, head) that are ok in both: the only pairs whose figures compare. */
export function okPairs<Pair extends readonly [CellResult, CellResult]>(
  pairs: readonly Pair[],
): (readonly [OkCell, OkCell])[] {
  return pairs.flatMap(([base, head]) => (base.status === 'ok' && head.status === 'ok' ? [[base, head] as const] : []));
}

/** The head cells of (base, head) pairs that errored where the base was ok: errors the head brought. */
export function newErrors(pairs: readonly (readonly [CellResult, CellResult])[]): ErrorCell[] {
  return pairs.flatMap(([base, head]) => (base.status === 'ok' && head.status === 'error' ? [head] : []));
}

/** How model calls the endpoint cut at their output token limit are said: the run's warning per cell and the reports' note. */
export function cutAnswersWords(count: number): string {
  return `${count} model call(s) stopped at their output token limit (finish_reason "length"): their text is cut short and was used as it came`;
}

/** The context tokens the turns recorded: none for a ranking-only cell, which records no turn (its cost is not measured, not 0). */
export function measuredContextTokens(turns: readonly TurnRecord[]): number[] {
  return turns.flatMap((turn) => (turn.contextTokens === null ? [] : [turn.contextTokens]));
}
