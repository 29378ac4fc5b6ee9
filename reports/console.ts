/** The console summary table printed after a run. */
import Table from 'cli-table3';
import type { RunResult } from '../harness/results/schema.js';
import { modelNote, summaryNotes, summaryRow, type SummaryRow } from './summary.js';
import { COMPRESSED_AWAY_NOTE, invariantLegend, PRICE_COLUMNS, priceRows } from './durability.js';

/** The console keeps to the columns that fit a terminal; report.md has them all. */
const CONSOLE_COLUMNS: readonly [keyof SummaryRow, string][] = [
  ['scenario', 'scenario'],
  ['strategy', 'strategy'],
  ['contextTotal', 'ctx tokens'],
  ['contextMean', 'ctx/turn'],
  ['maintenance', 'maint'],
  ['recall', 'recall'],
  ['stale', 'stale'],
  ['answer', 'answer'],
  ['loadP50', 'load p50'],
  ['saveP50', 'save p50'],
];

export function renderConsoleSummary(result: RunResult, options: { color?: boolean } = {}): string {
  const table = new Table({
    head: CONSOLE_COLUMNS.map(([, title]) => title),
    style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [], compact: true },
  });
  for (const cell of result.cells) {
    const row = summaryRow(cell);
    table.push(CONSOLE_COLUMNS.map(([key]) => String(row[key])));
  }
  const extra: string[] = [];
  const prices = priceRows(result);
  if (prices.length > 0) {
    const durability = new Table({ head: [...PRICE_COLUMNS], style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [], compact: true } });
    for (const row of prices) durability.push(row);
    extra.push('', `durability: what each mode costs (save latency) and lost under the injected crashes (invariants ✓ held, ✗ violations: ${invariantLegend()})`, durability.toString(), COMPRESSED_AWAY_NOTE);
  }
  const failed = result.cells.filter((cell) => cell.status === 'error').map((cell) => `FAILED ${cell.id}: ${cell.error ?? ''}`);
  extra.push(...summaryNotes(result));
  const { header } = result;
  return [
    table.toString(),
    ...extra,
    ...failed,
    'recall = context recall, stale = stale exposure, answer = answer accuracy (hits/n); latencies in ms per turn',
    `model: ${header.model} · tokenizer: ${header.tokenizer.encoding} (${header.tokenizer.model}) · seed: ${header.seed} · cells: ${result.cells.length}`,
    modelNote(result),
  ].join('\n');
}
