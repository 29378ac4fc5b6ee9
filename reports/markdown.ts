/** report.md: the run header, the verdict (leaderboards, recommendations, recall by distance), then per cell and per category, durability and probes. */
import { assertRunResult } from '../harness/results/read.js';
import { okCells } from '../harness/results/cells.js';
import type { RunResult } from '../harness/results/schema.js';
import {
  interleavingNote,
  markdownCode,
  markdownLine,
  markdownTable,
  modelDependenceNote,
  modelNote,
  recallColumns,
  summaryColumns,
  summaryNotes,
  summaryRow,
} from './summary.js';
import { renderExplainMarkdown } from './explain.js';
import { MARKDOWN_PROBE_COLUMNS } from './probe-columns.js';
import { judgeDisagreements, judgingTables } from './judging.js';
import { IMPORT_NOTE, importExamples, importLine, runImports } from './imports.js';
import {
  COMPRESSED_AWAY_NOTE,
  idempotencyNote,
  invariantLegend,
  MATRIX_COLUMNS,
  matrixRows,
  MODE_COLUMNS,
  modeRows,
  PRICE_COLUMNS,
  priceRows,
} from './durability.js';
import { fitColumns } from './layout.js';
import { escapeHtml } from './html-table.js';
import {
  breakdownRows,
  distanceTable,
  distanceTables,
  DURABILITY_MARKS_LEGEND,
  labelTable,
  LEADERBOARD_NOTE,
  leaderboardCells,
  leaderboardHead,
  leaderboards,
  MODE_TABLE_NOTE,
  MODE_TABLE_TITLE,
} from './verdict.js';
import {
  formatFigure,
  metricTitles,
  metricValues,
  pooledRetrievalRows,
  PROTOCOL_NOTES,
  protocolRows,
  protocolTables,
  RETRIEVAL_NOTE,
  retrievalKs,
  retrievalRows,
  unscoredProtocol,
} from './retrieval.js';

const table = markdownTable;

/** A wide table as Markdown tables of at most 120 columns each, the first column repeated (reports/layout.ts), each followed by a blank line. */
function fittedMarkdown(head: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return fitColumns(head, rows).flatMap((part) => [table(part.head, part.rows), '']);
}

function durabilitySection(result: RunResult): string[] {
  const prices = priceRows(result);
  if (prices.length === 0) return [];
  return [
    '## Durability',
    '',
    'Cells with crash points, concurrent sessions or fuzzing ran in agent processes killed with SIGKILL. ' +
      `Per strategy and durability mode: the save latency it costs and what it lost. Invariants: ✓ held, ✗ violations (${invariantLegend()}).`,
    '',
    table([...PRICE_COLUMNS], prices),
    '',
    `${COMPRESSED_AWAY_NOTE}.`,
    '',
    ...(idempotencyNote(result) ? [`${idempotencyNote(result)!}.`, ''] : []),
    '### Matrix: strategy × mode × crash point',
    '',
    table([...MATRIX_COLUMNS], matrixRows(result)),
    '',
  ];
}

/** Recall by category and by dataset label: one row per cell, or per group and setting for grouped scenarios. */
function breakdownTable(result: RunResult): string {
  const rows = breakdownRows(result).map((row) => ({ row, columns: recallColumns(row.summary) }));
  const titles = [...new Set(rows.flatMap((item) => item.columns.map((column) => column.title)))];
  return table(
    ['scenario', 'strategy', 'category', ...titles],
    rows.map(({ row, columns }) => [
      row.scope,
      row.setting,
      row.category,
      ...titles.map((title) => columns.find((column) => column.title === title)?.text ?? '–'),
    ]),
  );
}

