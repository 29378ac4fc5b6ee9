/** Narrowing results for tests that read figures: a cell that errored fails the test with its error, not with "cannot read recall". */
import type { CellResult, OkCell, RunResult } from '../../harness/results/schema.js';

/** Results whose cells all ran to their end. */
export type OkRun = Omit<RunResult, 'cells'> & { cells: OkCell[] };

/** The cell, which must have run to its end. */
export function ok(cell: CellResult | undefined): OkCell {
  if (cell === undefined) throw new Error('no such cell');
  if (cell.status === 'error') throw new Error(`cell ${cell.id} errored: ${cell.error}`);
  return cell;
}

/** The run, every cell of which must have run to its end. */
export function allOk<Run extends { cells: CellResult[] }>(run: Run): Omit<Run, 'cells'> & { cells: OkCell[] } {
  return { ...run, cells: run.cells.map(ok) };
}
