/**
 * report.html: one self-contained file (chart.js and the chart data inlined, nothing fetched at
 * view time) with the run header, interactive charts and tables sortable by a header click.
 */
import { assertRunResult } from '../harness/results/read.js';
import { cellsByStatus } from '../harness/results/cells.js';
import { invariantName, type RunResult } from '../harness/results/schema.js';
import { invariantGrid } from '../harness/results/durability-matrix.js';
import type { ChartSpec } from './chart-style.js';
import { chartSpecs } from './chart-specs.js';
import { chartJs, CLIENT_SCRIPT, STYLE } from './html-assets.js';
import { probeTable, summaryTable } from './html-cells.js';
import { escapeHtml, inlineJson, sortableTable, type Column } from './html-table.js';
import {
  COMPRESSED_AWAY_NOTE,
  idempotencyNote,
  MODE_COLUMNS,
  modeRows,
  PRICE_COLUMNS,
  priceRows,
} from './durability.js';
import { explainRun } from './explain.js';
import {
  breakdownRows,
  distanceTable,
  distanceTables,
  labelTable,
  LEADERBOARD_NOTE,
  leaderboardCells,
  leaderboardHead,
  leaderboards,
  leaderboardSortKeys,
  MODE_TABLE_NOTE,
  MODE_TABLE_TITLE,
} from './verdict.js';
import { interleavingNote, modelDependenceNote, modelNote, recallColumns } from './summary.js';
import { judgeDisagreements, judgingTables } from './judging.js';
import { IMPORT_NOTE, importExamples, importLine, runImports } from './imports.js';
import { formatFigure, metricTitles, metricValues, RETRIEVAL_NOTE, retrievalKs, retrievalRows } from './retrieval.js';

function categoryTable(result: RunResult): string {
  const groups = breakdownRows(result).map((row) => ({ row, columns: recallColumns(row.summary) }));
  const titles = [...new Set(groups.flatMap((item) => item.columns.map((column) => column.title)))];
  const rows = groups.map(({ row, columns }): Column[] => [
    { title: 'scenario', text: row.scope },
    { title: 'strategy', text: row.setting },
    { title: 'category', text: row.category },
    ...titles.map((title): Column => {
      const column = columns.find((item) => item.title === title);
      return { title, text: column?.text ?? '–', sort: column?.sort ?? null };
    }),
  ]);
  return sortableTable('category-table', ['scenario', 'strategy', 'category', ...titles], rows);
}

/** The retrieval tables (overall and by category); empty when no strategy of the run retrieves. */
function retrievalSection(result: RunResult): string {
  const ks = retrievalKs(result);
  const table = (id: string, byCategory: boolean): string => {
    const head = ['scenario', 'strategy', ...(byCategory ? ['category'] : []), 'level', 'n', ...metricTitles(ks)];
    const rows = retrievalRows(result, byCategory).map((row): Column[] => [
      { title: 'scenario', text: row.scenario },
      { title: 'strategy', text: row.setting },
      ...(byCategory ? [{ title: 'category', text: row.category }] : []),
      { title: 'level', text: row.level },
      { title: 'n', text: String(row.summary.n), sort: row.summary.n },
      ...metricValues(row.summary, ks).map(
        (value, i): Column => ({
          title: metricTitles(ks)[i]!,
          text: value === undefined ? '–' : formatFigure(value),
          sort: value ?? null,
        }),
      ),
    ]);
    return sortableTable(id, head, rows);
  };
  if (retrievalRows(result, false).length === 0) return '';
  return `<section id="retrieval">\n<h2>Retrieval</h2>\n<p>${escapeHtml(RETRIEVAL_NOTE)}</p>\n${table('retrieval-table', false)}\n<h3>Retrieval by probe category</h3>\n${table('retrieval-category-table', true)}\n</section>`;
}