/** The verdict: every leaderboard with its recommendations, then recall by distance. */
function verdictSection(result: RunResult): string[] {
  const lines = ['## Verdict', '', LEADERBOARD_NOTE, ''];
  for (const { title, board, cells } of leaderboards(result)) {
    const marks = board.rows.some((row) => row.durability.length > 0) ? [DURABILITY_MARKS_LEGEND, ''] : [];
    lines.push(
      `### Leaderboard — ${markdownLine(title)}`,
      '',
      ...fittedMarkdown(leaderboardHead(board), leaderboardCells(board)),
      ...marks,
    );
    lines.push(
      ...board.recommendations.flatMap((item) => [
        `- ${markdownLine(item.text)}`,
        // An HTML block: its text is HTML, not Markdown.
        ...(item.detail
          ? [`  <details><summary>details</summary>${markdownLine(escapeHtml(item.detail))}</details>`]
          : []),
      ]),
      '',
    );
    const byLabel = title.startsWith('group ') ? labelTable(cells) : undefined;
    if (byLabel)
      lines.push(
        `#### ${markdownLine(title)} by the dataset's own category`,
        '',
        ...fittedMarkdown(byLabel.head, byLabel.body),
      );
  }
  const modes = modeRows(result);
  if (modes.length > 1)
    lines.push(`### ${MODE_TABLE_TITLE}`, '', table([...MODE_COLUMNS], modes), '', MODE_TABLE_NOTE, '');
  for (const { unit, rows } of distanceTables(result)) {
    const { head, body } = distanceTable(rows);
    lines.push(
      `### Context recall by distance (${unit} between the evidence and its probe)`,
      '',
      table(head, body),
      '',
    );
  }
  return lines;
}

/** One table per `--protocol`, in the paper's layout (unit × k). */
function protocolSection(result: RunResult): string[] {
  const rows = protocolRows(result);
  const unscored = unscoredProtocol(result);
  if (unscored) return [`## Retrieval by the ${unscored.protocol} protocol`, '', `${unscored.note}.`, ''];
  return [...new Set(rows.map((row) => row.protocol))].flatMap((protocol) => {
    return [
      `## Retrieval by the ${protocol} protocol`,
      '',
      PROTOCOL_NOTES[protocol] ?? '',
      '',
      ...protocolTables(rows.filter((row) => row.protocol === protocol)).flatMap(({ caption, head, body }) => [
        ...(caption !== undefined ? [`${caption[0]!.toUpperCase()}${caption.slice(1)}:`, ''] : []),
        table(head, body),
        '',
      ]),
    ];
  });
}

/** Judges, judged accuracy beside the dataset's score, agreement, errata ceilings (the disagreements are listed in report.html). */
function judgingSection(result: RunResult): string[] {
  const tables = judgingTables(result);
  if (tables.length === 0) return [];
  const lines = ['## Judging', ''];
  for (const { title, note, head, body } of tables)
    lines.push(`### ${markdownLine(title)}`, '', markdownLine(note), '', table(head, body), '');
  const disagreeing = judgeDisagreements(result);
  if (disagreeing)
    lines.push(
      markdownLine(
        `${disagreeing.items.length} answer${disagreeing.items.length === 1 ? '' : 's'} on which ${disagreeing.a} and ${disagreeing.b} disagree: listed in report.html.`,
      ),
      '',
    );
  return lines;
}

/** The dataset files imported: a line each, with examples of what was skipped and repaired. */
function importSection(result: RunResult): string[] {
  const imports = runImports(result);
  if (imports.length === 0) return [];
  return [
    '## Import',
    '',
    IMPORT_NOTE,
    '',
    ...imports.flatMap((summary) => [
      `- ${markdownLine(importLine(summary))}`,
      ...importExamples(summary).map((line) => `  - ${markdownLine(line)}`),
    ]),
    '',
  ];
}

