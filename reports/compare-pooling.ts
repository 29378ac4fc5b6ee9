/**
 * Figures pooled over several cells before they are checked: a scenario group's cells of one
 * setting (a dataset file, a generated suite) as one unit, and the whole run overall and per probe
 * category, recall always paired probe by probe.
 */
import type { Rate } from '../harness/core/metrics.js';
import { errorCells, newErrors, okPairs } from '../harness/results/cells.js';
import type { CellResult, Mean, OkCell, ProbeRecord, RecallSummary } from '../harness/results/schema.js';
import { seedOf } from '../harness/results/stats.js';
import { meanCheck, recallCheck, tokenCheck, type Outcomes } from './compare-checks.js';
import { signed, type CompareThresholds, type MetricCheck } from './compare-types.js';

/** Context recall outcomes of the cells' probes, keyed by cell and step. */
export function outcomesOf(
  cells: readonly OkCell[],
  pick: (cell: OkCell) => readonly ProbeRecord[] = (cell) => cell.probes,
): Outcomes {
  return new Map(
    cells.flatMap((cell) =>
      pick(cell).flatMap((probe) =>
        probe.contextRecall === undefined ? [] : [[`${cell.id}|${probe.step}`, probe.contextRecall] as const],
      ),
    ),
  );
}

/** The summaries of a figure pooled over cells: overall, or for one probe category. */
type Pick = (cell: OkCell) => RecallSummary | undefined;
const sumRates = (cells: readonly OkCell[], pick: Pick = (cell) => cell.recall): Rate => {
  const summaries = cells.flatMap((cell) => pick(cell) ?? []);
  const n = summaries.reduce((sum, summary) => sum + summary.contextRecall.n, 0);
  const hits = summaries.reduce((sum, summary) => sum + summary.contextRecall.hits, 0);
  return { n, hits, value: n ? hits / n : null };
};
const poolMeans = (cells: readonly OkCell[], pick: Pick = (cell) => cell.recall): Mean => {
  const means = cells.flatMap((cell) => pick(cell)?.evidenceRecall ?? []).filter((mean) => mean.mean !== null);
  const n = means.reduce((sum, mean) => sum + mean.n, 0);
  return { n, mean: n ? means.reduce((sum, mean) => sum + mean.mean! * mean.n, 0) / n : null };
};
const sumOf = (cells: readonly OkCell[], read: (cell: OkCell) => number): number =>
  cells.reduce((sum, cell) => sum + read(cell), 0);

/** Context recall paired by probe, evidence recall and both token totals of cells pooled. */
function pooledChecks(
  base: readonly OkCell[],
  head: readonly OkCell[],
  thresholds: CompareThresholds,
  seed: number,
): { recall: MetricCheck[]; tokens: MetricCheck[] } {
  return {
    recall: [
      recallCheck('context recall', sumRates(base), sumRates(head), thresholds.maxRecallDrop, {
        base: outcomesOf(base),
        head: outcomesOf(head),
        seed,
      }),
      ...(poolMeans(base).n > 0 || poolMeans(head).n > 0
        ? [meanCheck('evidence recall', poolMeans(base), poolMeans(head), thresholds.maxRecallDrop)]
        : []),
    ],
    tokens: [
      tokenCheck(
        'context tokens',
        sumOf(base, (cell) => cell.tokens.contextTotal),
        sumOf(head, (cell) => cell.tokens.contextTotal),
        thresholds.maxTokenIncrease,
      ),
      tokenCheck(
        'maintenance tokens',
        sumOf(base, (cell) => cell.tokens.maintenance),
        sumOf(head, (cell) => cell.tokens.maintenance),
        thresholds.maxTokenIncrease,
      ),
    ],
  };
}

/** A group's cells of one setting, pooled: new errors, recall paired by question, evidence, tokens. */
export function compareUnit(
  base: readonly CellResult[],
  head: readonly CellResult[],
  thresholds: CompareThresholds,
): MetricCheck[] {
  const errors = (cells: readonly CellResult[]) => errorCells(cells).length;
  const matched = base.map((cell, index) => [cell, head[index]!] as const);
  const failed = newErrors(matched).length > 0 || (!thresholds.allowMissing && errors(head) > 0);
  const checks: MetricCheck[] = [
    {
      metric: 'errored questions',
      base: String(errors(base)),
      head: String(errors(head)),
      change: signed(errors(head) - errors(base), 0),
      limit: thresholds.allowMissing ? 'no new error' : 'no error (--allow-missing to pass old ones)',
      verdict: failed ? 'regression' : errors(head) < errors(base) ? 'improved' : 'ok',
    },
  ];
  const pairs = okPairs(matched);
  if (pairs.length === 0) return checks;
  const pooled = pooledChecks(
    pairs.map(([a]) => a),
    pairs.map(([, b]) => b),
    thresholds,
    seedOf(base[0]!.id),
  );
  return [...checks, ...pooled.recall, ...pooled.tokens];
}

/** Context and evidence recall pooled per probe category over the cells both runs measured. */
function categoryChecks(baseSide: readonly OkCell[], headSide: readonly OkCell[], limit: number): MetricCheck[] {
  const categories = [
    ...new Set([...baseSide, ...headSide].flatMap((cell) => Object.keys(cell.recallByCategory))),
  ].sort() as (keyof OkCell['recallByCategory'])[];
  return categories.flatMap((category) => {
    const pick: Pick = (cell) => cell.recallByCategory[category];
    const ofCategory = (cell: OkCell) => cell.probes.filter((probe) => probe.category === category);
    const checks = [
      recallCheck(`context recall [${category}]`, sumRates(baseSide, pick), sumRates(headSide, pick), limit, {
        base: outcomesOf(baseSide, ofCategory),
        head: outcomesOf(headSide, ofCategory),
        seed: seedOf(category),
      }),
    ];
    const base = poolMeans(baseSide, pick);
    const head = poolMeans(headSide, pick);
    if (base.n > 0 || head.n > 0) checks.push(meanCheck(`evidence recall [${category}]`, base, head, limit));
    return checks.filter((check) => check.verdict !== 'n/a');
  });
}

/** The run's totals over the cells both runs measured (ok in both), overall and per probe category. */
export function overallChecks(
  baseSide: readonly OkCell[],
  headSide: readonly OkCell[],
  thresholds: CompareThresholds,
): MetricCheck[] {
  if (baseSide.length === 0) return [];
  const pooled = pooledChecks(baseSide, headSide, thresholds, seedOf('overall'));
  return [...pooled.recall, ...categoryChecks(baseSide, headSide, thresholds.maxRecallDrop), ...pooled.tokens];
}
