/** The console summary table printed after a run. */
import Table from 'cli-table3';
import type { RunResult } from '../harness/results.js';
import { modelNote, summaryRow, SUMMARY_COLUMNS } from './summary.js';

export function renderConsoleSummary(result: RunResult, options: { color?: boolean } = {}): string {
  const table = new Table({
    head: SUMMARY_COLUMNS.map(([, title]) => title),
    style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [] },
  });
  for (const cell of result.cells) {
    const row = summaryRow(cell);
    table.push(SUMMARY_COLUMNS.map(([key]) => String(row[key])));
  }
  const { header } = result;
  return [
    table.toString(),
    `model: ${header.model} · tokenizer: ${header.tokenizer.encoding} (${header.tokenizer.model}) · seed: ${header.seed} · cells: ${result.cells.length}`,
    modelNote(result),
  ].join('\n');
}