function retrievalSection(result: RunResult): string[] {
  const ks = retrievalKs(result);
  const rows = (byCategory: boolean) =>
    retrievalRows(result, byCategory).map((row) => [
      row.scenario,
      row.setting,
      ...(byCategory ? [row.category] : []),
      row.level,
      String(row.summary.n),
      ...metricValues(row.summary, ks).map((value) => (value === undefined ? '–' : formatFigure(value))),
    ]);
  const overall = rows(false);
  if (overall.length === 0) return [];
  return [
    '## Retrieval',
    '',
    RETRIEVAL_NOTE,
    '',
    table(['scenario', 'strategy', 'level', 'n', ...metricTitles(ks)], overall),
    '',
    '### Retrieval by probe category',
    '',
    table(['scenario', 'strategy', 'category', 'level', 'n', ...metricTitles(ks)], rows(true)),
    '',
    '### Retrieval pooled over scenarios, by strategy and probe category',
    '',
    "Each strategy setting over every scenario it ran (a dataset's conversations, say), means weighted by the probes behind them.",
    '',
    table(
      ['strategy', 'category', 'level', 'scenarios', 'n', ...metricTitles(ks)],
      pooledRetrievalRows(result).map((row) => [
        row.strategy,
        row.category,
        row.level,
        String(row.cells),
        String(row.summary.n),
        ...metricValues(row.summary, ks).map((value) => (value === undefined ? '–' : formatFigure(value))),
      ]),
    ),
    '',
  ];
}

export function renderMarkdown(result: RunResult): string {
  assertRunResult(result, 'renderMarkdown');
  const { header } = result;
  const columns = summaryColumns(result);
  const notes = summaryNotes(result);
  const lines: string[] = [
    '# membench report',
    '',
    `- membench ${header.membenchVersion}${header.gitCommit ? ` (commit ${header.gitCommit.slice(0, 12)})` : ''}, Node ${header.nodeVersion}, ${header.platform}`,
    `- model: ${markdownCode(header.model)}, embedder: ${markdownCode(header.embedder)}, tokenizer: ${header.tokenizer.encoding} (for ${markdownCode(header.tokenizer.model)})`,
    `- seed ${header.seed}, ${header.trials} trial(s), ${result.cells.length} cells, started ${header.startedAt}`,
    `- strategies: ${header.strategies.map((strategy) => markdownCode(strategy.setting)).join(', ')}`,
    `- scenarios: ${header.scenarios.map((scenario) => `${markdownCode(scenario.name)} (${scenario.steps} steps)`).join(', ')}`,
    '',
    `> ${markdownLine(modelNote(result))}`,
    '>',
    `> ${markdownLine(modelDependenceNote(result))}`,
    '',
    ...verdictSection(result),
    ...judgingSection(result),
    ...importSection(result),
    '## Summary',
    '',
    'Context tokens are what each strategy loaded for the model calls of the run (with chat overhead). ' +
      "Context recall: an expected string is in the loaded context. Answer recall: the share of the gold answer's content words within one context message. " +
      "Evidence recall: the share of a probe's evidence steps the context holds (quoted, or covered by one message). " +
      'Stale exposure: a forbidden (outdated) string is there and no expected one is; conflict exposure: a forbidden string is there at all. ' +
      'Rates show hits/n, means (n=probes).',
    '',
    table(
      columns.map(([, title]) => title),
      result.cells
        .filter((cell) => cell.group === undefined)
        .map((cell) => {
          const row = summaryRow(cell);
          return columns.map(([key]) => String(row[key]));
        }),
    ),
    '',
    ...notes.map((note) => `- ${markdownLine(note)}`),
    ...(notes.length ? [''] : []),
    ...(result.cells.some((cell) => cell.group !== undefined)
      ? [
          "Cells of scenario groups (generated suites, dataset files) are pooled in their group's leaderboard and breakdowns; results.json and report.html keep every cell and probe.",
          '',
        ]
      : []),
    ...(interleavingNote(result) ? [markdownLine(interleavingNote(result)!), ''] : []),
    '## Recall by probe category',
    '',
    "By membench's categories, then by the dataset's own (`label:`), where the scenario gives them.",
    '',
    breakdownTable(result),
    '',
    ...retrievalSection(result),
    ...protocolSection(result),
    ...durabilitySection(result),
    renderExplainMarkdown(result),
    '## Probes',
    '',
    table(
      MARKDOWN_PROBE_COLUMNS.map((column) => column.title),
      okCells(result.cells)
        .filter((cell) => cell.group === undefined)
        .flatMap((cell) =>
          cell.probes.map((probe) =>
            MARKDOWN_PROBE_COLUMNS.map((column) => (column.markdown ?? column.text)(cell, probe)),
          ),
        ),
    ),
    '',
  ];
  return lines.join('\n');
}