/** Violations/checks per label and invariant; empty when the run has no durability data. */
function durabilitySection(result: RunResult): string {
  const matrix = invariantGrid(result.cells);
  if (!matrix) return '';
  const rows = matrix.rows.map((row, index): Column[] => [
    { title: 'strategy', text: row },
    { title: 'crashes', text: String(matrix.crashes[index]), sort: matrix.crashes[index]! },
    ...matrix.values[index]!.map(
      (value, column): Column => ({
        title: invariantName(matrix.columns[column]!),
        text: value ? `${value.violations} violated / ${value.checks} checked` : '–',
        sort: value ? value.violations : null,
        ...(value && value.violations > 0
          ? { html: `<span class="error">${value.violations} violated</span> / ${value.checks} checked` }
          : {}),
      }),
    ),
  ]);
  const anyErrored = matrix.errored.some((count) => count > 0);
  if (anyErrored)
    rows.forEach((row, index) =>
      row.push({
        title: 'errored cells',
        text: String(matrix.errored[index]),
        sort: matrix.errored[index]!,
        ...(matrix.errored[index] ? { html: `<span class="error">${matrix.errored[index]}</span>` } : {}),
      }),
    );
  const head = [
    'strategy',
    'crashes',
    ...matrix.columns.map((column) => invariantName(column)),
    ...(anyErrored ? ['errored cells'] : []),
  ];
  const prices = priceRows(result).map((row) =>
    row.map(
      (text, column): Column => ({
        title: PRICE_COLUMNS[column]!,
        text,
        ...(column >= 3 && column < PRICE_COLUMNS.length - 1 ? { sort: Number(text) } : {}),
      }),
    ),
  );
  return [
    '<section id="durability">',
    '<h2>Durability</h2>',
    `<p>Crashes reached and invariant checks after recovery, summed over scenarios and trials${anyErrored ? '; errored cells stopped before their checks and count as neither held nor violated' : ''}.</p>`,
    sortableTable('durability-table', head, rows),
    '<h3>What each mode costs and lost</h3>',
    sortableTable('durability-prices', PRICE_COLUMNS, prices),
    `<p>${escapeHtml(COMPRESSED_AWAY_NOTE)}.</p>`,
    ...(idempotencyNote(result) ? [`<p>${escapeHtml(idempotencyNote(result)!)}.</p>`] : []),
    '</section>',
  ].join('\n');
}

/** Charts shown with the verdict and the distance tables rather than among the others. */
const VERDICT_CHARTS = /^(recall-vs-tokens|recall-by-distance-)/u;

/** The first screen: the recall-vs-tokens chart beside the run's recommendations, then every leaderboard. */
function verdictSection(result: RunResult, specs: readonly ChartSpec[]): string {
  const pooled = leaderboards(result);
  // Each recommendation in one short line; the account behind it one click away.
  const list = (items: readonly { text: string; detail?: string }[]): string =>
    `<ul class="recommendations">${items.map((item) => `<li>${escapeHtml(item.text)}${item.detail ? `<details><summary>details</summary>${escapeHtml(item.detail)}</details>` : ''}</li>`).join('')}</ul>`;
  const boards = pooled.map(({ title, board, cells }, index) => {
    const byLabel = title.startsWith('group ') ? labelTable(cells) : undefined;
    const labelHtml = byLabel
      ? `\n<h4>${escapeHtml(title)} by the dataset's own category</h4>\n${sortableTable(
          `categories-${index}`,
          byLabel.head,
          byLabel.body.map((row) => row.map((text, column): Column => ({ title: byLabel.head[column]!, text }))),
        )}`
      : '';
    const head = leaderboardHead(board);
    const rows = leaderboardCells(board).map((cells, row): Column[] =>
      cells.map((text, column) => {
        const sort = leaderboardSortKeys(board.rows[row]!)[column];
        return { title: head[column]!, text, ...(sort !== undefined ? { sort } : {}) };
      }),
    );
    return `<h3>Leaderboard — ${escapeHtml(title)}</h3>\n${sortableTable(`leaderboard-${index}`, head, rows)}${labelHtml}${index > 0 ? `\n${list(board.recommendations)}` : ''}`;
  });
  const chartSpec = specs.find((spec) => spec.id === 'recall-vs-tokens');
  const top = `<div class="verdict-top">${chartSpec ? chartFigures([chartSpec]) : ''}<div><h3>Recommendations (${escapeHtml(pooled[0]?.title ?? 'run')})</h3>${list(pooled[0]?.board.recommendations ?? [])}</div></div>`;
  const modes = modeRows(result);
  const modeTable =
    modes.length > 1
      ? `<h3>${escapeHtml(MODE_TABLE_TITLE)}</h3>\n${sortableTable(
          'modes',
          MODE_COLUMNS,
          modes.map((row) => row.map((text, column): Column => ({ title: MODE_COLUMNS[column]!, text }))),
        )}\n<p class="note">${escapeHtml(MODE_TABLE_NOTE)}</p>`
      : '';
  return `<section id="verdict">\n${top}\n${boards.join('\n')}\n<p class="note">${escapeHtml(LEADERBOARD_NOTE)}</p>\n${modeTable}\n</section>`;
}

