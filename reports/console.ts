/** The console summary table printed after a run. */
import { assertRunResult } from '../harness/results/read.js';
import { errorCells } from '../harness/results/cells.js';
import type { RunResult } from '../harness/results/schema.js';
import { visibleControls } from '../harness/core/text.js';
import { counted } from '../harness/core/plural.js';
import {
  errorText,
  interleavingNote,
  modelDependenceNote,
  modelNote,
  summaryNotes,
  summaryRow,
  type SummaryRow,
} from './summary.js';
import {
  COMPRESSED_AWAY_NOTE,
  idempotencyNote,
  invariantLegend,
  MODE_COLUMNS,
  modeRows,
  PRICE_COLUMNS,
  priceRows,
} from './durability.js';
import { DEFAULT_TABLE_WIDTH, fittedTable, wrapText } from './layout.js';
import {
  DURABILITY_MARKS_LEGEND,
  labelTable,
  leaderboardCells,
  leaderboardHead,
  leaderboards,
  MODE_TABLE_NOTE,
  MODE_TABLE_TITLE,
} from './verdict.js';
import {
  formatFigure,
  metricValues,
  PROTOCOL_NOTES,
  type ProtocolRow,
  protocolRows,
  protocolTables,
  retrievalKs,
  retrievalRows,
  unscoredProtocol,
} from './retrieval.js';
import { judgingTables } from './judging.js';
import { importLine, runImports } from './imports.js';

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
export function renderJudgingConsole(
  result: RunResult,
  options: { style?: { head: string[]; border: string[] }; width?: number } = {},
): string[] {
  return judgingTables(result).flatMap(({ title, note, head, body }) => [
    wrapText(`${title.charAt(0).toLowerCase()}${title.slice(1)}`, options.width),
    fittedTable(head, body, options),
    wrapText(note, options.width),
    '',
  ]);
}

/**
 * The verdict first: the leaderboard(s) and recommendations, then the per-cell table (cells of a
 * scenario group only with `detail`: a group reads as one suite), durability, notes. Every table
 * is laid out to `width` (default 120 columns): the columns that do not fit go to a second table.
 */
