/** A comparison as console text (pure: no colours, fits a terminal), and the lists both renderings share. */
import Table from 'cli-table3';
import { visibleControls } from '../harness/core/text.js';
import { wrapText } from './layout.js';
import type { Comparison, MetricCheck } from './compare-types.js';

/** True when head regressed anywhere: the CLI exits 1. */
export const hasRegression = (comparison: Comparison): boolean => comparison.regressions.length > 0;

/** Checks of cells with this verdict, with their cell. */
const withVerdict = (comparison: Comparison, verdict: MetricCheck['verdict']) =>
  comparison.cells.flatMap((cell) =>
    cell.checks.filter((check) => check.verdict === verdict).map((check) => ({ cell: cell.id, check })),
  );

/** Checks flagged as within noise, with their cell: shown so a reader sees why a slowdown passed. */
export const noiseChecks = (comparison: Comparison): { cell: string; check: MetricCheck }[] =>
  withVerdict(comparison, 'noise');

/** Figures of nondeterministic cells that would have failed or been noise: shown, never gated. */
export const ungatedChecks = (comparison: Comparison): { cell: string; check: MetricCheck }[] =>
  withVerdict(comparison, 'ungated');

/** The reason and figures of a check on one line: `cell metric change (base → head): note`. */
export const checkLine = ({ cell, check }: { cell: string; check: MetricCheck }): string =>
  `${cell} ${check.metric} ${check.change} (${check.base} → ${check.head}): ${check.note ?? ''}`;

/** One line: the verdict with counts. */
export function comparisonHeadline(comparison: Comparison): string {
  const regressedCells = new Set(comparison.regressions.map((item) => item.cell)).size;
  const counts = `${comparison.cells.length} cells compared, ${comparison.removed.length} missing, ${comparison.added.length} new, ${comparison.errored.length} in error`;
  return hasRegression(comparison)
    ? `REGRESSION: ${comparison.regressions.length} regressed metric(s) in ${regressedCells} cell(s) (${counts})`
    : `OK: no regression (${counts})`;
}

/** The thresholds line both renderings open with. */
export function thresholdsLine(comparison: Comparison): string {
  const { thresholds } = comparison;
  return (
    `thresholds: recall drop ≤ ${thresholds.maxRecallDrop}, token increase ≤ ${(thresholds.maxTokenIncrease * 100).toFixed(0)}%, ` +
    (thresholds.latency
      ? `load/save time ratio ≤ ${thresholds.maxLatencyRatio} (a slowdown fails when its whole interval, each run divided by its own calibration, lies above it; false alarms ≤ ${thresholds.latencyFalseAlarm * 100}% of comparisons; p50 differences < ${thresholds.minLatencyMs} ms are noise)`
      : 'latency not compared') +
    ', no new invariant violation, no new error'
  );
}

/** The console text of a comparison; control characters in its names (a group, a setting) as their escapes, as the run's summary writes them. */
export function renderComparison(comparison: Comparison): string {
  // Prose is cut to the terminal tables' width (the thresholds line alone ran past 120 columns).
  const lines: string[] = [wrapText(thresholdsLine(comparison))];
  for (const note of comparison.notes) lines.push(wrapText(`note: ${note}`));
  const rows = (items: readonly { cell: string; check: MetricCheck }[]) => {
    const table = new Table({
      head: ['cell', 'metric', 'base', 'head', 'change', 'limit'],
      style: { head: [], border: [], compact: true },
    });
    // Escaped before cli-table3 measures them, so the columns fit what is printed.
    for (const { cell, check } of items)
      table.push([cell, check.metric, check.base, check.head, check.change, check.limit].map(visibleControls));
    return table.toString();
  };
  if (comparison.regressions.length) {
    lines.push('Regressions:', rows(comparison.regressions));
    const explained = comparison.regressions.filter(({ check }) => check.note);
    if (explained.length) lines.push('Why:', ...explained.map((item) => `  ${checkLine(item)}`));
  }
  const noise = noiseChecks(comparison);
  if (noise.length) lines.push('Within noise (not regressions):', ...noise.map((item) => `  ${checkLine(item)}`));
  const ungated = ungatedChecks(comparison);
  if (ungated.length)
    lines.push(
      'Not gated (nondeterministic cells: only invariants, losses and errors are gated):',
      ...ungated.map((item) => `  ${checkLine(item)}`),
    );
  const retrieval = comparison.cells.flatMap((cell) =>
    cell.checks.filter((check) => check.metric.startsWith('retrieval ')).map((check) => ({ cell: cell.id, check })),
  );
  if (retrieval.length) {
    const changed = retrieval.filter(({ check }) => check.verdict === 'improved' || check.verdict === 'regression');
    lines.push(
      `Retrieval by level and probe category: ${retrieval.length} figures compared, ${changed.length} changed${changed.length ? ':' : ''}`,
    );
    if (changed.length) lines.push(rows(changed));
  }
  if (comparison.overall.length)
    lines.push(
      'Overall (cells measured in both runs):',
      rows(comparison.overall.map((check) => ({ cell: 'overall', check }))),
    );
  const allowed = comparison.thresholds.allowMissing ? ' (allowed by --allow-missing)' : '';
  if (comparison.added.length) lines.push(`New (only in head, not compared): ${comparison.added.join(', ')}`);
  if (comparison.removed.length) lines.push(`Missing (only in base)${allowed}: ${comparison.removed.join(', ')}`);
  if (comparison.errored.length) lines.push(`In error in head${allowed}: ${comparison.errored.join(', ')}`);
  lines.push(comparisonHeadline(comparison));
  return visibleControls(lines.join('\n'));
}