/** Recall by distance: the tables and their charts (absent when no probe has a distance). */
function distanceSection(result: RunResult, specs: readonly ChartSpec[]): string {
  const tables = distanceTables(result);
  if (tables.length === 0) return '';
  const parts = tables.map(({ unit, rows }) => {
    const { head, body } = distanceTable(rows);
    const spec = specs.find((item) => item.id === `recall-by-distance-${unit}`);
    return `<h3>Context recall by distance (${unit})</h3>\n${spec ? chartFigures([spec]) : ''}\n${sortableTable(
      `distance-${unit}`,
      head,
      body.map((row) => row.map((text, column): Column => ({ title: head[column]!, text }))),
    )}`;
  });
  return `<section id="distance">\n<h2>Recall by distance</h2>\n${parts.join('\n')}\n</section>`;
}

/** The interview answers, in both languages, from this run's figures. */
function explainSection(result: RunResult): string {
  const languages = (['en', 'zh'] as const).map((lang) => {
    const answers = explainRun(result, lang).map(
      (answer) =>
        `<h4>${escapeHtml(answer.question)}</h4><ul>${answer.sentences.map((sentence) => `<li>${escapeHtml(sentence)}</li>`).join('')}</ul>`,
    );
    return `<div lang="${lang === 'zh' ? 'zh-Hans' : 'en'}"><h3>${lang === 'en' ? 'Interview answers from this run' : '用本次运行的数据回答面试题'}</h3>${answers.join('\n')}</div>`;
  });
  return `<section id="explain">\n<h2>Explain</h2>\n<details><summary>Answers, citing this run's figures (English · 中文)</summary>\n${languages.join('\n')}\n</details>\n</section>`;
}

function runHeader(result: RunResult): string {
  const { header } = result;
  const items: [string, string][] = [
    ['membench', `${header.membenchVersion}${header.gitCommit ? ` (commit ${header.gitCommit.slice(0, 12)})` : ''}`],
    ['node', `${header.nodeVersion} on ${header.platform}`],
    ['model', header.model],
    ['embedder', header.embedder],
    ['tokenizer', `${header.tokenizer.encoding} (for ${header.tokenizer.model})`],
    ['seed / trials', `${header.seed} / ${header.trials}`],
    ['started', `${header.startedAt}, took ${(header.durationMs / 1000).toFixed(1)} s`],
    ['cells', `${result.cells.length} (${cellsByStatus(result.cells).errors.length} errored)`],
    ['strategies', header.strategies.map((strategy) => strategy.setting).join(', ')],
    ['scenarios', header.scenarios.map((scenario) => `${scenario.name} (${scenario.steps} steps)`).join(', ')],
  ];
  return `<dl class="run-header">${items.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join('')}</dl>`;
}

function chartFigures(specs: readonly ChartSpec[]): string {
  return specs
    .map(
      (spec) =>
        `<figure class="chart" style="max-width:${spec.width}px"><canvas id="chart-${escapeHtml(spec.id)}" width="${spec.width}" height="${spec.height}" role="img" aria-label="${escapeHtml(spec.title)}"></canvas></figure>`,
    )
    .join('\n');
}

