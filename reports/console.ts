/** The console summary table printed after a run. */
import Table from 'cli-table3';
import type { RunResult } from '../harness/results/schema.js';
import { interleavingNote, MODEL_DEPENDENCE_NOTE, modelNote, summaryNotes, summaryRow, type SummaryRow } from './summary.js';
import { COMPRESSED_AWAY_NOTE, invariantLegend, MODE_COLUMNS, modeRows, PRICE_COLUMNS, priceRows } from './durability.js';
import { labelTable, leaderboardCells, leaderboardHead, leaderboards, MODE_TABLE_NOTE, MODE_TABLE_TITLE } from './verdict.js';
import { formatFigure, metricValues, retrievalKs, retrievalRows } from './retrieval.js';
import { judgingTables } from './judging.js';

/** The console keeps to the columns that fit a terminal; report.md has them all. */
const CONSOLE_COLUMNS: readonly [keyof SummaryRow, string][] = [
  ['scenario', 'scenario'],
  ['strategy', 'strategy'],
  ['contextTotal', 'ctx tokens'],
  ['contextMean', 'ctx/turn'],
  ['maintenance', 'maint'],
  ['recall', 'recall'],
  ['evidence', 'evidence'],
  ['stale', 'stale'],
  ['conflict', 'conflict'],
  ['answer', 'answer'],
  ['loadP50', 'load p50'],
  ['saveP50', 'save p50'],
];

/** The judging tables (judges and their cost, judged accuracy, agreement, errata ceilings) as console text; `membench judge` prints them too. */
export function renderJudgingConsole(result: RunResult, style: { head: string[]; border: string[]; compact: boolean } = { head: [], border: [], compact: true }): string[] {
  return judgingTables(result).flatMap(({ title, note, head, body }) => {
    const table = new Table({ head, style });
    for (const row of body) table.push(row);
    return [`${title.charAt(0).toLowerCase()}${title.slice(1)}`, table.toString(), note, ''];
  });
}

/**
 * The verdict first: the leaderboard(s) and recommendations, then the per-cell table (cells of a
 * scenario group only with `detail`: a group reads as one suite), durability, notes.
 */
export function renderConsoleSummary(result: RunResult, options: { color?: boolean; detail?: boolean } = {}): string {
  const style = { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [], compact: true };
  const verdict: string[] = [];
  for (const { title, board, cells } of leaderboards(result)) {
    const table = new Table({ head: leaderboardHead(board), style });
    for (const row of leaderboardCells(board)) table.push(row);
    verdict.push(`leaderboard — ${title}`, table.toString(), ...board.recommendations.map((item) => `→ ${item.text}`), '');
    const byLabel = title.startsWith('group ') ? labelTable(cells) : undefined;
    if (byLabel) {
      const categories = new Table({ head: byLabel.head, style });
      for (const row of byLabel.body) categories.push(row);
      verdict.push(`${title} by the dataset's own category`, categories.toString(), '');
    }
  }
  verdict.push(...renderJudgingConsole(result, style));
  const modes = modeRows(result);
  if (modes.length > 1) {
    const modeTable = new Table({ head: [...MODE_COLUMNS], style });
    for (const row of modes) modeTable.push(row);
    verdict.push(MODE_TABLE_TITLE, modeTable.toString(), MODE_TABLE_NOTE, '');
  }
  const table = new Table({ head: CONSOLE_COLUMNS.map(([, title]) => title), style });
  const shown = result.cells.filter((cell) => options.detail || (cell.group === undefined && !cell.pricing));
  for (const cell of shown) {
    const row = summaryRow(cell);
    table.push(CONSOLE_COLUMNS.map(([key]) => String(row[key])));
  }
  const hidden = result.cells.length - shown.length;
  const extra: string[] = [];
  const prices = priceRows(result);
  if (prices.length > 0) {
    const durability = new Table({ head: [...PRICE_COLUMNS], style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [], compact: true } });
    for (const row of prices) durability.push(row);
    extra.push('', `durability: what each mode costs (save latency) and lost under the injected crashes (invariants ✓ held, ✗ violations: ${invariantLegend()})`, durability.toString(), COMPRESSED_AWAY_NOTE);
  }
  const ks = retrievalKs(result);
  const retrieval = retrievalRows(result, false, options.detail);
  if (retrieval.length > 0) {
    const head = ['scenario', 'strategy', 'level', 'n', ...ks.map((k) => `@${k} any/all/ndcg`)];
    const figures = new Table({ head, style: { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [], compact: true } });
    for (const row of retrieval) {
      const values = metricValues(row.summary, ks).map((value) => (value === undefined ? '–' : formatFigure(value)));
      figures.push([row.scenario, row.label, row.level, String(row.summary.n), ...ks.map((_, i) => values.slice(3 * i, 3 * i + 3).join('/'))]);
    }
    extra.push('', 'retrieval: recall_any / recall_all / NDCG at each k of the ranking against probe evidence (turn = stored items, session = their sessions; see report.md)', figures.toString());
  }
  const failed = result.cells.filter((cell) => cell.status === 'error').map((cell) => `FAILED ${cell.id}: ${cell.error ?? ''}`);
  extra.push(...summaryNotes(result));
  const { header } = result;
  return [
    ...verdict,
    ...(shown.length > 0 ? ['per cell:', table.toString()] : []),
    ...(hidden > 0 ? [`(${hidden} more cells — scenario groups, pooled in their leaderboard, and durability-mode pricing, in the durability table — are listed with --detail)`] : []),
    ...extra,
    ...failed,
    ...(interleavingNote(result) ? [interleavingNote(result)!] : []),
    'recall = context recall, evidence = evidence recall (mean share of evidence steps held, n probes), stale = stale exposure (outdated value without the current one), conflict = conflict exposure (outdated value at all), answer = answer accuracy (hits/n); latencies in ms per turn',
    `model: ${header.model} · tokenizer: ${header.tokenizer.encoding} (${header.tokenizer.model}) · seed: ${header.seed} · cells: ${result.cells.length}`,
    modelNote(result),
    MODEL_DEPENDENCE_NOTE,
  ].join('\n');
}
