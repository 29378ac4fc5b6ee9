/** report.html's per-cell tables: one row per cell (an error cell shows its error and no figure), and one per probe answer. */
import { okCells } from '../harness/results/cells.js';
import type { CellResult, OkCell, RunResult } from '../harness/results/schema.js';
import { seriesStyles } from './chart-style.js';
import { escapeHtml, sortableTable, type Column } from './html-table.js';
import { PROBE_COLUMNS } from './probe-columns.js';
import { summaryColumns, summaryNotes, summaryRow, type SummaryRow } from './summary.js';

/** The numbers the figure columns sort by (rather than their formatted text). */
const FIGURE_SORT_KEYS: Partial<Record<keyof SummaryRow, (cell: OkCell) => number | null>> = {
  recall: (cell) => cell.recall.contextRecall.value,
  stale: (cell) => cell.recall.staleExposure.value,
  conflict: (cell) => cell.recall.conflictExposure.value,
  evidence: (cell) => cell.recall.evidenceRecall.mean,
  answerRecall: (cell) => cell.recall.answerRecall.mean,
  answer: (cell) => cell.recall.answerAccuracy.value,
  loadP50: (cell) => (cell.latency.loadMs.n ? cell.latency.loadMs.p50 : null),
  saveP50: (cell) => (cell.latency.saveMs.n ? cell.latency.saveMs.p50 : null),
};

/** Columns whose row value is already the number they sort by. */
const COUNT_KEYS: ReadonlySet<keyof SummaryRow> = new Set([
  'cached',
  'refused',
  'turns',
  'contextTotal',
  'contextMean',
  'contextMax',
  'maintenance',
]);

/** The number a summary cell sorts by: null (missing) for an error cell's figures, undefined for text columns. */
function summarySortKey(cell: CellResult, row: SummaryRow, key: keyof SummaryRow): number | null | undefined {
  if (COUNT_KEYS.has(key)) {
    const value = row[key];
    return typeof value === 'number' ? value : null;
  }
  const figure = FIGURE_SORT_KEYS[key];
  if (!figure) return undefined;
  return cell.status === 'ok' ? figure(cell) : null;
}

/** Every cell's row, in the run's order, with the notes under it. */
export function summaryTable(result: RunResult): string {
  const styles = seriesStyles(result);
  const columns = summaryColumns(result);
  const rows = result.cells.map((cell) => {
    const row = summaryRow(cell);
    return columns.map(([key, title]): Column => {
      const text = String(row[key]);
      const color = styles.get(cell.setting)?.color;
      const html =
        key === 'strategy' && color
          ? `<span class="swatch" style="background:${color}"></span>${escapeHtml(text)}`
          : key === 'status' && row.status !== 'ok'
            ? `<span class="error">${escapeHtml(text)}</span>`
            : undefined;
      return { title, text, sort: summarySortKey(cell, row, key), ...(html ? { html } : {}) };
    });
  });
  const notes = summaryNotes(result);
  return (
    sortableTable(
      'summary-table',
      columns.map(([, title]) => title),
      rows,
    ) + (notes.length ? `\n<ul class="notes">${notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul>` : '')
  );
}

/** Every probe answer of the ok cells. */
export function probeTable(result: RunResult): string {
  const rows = okCells(result.cells).flatMap((cell) =>
    cell.probes.map((probe): Column[] =>
      PROBE_COLUMNS.map((column) => ({
        title: column.title,
        text: column.text(cell, probe),
        ...(column.sort ? { sort: column.sort(probe) } : {}),
      })),
    ),
  );
  return sortableTable(
    'probe-table',
    PROBE_COLUMNS.map((column) => column.title),
    rows,
  );
}
