/**
 * The checks of one figure against its limit: recall (paired by probe), means, exposures, tokens,
 * retrieval at each k, invariants and durability losses. Each returns a MetricCheck; none knows
 * about cells or pooling.
 */
import type { Rate } from '../harness/core/metrics.js';
import {
  invariantName,
  type CellResult,
  type OkCell,
  type Mean,
  type RetrievalLevel,
  type RetrievalSummary,
} from '../harness/results/schema.js';
import { NOISE_P, pairedRates } from '../harness/results/stats.js';
import { cellInvariants } from '../harness/results/durability-matrix.js';
import { formatMean, formatRate } from './summary.js';
import { EPSILON, percent, signed, type MetricCheck } from './compare-types.js';

/** Context recall outcomes of the probes two runs both answered, keyed by cell and step. */
export type Outcomes = Map<string, boolean>;

/** What a figure that base measured and head did not is: a regression (a gate never passes on nothing measured). */
const NOTHING_MEASURED = 'head measured nothing where base did (no probe scored)';

/**
 * A recall drop beyond `limit` is a regression when the paired test on the probes both runs
 * answered says head is behind (exact McNemar, p < 0.05); a drop the test cannot tell from
 * chance is "within noise". Without paired probes the fixed drop decides alone.
 */
export function recallCheck(
  metric: string,
  base: Rate,
  head: Rate,
  limit: number,
  pairs?: { base: Outcomes; head: Outcomes; seed: number },
): MetricCheck {
  const shown = {
    metric,
    base: formatRate(base),
    head: formatRate(head),
    limit: `drop ≤ ${limit.toFixed(2)} and paired p < ${NOISE_P}`,
  };
  if (base.value !== null && head.value === null)
    return { ...shown, change: '–', verdict: 'regression', note: NOTHING_MEASURED };
  if (base.value === null || head.value === null)
    return { ...shown, change: '–', verdict: 'n/a', note: 'no probe to compare' };
  const change = head.value - base.value;
  if (-change <= limit + EPSILON)
    return { ...shown, change: signed(change), verdict: change > EPSILON ? 'improved' : 'ok' };
  const keys = pairs ? [...pairs.head.keys()].filter((key) => pairs.base.has(key)) : [];
  const test =
    pairs && keys.length > 0
      ? pairedRates(
          keys.map((key) => pairs.head.get(key)!),
          keys.map((key) => pairs.base.get(key)!),
          pairs.seed,
        )
      : null;
  // Outcomes that did not change cannot explain a changed rate (edited files): the fixed drop decides.
  if (!test || test.difference === 0) return { ...shown, change: signed(change), verdict: 'regression' };
  const interval = `${signed(change)} [${signed(test.interval.lo)}, ${signed(test.interval.hi)}]`;
  const paired = `paired on ${test.n} probes, McNemar p=${test.p.toFixed(3)}`;
  return test.verdict === 'behind'
    ? { ...shown, change: interval, verdict: 'regression', note: paired }
    : { ...shown, change: interval, verdict: 'noise', note: `within noise: ${paired}` };
}

export function meanCheck(metric: string, base: Mean, head: Mean, limit: number): MetricCheck {
  const shown = { metric, base: formatMean(base), head: formatMean(head), limit: `drop ≤ ${limit.toFixed(2)}` };
  if (base.mean !== null && head.mean === null)
    return { ...shown, change: '–', verdict: 'regression', note: NOTHING_MEASURED };
  if (base.mean === null || head.mean === null)
    return { ...shown, change: '–', verdict: 'n/a', note: 'no probe to compare' };
  const change = head.mean - base.mean;
  const verdict = -change > limit + EPSILON ? 'regression' : change > EPSILON ? 'improved' : 'ok';
  return { ...shown, change: signed(change), verdict };
}

/** An exposure (lower is better) that must not rise by more than `limit`. */
export function exposureCheck(metric: string, base: Rate, head: Rate, limit: number): MetricCheck {
  const shown = { metric, base: formatRate(base), head: formatRate(head), limit: `rise ≤ ${limit.toFixed(2)}` };
  if (base.value !== null && head.value === null)
    return { ...shown, change: '–', verdict: 'regression', note: NOTHING_MEASURED };
  if (base.value === null || head.value === null)
    return { ...shown, change: '–', verdict: 'n/a', note: 'no probe to compare' };
  const change = head.value - base.value;
  const verdict = change > limit + EPSILON ? 'regression' : change < -EPSILON ? 'improved' : 'ok';
  return { ...shown, change: signed(change), verdict };
}

