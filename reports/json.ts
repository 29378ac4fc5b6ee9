/** results.json: the results as data, schema-versioned header, keys in the schema's order. */
import { assertRunResult, asWrittenInItsVersion } from '../harness/results/read.js';
import { cellResultSchema, runResultSchema, type CellResult, type RunResult } from '../harness/results/schema.js';

/** Stands for the cells in the rendered skeleton; JSON text never holds a NUL character unescaped, so no result can. */
const CELLS_MARK = '\u0000cells\u0000';

/**
 * The results as written: through the schema, so keys come in its order whatever order the run
 * filled them in, and a file re-rendered from a parsed one (`membench report`) is byte-identical.
 * Results the schema would refuse are written as they are rather than lost (reading them back
 * then names the field).
 */
export function renderJson(result: RunResult): string {
  assertRunResult(result, 'renderJson');
  return [...renderJsonChunks(result)].join('');
}

/**
 * renderJson's text in pieces: the skeleton around the cells, then one cell at a time. A
 * 500-question run's file is hundreds of megabytes; rendered whole it was held three times over
 * (the schema's copy, a clone, the string) beside the results. In pieces only one cell's copies
 * exist at once. Compact JSON, one cell per line: indenting a protocol run's rankings tripled the
 * file (every id on a line of its own), and a line per cell still reads with line tools.
 */
export function* renderJsonChunks(result: RunResult): Generator<string> {
  const canonical = runResultSchema.safeParse({ ...result, cells: [] });
  const skeleton = asWrittenInItsVersion(canonical.success ? canonical.data : { ...result, cells: [] });
  const text = `${JSON.stringify({ ...skeleton, cells: CELLS_MARK })}\n`;
  const mark = JSON.stringify(CELLS_MARK);
  const at = text.indexOf(mark);
  yield text.slice(0, at);
  if (result.cells.length === 0) yield '[]';
  for (const [index, cell] of result.cells.entries())
    yield `${index === 0 ? '[\n' : ',\n'}${renderCell(cell, result.header.schemaVersion)}`;
  if (result.cells.length > 0) yield '\n]';
  yield text.slice(at + mark.length);
}

/** One cell as compact JSON, in its file's version. */
function renderCell(cell: CellResult, schemaVersion: number): string {
  const parsed = cellResultSchema.safeParse(cell);
  const { cells } = asWrittenInItsVersion({
    header: { schemaVersion },
    cells: [parsed.success ? parsed.data : cell],
  });
  return JSON.stringify(cells[0]);
}