/** Judges, judged accuracy, agreement and errata ceilings; the answers two judges disagree on, collapsed. */
function judgingSection(result: RunResult): string {
  const tables = judgingTables(result);
  if (tables.length === 0) return '';
  const parts = tables.map(
    ({ title, note, head, body }, index) =>
      `<h3>${escapeHtml(title)}</h3>\n<p class="note">${escapeHtml(note)}</p>\n${sortableTable(
        `judging-${index}`,
        head,
        body.map((row) => row.map((text, column): Column => ({ title: head[column]!, text }))),
      )}`,
  );
  const disagreeing = judgeDisagreements(result);
  if (disagreeing) {
    const head = ['cell', 'category', 'question', 'gold', 'response', disagreeing.a, disagreeing.b];
    const rows = disagreeing.items.map((item) =>
      [item.cell, item.category, item.question, item.gold, item.response, item.a, item.b].map(
        (text, column): Column => ({ title: head[column]!, text }),
      ),
    );
    parts.push(
      `<details><summary>${disagreeing.items.length} answers on which ${escapeHtml(disagreeing.a)} and ${escapeHtml(disagreeing.b)} disagree</summary>\n${sortableTable('judge-disagreements', head, rows)}\n</details>`,
    );
  }
  return `<section id="judging">\n<h2>Judging</h2>\n${parts.join('\n')}\n</section>`;
}

/** The dataset files imported: a line each, the examples of what was skipped and repaired collapsed under it. */
function importSection(result: RunResult): string {
  const imports = runImports(result);
  if (imports.length === 0) return '';
  const items = imports.map((summary) => {
    const examples = importExamples(summary);
    return `<li>${escapeHtml(importLine(summary))}${
      examples.length > 0
        ? `<details><summary>examples</summary><ul>${examples.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul></details>`
        : ''
    }</li>`;
  });
  return `<section id="import">\n<h2>Import</h2>\n<p class="note">${escapeHtml(IMPORT_NOTE)}</p>\n<ul>${items.join('\n')}</ul>\n</section>`;
}

/** The whole report as one HTML string (pure apart from reading chart.js once). */
export function renderHtml(result: RunResult): string {
  assertRunResult(result, 'renderHtml');
  const specs = chartSpecs(result);
  const probes = cellsByStatus(result.cells).ok.reduce((sum, cell) => sum + cell.probes.length, 0);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>membench report — ${escapeHtml(result.header.startedAt)}</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>membench report</h1>
<p class="note">${escapeHtml(modelNote(result))} ${escapeHtml(modelDependenceNote(result))}</p>
</header>
<main>
${verdictSection(result, specs)}
${judgingSection(result)}
${importSection(result)}
${distanceSection(result, specs)}
<section id="charts">
<h2>More charts</h2>
${chartFigures(specs.filter((spec) => !VERDICT_CHARTS.test(spec.id))) || '<p>No chart: the run has no measured cell.</p>'}
</section>
${durabilitySection(result)}
${explainSection(result)}
<section id="categories">
<h2>Recall by probe category</h2>
${categoryTable(result)}
</section>
${retrievalSection(result)}
<section id="summary">
<h2>Per cell</h2>
<details><summary>${result.cells.length} cells: tokens, recall, latency per scenario × strategy setting (click a column header to sort)</summary>
${summaryTable(result)}
</details>
${interleavingNote(result) ? `<p class="note">${escapeHtml(interleavingNote(result)!)}</p>` : ''}
</section>
<section id="run">
<h2>Run</h2>
${runHeader(result)}
</section>
<section id="probes">
<h2>Probes</h2>
<details><summary>${probes} probe answers</summary>
${probeTable(result)}
</details>
</section>
</main>
<script>${chartJs()}</script>
<script type="application/json" id="membench-charts">${inlineJson(specs)}</script>
<script>${CLIENT_SCRIPT}</script>
</body>
</html>
`;
}