export function tokenCheck(metric: string, base: number, head: number, limit: number): MetricCheck {
  const growth = base === 0 ? (head === 0 ? 0 : Infinity) : (head - base) / base;
  const verdict = growth > limit + EPSILON ? 'regression' : growth < -EPSILON ? 'improved' : 'ok';
  return {
    metric,
    base: String(base),
    head: String(head),
    change: percent(growth),
    limit: `≤ +${(limit * 100).toFixed(0)}%`,
    verdict,
  };
}

const RETRIEVAL_METRICS = [
  ['recallAny', 'recall_any'],
  ['recallAll', 'recall_all'],
  ['ndcg', 'NDCG'],
] as const;

/** One retrieval level of one category: each metric at each k both runs measured, a drop over `limit` (absolute) regressing. */
function retrievalLevelChecks(scope: string, base: RetrievalLevel, head: RetrievalLevel, limit: number): MetricCheck[] {
  return head.atK.flatMap((after) => {
    const before = base.atK.find((item) => item.k === after.k);
    if (!before) return [];
    return RETRIEVAL_METRICS.map(([key, name]): MetricCheck => {
      const change = after[key] - before[key];
      const verdict = -change > limit + EPSILON ? 'regression' : change > EPSILON ? 'improved' : 'ok';
      return {
        metric: `retrieval ${name}@${after.k} (${scope})`,
        base: `${before[key].toFixed(2)} (n=${base.n})`,
        head: `${after[key].toFixed(2)} (n=${head.n})`,
        change: signed(change),
        limit: `drop ≤ ${limit.toFixed(2)}`,
        verdict,
      };
    });
  });
}

/** Retrieval figures by level and probe category (overall first), for cells that retrieve in both runs. */
export function retrievalChecks(base: OkCell, head: OkCell, limit: number): MetricCheck[] {
  if (base.retrieval && base.retrieval.turn.n > 0 && (!head.retrieval || head.retrieval.turn.n === 0))
    return [
      {
        metric: 'retrieval',
        base: `${base.retrieval.turn.n} probes ranked`,
        head: 'none',
        change: '–',
        limit: 'measured in head',
        verdict: 'regression',
        note: 'head ranked no probe where base did',
      },
    ];
  if (!base.retrieval || !head.retrieval) return [];
  const groups: [string, RetrievalSummary, RetrievalSummary][] = [['all probes', base.retrieval, head.retrieval]];
  for (const [category, after] of Object.entries(head.retrievalByCategory ?? {})) {
    const before = base.retrievalByCategory?.[category as keyof typeof base.retrievalByCategory];
    if (before && after) groups.push([category, before, after]);
  }
  return groups.flatMap(([category, before, after]) => [
    ...retrievalLevelChecks(`turn, ${category}`, before.turn, after.turn, limit),
    ...(before.session && after.session
      ? retrievalLevelChecks(`session, ${category}`, before.session, after.session, limit)
      : []),
  ]);
}

/** Each invariant either run violated: a violation base did not have is a regression. */
export function invariantChecks(base: CellResult, head: CellResult): MetricCheck[] {
  const before = new Map(cellInvariants(base).map((outcome) => [outcome.invariant, outcome.violations]));
  return cellInvariants(head)
    .filter((outcome) => outcome.violations > 0 || (before.get(outcome.invariant) ?? 0) > 0)
    .map((outcome) => {
      const previous = before.get(outcome.invariant) ?? 0;
      const verdict =
        outcome.violations > 0 && previous === 0 ? 'regression' : outcome.violations < previous ? 'improved' : 'ok';
      return {
        metric: `invariant ${invariantName(outcome.invariant)}`,
        base: `${previous} violation(s)`,
        head: `${outcome.violations} violation(s)`,
        change: signed(outcome.violations - previous, 0),
        limit: 'no new violation',
        verdict,
      };
    });
}

/** Durability counts that are losses: what a crash or a concurrent writer took away. */
const LOSSES = [
  'acknowledgedLost',
  'messagesLost',
  'lostUpdates',
  'tornFiles',
  'indexMismatches',
  'pendingJobsLost',
  'effectsDuplicated',
  'staleOverwrites',
] as const;

/** The cell's durability losses summed: a loss where base had none is a regression (as an invariant's first violation). */
export function lossesCheck(base: CellResult, head: CellResult): MetricCheck[] {
  if (!base.durabilityOutcome && !head.durabilityOutcome) return [];
  const total = (cell: CellResult) => LOSSES.reduce((sum, key) => sum + (cell.durabilityOutcome?.counts[key] ?? 0), 0);
  const [before, after] = [total(base), total(head)];
  return [
    {
      metric: 'durability losses',
      base: String(before),
      head: String(after),
      change: signed(after - before, 0),
      limit: 'no new loss',
      verdict: after > 0 && before === 0 ? 'regression' : after < before ? 'improved' : 'ok',
    },
  ];
}