export function renderConsoleSummary(
  result: RunResult,
  options: { color?: boolean; detail?: boolean; width?: number } = {},
): string {
  assertRunResult(result, 'renderConsoleSummary');
  const style = { head: options.color ? ['cyan'] : [], border: options.color ? ['grey'] : [] };
  // What is laid out already, its text made visible there (tables, whose colours stay): every other item is prose.
  const laidOut = new Set<string>();
  const fitted = (head: readonly string[], rows: readonly (readonly string[])[], keys = 1): string => {
    const table = fittedTable(head, rows, {
      style,
      keys,
      ...(options.width !== undefined ? { width: options.width } : {}),
    });
    laidOut.add(table);
    return table;
  };
  const verdict: string[] = [];
  for (const { title, board, cells } of leaderboards(result)) {
    const marks = board.rows.some((row) => row.durability.length > 0) ? [DURABILITY_MARKS_LEGEND] : [];
    verdict.push(
      `leaderboard — ${title}`,
      fitted(leaderboardHead(board), leaderboardCells(board)),
      ...marks,
      ...board.recommendations.map((item) => `→ ${item.text}`),
      '',
    );
    const byLabel = title.startsWith('group ') ? labelTable(cells) : undefined;
    if (byLabel) verdict.push(`${title} by the dataset's own category`, fitted(byLabel.head, byLabel.body), '');
  }
  const judging = renderJudgingConsole(result, {
    style,
    ...(options.width !== undefined ? { width: options.width } : {}),
  });
  for (const item of judging) laidOut.add(item);
  verdict.push(...judging);
  const modes = modeRows(result);
  if (modes.length > 1) verdict.push(MODE_TABLE_TITLE, fitted(MODE_COLUMNS, modes), MODE_TABLE_NOTE, '');
  const shown = result.cells.filter((cell) => options.detail || (cell.group === undefined && !cell.pricing));
  const perCell = shown.map((cell) => {
    const row = summaryRow(cell);
    return CONSOLE_COLUMNS.map(([key]) => String(row[key]));
  });
  const hidden = result.cells.length - shown.length;
  const extra: string[] = [];
  const prices = priceRows(result);
  if (prices.length > 0) {
    extra.push(
      '',
      `durability: what each mode costs (save latency) and lost under the injected crashes (invariants ✓ held, ✗ violations: ${invariantLegend()})`,
      fitted(PRICE_COLUMNS, prices, 3),
      COMPRESSED_AWAY_NOTE,
      ...(idempotencyNote(result) ? [idempotencyNote(result)!] : []),
    );
  }
  const ks = retrievalKs(result);
  const retrieval = retrievalRows(result, false, options.detail);
  if (retrieval.length > 0) {
    const head = ['scenario', 'strategy', 'level', 'n', ...ks.map((k) => `@${k} any/all/ndcg`)];
    const figures = retrieval.map((row) => {
      const values = metricValues(row.summary, ks).map((value) => (value === undefined ? '–' : formatFigure(value)));
      return [
        row.scenario,
        row.setting,
        row.level,
        String(row.summary.n),
        ...ks.map((_, i) => values.slice(3 * i, 3 * i + 3).join('/')),
      ];
    });
    extra.push(
      '',
      'retrieval: recall_any / recall_all / NDCG at each k of the ranking against probe evidence (turn = stored items, session = their sessions; see report.md)',
      fitted(head, figures, 4),
    );
  }
  for (const [protocol, rows] of groupBy(protocolRows(result), (row) => row.protocol)) {
    extra.push('', `--protocol ${protocol}: ${PROTOCOL_NOTES[protocol] ?? ''}`);
    for (const { caption, head, body } of protocolTables(rows))
      extra.push(...(caption !== undefined ? [caption] : []), fitted(head, body, 4));
  }
  const unscored = unscoredProtocol(result);
  if (unscored) extra.push('', `--protocol ${unscored.protocol}: ${unscored.note}`);
  const failed = errorCells(result.cells).map((cell) => `FAILED ${cell.id}: ${errorText(cell)}`);
  extra.push(...summaryNotes(result));
  const { header } = result;
  return (
    [
      ...verdict,
      ...(shown.length > 0
        ? [
            'per cell:',
            fitted(
              CONSOLE_COLUMNS.map(([, title]) => title),
              perCell,
              2,
            ),
          ]
        : []),
      ...(hidden > 0
        ? [
            `(${counted(hidden, 'more cells')} — scenario groups, pooled in their leaderboard, and durability-mode pricing, in the durability table — ${hidden === 1 ? 'is' : 'are'} listed with --detail)`,
          ]
        : []),
      ...extra,
      ...failed,
      ...runImports(result).map((summary) => `import: ${importLine(summary)}`),
      ...(interleavingNote(result) ? [interleavingNote(result)!] : []),
      'recall = context recall, evidence = evidence recall (mean share of evidence steps held, n probes), stale = stale exposure (outdated value without the current one), conflict = conflict exposure (outdated value at all), answer = answer accuracy (hits/n); latencies in ms per turn',
      `model: ${header.model} · tokenizer: ${header.tokenizer.encoding} (${header.tokenizer.model}) · seed: ${header.seed} · cells: ${result.cells.length}`,
      modelNote(result),
      modelDependenceNote(result),
    ]
      // Prose is cut at spaces to the width, unless it holds line breaks (an error's); its control characters are escaped either way.
      .map((item) =>
        laidOut.has(item)
          ? item
          : item.includes('\n')
            ? visibleControls(item)
            : wrapText(item, options.width ?? DEFAULT_TABLE_WIDTH),
      )
      .join('\n')
  );
}

/** Rows grouped by a key, in first-seen order. */
function groupBy(rows: readonly ProtocolRow[], key: (row: ProtocolRow) => string): [string, ProtocolRow[]][] {
  const groups = new Map<string, ProtocolRow[]>();
  for (const row of rows) groups.set(key(row), [...(groups.get(key(row)) ?? []), row]);
  return [...groups];
}
