/**
 * Tables laid out to a width (a terminal's, or 120 columns): the columns that do not fit move to a
 * further table, the key columns (a setting, a scenario) repeated at its left, so no row wraps.
 * The console and report.md lay their wide tables out through here.
 */
import Table from 'cli-table3';
import tableUtils from 'cli-table3/src/utils.js';
import { graphemes, visibleControls } from '../harness/core/text.js';

/** The width tables lay out to when the output is not a terminal (a file, a pipe, CI logs). */
export const DEFAULT_TABLE_WIDTH = 120;

/** The width a stream's tables lay out to: a terminal's columns, DEFAULT_TABLE_WIDTH when it is not a terminal. */
export function tableWidth(stream: { isTTY?: boolean; columns?: number }): number {
  return stream.isTTY && stream.columns && stream.columns > 0 ? stream.columns : DEFAULT_TABLE_WIDTH;
}

/** A table's columns: its header and its rows, cells as text. */
export interface TablePart {
  head: string[];
  rows: string[][];
}

/** How a table is laid out: the width it must fit, how many leading columns every part repeats, cli-table3's colours. */
export interface FitOptions {
  width?: number;
  keys?: number;
  style?: { head?: string[]; border?: string[] };
}

/**
 * A text's display width in columns: a CJK character, a full-width form or an emoji counts two,
 * colour codes none (its widest line, for a text of several). cli-table3's own `strlen`, the
 * measure it lays tables out with; charts cut their texts by it too.
 */
export const displayWidth = (text: string): number => tableUtils.strlen(text);

/**
 * Each column's display width: its widest cell, head included (rendering the table to read its top
 * border cost as much as the table itself).
 */
export function columnWidths(head: readonly string[], rows: readonly (readonly string[])[]): number[] {
  const widths = head.map(displayWidth);
  for (const row of rows)
    for (const [index, cell] of row.entries()) widths[index] = Math.max(widths[index] ?? 0, displayWidth(cell));
  return widths;
}

/** The width of a table of columns this wide, borders and one space of padding each side included (a Markdown row's too). */
const widthOf = (widths: readonly number[]): number => widths.reduce((sum, width) => sum + width + 3, 1);

/**
 * The table's columns in parts that each fit `width`, in order: the first `keys` columns lead
 * every part, the others go into the first part with room left. A column wider than any part can
 * be still gets a part of its own (it overflows rather than wraps).
 */
export function fitColumns(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  width = DEFAULT_TABLE_WIDTH,
  keys = 1,
): TablePart[] {
  const widths = columnWidths(head, rows);
  const keyIndexes = head.slice(0, keys).map((_, index) => index);
  const parts: number[][] = [];
  let current: number[] = [];
  for (let column = keys; column < head.length; column++) {
    if (current.length > 0 && widthOf([...keyIndexes, ...current, column].map((index) => widths[index]!)) > width) {
      parts.push(current);
      current = [];
    }
    current.push(column);
  }
  if (current.length > 0 || parts.length === 0) parts.push(current);
  return parts.map((columns) => {
    const indexes = [...keyIndexes, ...columns];
    return {
      head: indexes.map((index) => head[index]!),
      rows: rows.map((row) => indexes.map((index) => row[index] ?? '')),
    };
  });
}

/**
 * A console table laid out to the width: one cli-table3 table per part, one under the other. Its
 * cells are text for a terminal: control characters but tab and line feed (an ESC in a group name
 * or a probe label) written as their escapes (visibleControls) before they are measured; the only
 * escape sequences in the table are its own colours (`style`).
 */
export function fittedTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  options: FitOptions = {},
): string {
  const style = { head: options.style?.head ?? [], border: options.style?.border ?? [], compact: true };
  return fitColumns(
    head.map(visibleControls),
    rows.map((row) => row.map(visibleControls)),
    options.width,
    options.keys,
  )
    .map((part) => {
      const table = new Table({ head: part.head, style });
      for (const row of part.rows) table.push(row);
      return table.toString();
    })
    .join('\n');
}

/** Closing punctuation a line never starts with: it stays on the line of the character before it. */
const CLOSES_LINE = /^[，。、：；！？）》」』】〉…,.:;!?)\]}]/u;

/**
 * Where a word of prose may be cut: a run of letters is one piece, a wide character (a hanzi, kana,
 * hangul, a full-width form) is a piece of its own, as Chinese and Japanese lines break between
 * any two such characters; closing punctuation stays with the character before it.
 */
function linePieces(word: string): string[] {
  const pieces: string[] = [];
  let piece = '';
  let wide = false;
  for (const grapheme of graphemes(word)) {
    const isWide = displayWidth(grapheme) > 1;
    if (piece && (isWide || wide) && !CLOSES_LINE.test(grapheme)) {
      pieces.push(piece);
      piece = '';
    }
    piece += grapheme;
    wide = isWide;
  }
  pieces.push(piece);
  return pieces;
}

/**
 * A line of prose for a terminal, cut into lines of at most `width` columns (displayWidth: a CJK
 * character two) at spaces and between wide characters (a run of letters longer than that stays
 * whole); its control characters but tab and line feed written as their escapes (visibleControls),
 * as a table's cells are.
 */
export function wrapText(text: string, width = DEFAULT_TABLE_WIDTH): string {
  const lines: string[] = [];
  let line = '';
  let used = 0;
  for (const word of visibleControls(text).split(' ')) {
    linePieces(word).forEach((piece, index) => {
      const space = index === 0 && line ? 1 : 0;
      const size = displayWidth(piece);
      if (line && used + space + size > width) {
        lines.push(line);
        line = piece;
        used = size;
      } else {
        line += `${space ? ' ' : ''}${piece}`;
        used += space + size;
      }
    });
  }
  return [...lines, line].join('\n');
}
