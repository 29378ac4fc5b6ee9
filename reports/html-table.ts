/** The HTML pieces every table of report.html is made of: escaping, and tables sortable by a header click. */
import { visibleControls } from '../harness/core/text.js';

/**
 * Text safe inside HTML elements and double-quoted attributes; control characters but tab and line
 * feed (an ESC, a carriage return from a group name or a dataset's id) shown as their `\uXXXX`
 * escapes (visibleControls), never written to the file as they are.
 */
export function escapeHtml(text: string): string {
  return visibleControls(text)
    .replace(/&/gu, '&amp;')
    .replace(/</gu, '&lt;')
    .replace(/>/gu, '&gt;')
    .replace(/"/gu, '&quot;')
    .replace(/'/gu, '&#39;');
}

/**
 * JSON safe inside `<script type="application/json">`: no `<` survives to close the element, and no
 * control character is written as it is (JSON.stringify escapes C0 but leaves DEL and C1; their
 * `\uXXXX` escapes read back as the same characters).
 */
export function inlineJson(value: unknown): string {
  return visibleControls(JSON.stringify(value))
    .replace(/</gu, '\\u003c')
    .replace(/\u2028/gu, '\\u2028')
    .replace(/\u2029/gu, '\\u2029');
}

/** One table cell: its text, and the number it sorts by (numbers sort numerically; null sorts as missing). */
export interface Column {
  title: string;
  /** Numbers sort numerically; null sorts as missing. */
  sort?: number | null;
  text: string;
  html?: string;
}

/** A table whose rows the page's script sorts by a header click (data-sort holds each cell's number). */
export function sortableTable(id: string, head: readonly string[], rows: readonly Column[][]): string {
  const headHtml = head
    .map((title) => `<th scope="col" aria-sort="none" tabindex="0">${escapeHtml(title)}</th>`)
    .join('');
  const bodyHtml = rows
    .map(
      (row) =>
        `<tr>${row.map((cell) => `<td${cell.sort === undefined ? '' : ` data-sort="${cell.sort === null ? '' : cell.sort}"`}>${cell.html ?? escapeHtml(cell.text)}</td>`).join('')}</tr>`,
    )
    .join('\n');
  return `<div class="table-wrap"><table class="sortable" id="${id}"><thead><tr>${headHtml}</tr></thead><tbody>\n${bodyHtml}\n</tbody></table></div>`;
}
