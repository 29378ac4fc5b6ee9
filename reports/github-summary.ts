/** Markdown for a GitHub Actions job page (GITHUB_STEP_SUMMARY): a run's outcome, or a comparison. */
import { appendFile } from 'node:fs/promises';
import { fileSystemProblem } from '../harness/core/errors.js';
import type { RunResult } from '../harness/results/schema.js';
import { checkLine, comparisonHeadline, noiseChecks, thresholdsLine, ungatedChecks } from './compare-render.js';
import type { Comparison, MetricCheck } from './compare-types.js';
import { cellVerdict, emptyRunFailure, verdictFails, type VerdictOptions } from './junit.js';
import {
  cellLabel,
  markdownCode,
  markdownLine,
  markdownTable,
  modelNote,
  summaryNotes,
  summaryRow,
} from './summary.js';
import { leaderboardCells, leaderboardHead, leaderboards } from './verdict.js';

export { markdownTable } from './summary.js';

/** The short run summary: one row per cell and the cells that failed (errors, invariants, recall threshold). */
export function renderRunStepSummary(result: RunResult, options: VerdictOptions = {}): string {
  const verdicts = result.cells.map((cell) => ({ cell, verdict: cellVerdict(cell, options) }));
  const failing = verdicts.filter(({ verdict }) => verdictFails(verdict));
  const notes = summaryNotes(result);
  const { header } = result;
  const empty = emptyRunFailure(result, options);
  return [
    `## membench run: ${empty !== undefined ? `failed: ${markdownLine(empty)}` : failing.length ? `${failing.length} of ${result.cells.length} cells failed` : `${result.cells.length} cells passed`}`,
    '',
    `model \`${header.model}\` · tokenizer ${header.tokenizer.encoding} · seed ${header.seed} · membench ${header.membenchVersion}${header.gitCommit ? ` (${header.gitCommit.slice(0, 12)})` : ''}` +
      (options.recallThreshold !== undefined ? ` · recall threshold ${options.recallThreshold}` : ''),
    '',
    ...leaderboards(result).flatMap(({ title, board }) => [
      `### Leaderboard — ${markdownLine(title)}`,
      '',
      markdownTable(leaderboardHead(board), leaderboardCells(board)),
      '',
      ...board.recommendations.map((item) => `- ${markdownLine(item.text)}`),
      '',
    ]),
    markdownTable(
      [
        'scenario',
        'strategy',
        'ctx tokens',
        'context recall',
        'stale exposure',
        'answer acc',
        'load p50 ms',
        'save p50 ms',
        'status',
      ],
      // A group's cells are pooled in its leaderboard above; listed one by one only when they fail.
      verdicts
        .filter(({ cell }) => cell.group === undefined && !cell.pricing)
        .map(({ cell, verdict }) => {
          // An error cell's row holds no figures (summaryRow shows them as –).
          const row = summaryRow(cell);
          return [
            row.scenario,
            cellLabel(cell),
            String(row.contextTotal),
            row.recall,
            row.stale,
            row.answer,
            row.loadP50,
            row.saveP50,
            // The verdict, as junit.xml and the exit code see it: a finished cell can still fail.
            verdict.error !== undefined ? 'error' : verdict.failures.length > 0 ? 'failed' : 'ok',
          ];
        }),
    ),
    '',
    ...(failing.length
      ? [
          '### Failed cells',
          '',
          ...failing.map(
            ({ cell, verdict }) =>
              `- ${markdownCode(cell.id)}: ${markdownLine([...(verdict.error !== undefined ? [`error: ${verdict.error}`] : []), ...verdict.failures].join('; '))}`,
          ),
          '',
        ]
      : []),
    ...notes.map((note) => `- ${markdownLine(note)}`),
    ...(notes.length ? [''] : []),
    `> ${modelNote(result)}`,
    '',
  ].join('\n');
}

const checkRow = (cell: string, check: MetricCheck): string[] => [
  cell,
  check.metric,
  check.base,
  check.head,
  check.change,
  check.limit,
];

/** A comparison as Markdown: verdict first, then regressions, noise, totals and added/removed cells. */
export function renderComparisonMarkdown(comparison: Comparison, names: { base: string; head: string }): string {
  const head = ['cell', 'metric', 'base', 'head', 'change', 'limit'];
  const noise = noiseChecks(comparison);
  const ungated = ungatedChecks(comparison);
  const explained = comparison.regressions.filter(({ check }) => check.note);
  return [
    `## membench compare: ${comparisonHeadline(comparison)}`,
    '',
    `base ${markdownCode(names.base)} → head ${markdownCode(names.head)}`,
    '',
    `> ${thresholdsLine(comparison)}`,
    '',
    ...comparison.notes.map((note) => `> note: ${markdownLine(note)}`),
    ...(comparison.notes.length ? [''] : []),
    ...(comparison.regressions.length
      ? [
          '### Regressions',
          '',
          markdownTable(
            head,
            comparison.regressions.map(({ cell, check }) => checkRow(cell, check)),
          ),
          '',
          // Why each one failed: a latency's interval and floors, a recall's paired test, nothing measured.
          ...explained.map((item) => `- ${markdownLine(checkLine(item))}`),
          ...(explained.length ? [''] : []),
        ]
      : []),
    ...(noise.length
      ? ['### Within noise (not regressions)', '', ...noise.map((item) => `- ${markdownLine(checkLine(item))}`), '']
      : []),
    ...(ungated.length
      ? [
          '### Not gated (nondeterministic cells: only invariants, losses and errors are gated)',
          '',
          ...ungated.map((item) => `- ${markdownLine(checkLine(item))}`),
          '',
        ]
      : []),
    ...(comparison.overall.length
      ? [
          '### Overall',
          '',
          markdownTable(
            head,
            comparison.overall.map((check) => checkRow('overall', check)),
          ),
          '',
        ]
      : []),
    ...(comparison.added.length ? [`New (only in head): ${comparison.added.map(markdownCode).join(', ')}`, ''] : []),
    ...(comparison.removed.length
      ? [`Missing (only in base): ${comparison.removed.map(markdownCode).join(', ')}`, '']
      : []),
  ].join('\n');
}

/** Appends to the step summary file when there is one (`GITHUB_STEP_SUMMARY`); returns whether it wrote. */
export async function appendStepSummary(
  markdown: string,
  file: string | undefined = process.env.GITHUB_STEP_SUMMARY,
): Promise<boolean> {
  if (!file) return false;
  try {
    await appendFile(file, markdown.endsWith('\n') ? markdown : `${markdown}\n`, 'utf8');
  } catch (error) {
    // Named as the variable that points there: the user gave no path of their own.
    throw (
      fileSystemProblem(error, `--github-summary appends to $GITHUB_STEP_SUMMARY (${file}): point it at a file`) ??
      error
    );
  }
  return true;
}
