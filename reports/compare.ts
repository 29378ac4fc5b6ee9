/**
 * `compare`: two runs matched cell by cell (by cell id), each metric checked against a threshold,
 * regressions named by cell and metric. Pure functions of the two results.
 *
 * Latency rule: a p50 ratio (head/base) above `maxLatencyRatio` is a regression only when it is
 * not within noise, i.e. when the p50s differ by at least `minLatencyMs` AND head's p50 lies above
 * base's p95 (outside the spread base itself showed). Otherwise it is reported as "within noise".
 */
import Table from 'cli-table3';
import type { Distribution, Rate } from '../harness/core/metrics.js';
import {
  invariantName,
  type CellResult,
  type Mean,
  type ProbeRecord,
  type RecallSummary,
  type RetrievalLevel,
  type RetrievalSummary,
  type RunHeader,
  type RunResult,
} from '../harness/results/schema.js';
import { NOISE_P, pairedRates, seedOf } from '../harness/results/stats.js';
import { cellInvariants } from '../harness/results/durability-matrix.js';
import { formatMean, formatMs, formatRate } from './summary.js';
import { MembenchError } from '../harness/core/errors.js';
import { repeatedCellId } from '../harness/results/read.js';

/** The gates a head run must pass against its base. */
export interface CompareThresholds {
  /** Largest allowed drop of context recall, absolute (0.05 = five points). */
  maxRecallDrop: number;
  /** Largest allowed growth of context or maintenance tokens, relative (0.10 = +10%). */
  maxTokenIncrease: number;
  /** Largest allowed head/base ratio of a p50 latency before noise is considered. */
  maxLatencyRatio: number;
  /** p50 differences below this many ms are always noise. */
  minLatencyMs: number;
  /**
   * True compares latency, false skips it; `same-machine` (the default) compares it only when both
   * headers name the same machine: a baseline timed elsewhere (the committed one) says nothing
   * about this machine's speed, so its slowdowns would be false regressions.
   */
  latency: boolean | 'same-machine';
  /**
   * False (the default): a base cell missing from head, or a head cell in error, is a regression,
   * so a CI run that crashed half-way never reads as "OK". True lists them without failing.
   */
  allowMissing: boolean;
}

export const DEFAULT_THRESHOLDS: CompareThresholds = {
  maxRecallDrop: 0.05,
  maxTokenIncrease: 0.1,
  maxLatencyRatio: 2,
  minLatencyMs: 1,
  latency: 'same-machine',
  allowMissing: false,
};

/** One metric of one cell (or of the whole run) checked. */
export interface MetricCheck {
  metric: string;
  base: string;
  head: string;
  change: string;
  limit: string;
  verdict: 'ok' | 'improved' | 'noise' | 'regression' | 'n/a';
  note?: string;
}

export interface CellComparison {
  id: string;
  checks: MetricCheck[];
}

export interface Comparison {
  /** The thresholds applied: `latency` resolved to whether latency was compared. */
  thresholds: CompareThresholds & { latency: boolean };
  /** Header differences that make numbers less comparable (tokenizer, model, seed...). */
  notes: string[];
  cells: CellComparison[];
  /** Cell ids only in head (new) / only in base (missing: a regression unless `allowMissing`). */
  added: string[];
  removed: string[];
  /** Head cells in error (a regression unless `allowMissing`; one that was ok in base always is). */
  errored: string[];
  /** Totals over the cells both runs measured. */
  overall: MetricCheck[];
  /** Every regressed check with its cell id (`overall` for run totals). */
  regressions: { cell: string; check: MetricCheck }[];
}

const EPSILON = 1e-9;
const signed = (value: number, digits = 2): string => `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(digits)}`;
const percent = (value: number): string => (Number.isFinite(value) ? `${signed(value * 100, 1)}%` : '+∞');

/** Context recall outcomes of the probes two runs both answered, keyed by cell and step. */
type Outcomes = Map<string, boolean>;

function outcomesOf(
  cells: readonly CellResult[],
  pick: (cell: CellResult) => readonly ProbeRecord[] = (cell) => cell.probes,
): Outcomes {
  return new Map(
    cells.flatMap((cell) =>
      pick(cell).flatMap((probe) =>
        probe.contextRecall === undefined ? [] : [[`${cell.id}|${probe.step}`, probe.contextRecall] as const],
      ),
    ),
  );
}

/**
 * A recall drop beyond `limit` is a regression when the paired test on the probes both runs
 * answered says head is behind (exact McNemar, p < 0.05); a drop the test cannot tell from
 * chance is "within noise". Without paired probes the fixed drop decides alone.
 */
function recallCheck(
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
  if (test.verdict === 'behind')
    return {
      ...shown,
      change: `${signed(change)} [${signed(test.interval.lo)}, ${signed(test.interval.hi)}]`,
      verdict: 'regression',
      note: `paired on ${test.n} probes, McNemar p=${test.p.toFixed(3)}`,
    };
  return {
    ...shown,
    change: `${signed(change)} [${signed(test.interval.lo)}, ${signed(test.interval.hi)}]`,
    verdict: 'noise',
    note: `within noise: paired on ${test.n} probes, McNemar p=${test.p.toFixed(3)}`,
  };
}

function meanCheck(metric: string, base: Mean, head: Mean, limit: number): MetricCheck {
  const shown = { metric, base: formatMean(base), head: formatMean(head), limit: `drop ≤ ${limit.toFixed(2)}` };
  if (base.mean === null || head.mean === null)
    return { ...shown, change: '–', verdict: 'n/a', note: 'no probe to compare' };
  const change = head.mean - base.mean;
  const verdict = -change > limit + EPSILON ? 'regression' : change > EPSILON ? 'improved' : 'ok';
  return { ...shown, change: signed(change), verdict };
}

/** An exposure (lower is better) that must not rise by more than `limit`. */
function exposureCheck(metric: string, base: Rate, head: Rate, limit: number): MetricCheck {
  const shown = { metric, base: formatRate(base), head: formatRate(head), limit: `rise ≤ ${limit.toFixed(2)}` };
  if (base.value === null || head.value === null)
    return { ...shown, change: '–', verdict: 'n/a', note: 'no probe to compare' };
  const change = head.value - base.value;
  const verdict = change > limit + EPSILON ? 'regression' : change < -EPSILON ? 'improved' : 'ok';
  return { ...shown, change: signed(change), verdict };
}

function tokenCheck(metric: string, base: number, head: number, limit: number): MetricCheck {
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

function latencyCheck(
  metric: string,
  base: Distribution,
  head: Distribution,
  thresholds: CompareThresholds,
): MetricCheck {
  const shown = {
    metric,
    base: `${formatMs(base.p50)} ms (p95 ${formatMs(base.p95)})`,
    head: `${formatMs(head.p50)} ms (p95 ${formatMs(head.p95)})`,
    limit: `× ≤ ${thresholds.maxLatencyRatio}`,
  };
  if (base.n === 0 || head.n === 0) return { ...shown, change: '–', verdict: 'n/a', note: 'not measured in both runs' };
  const ratio = base.p50 > 0 ? head.p50 / base.p50 : head.p50 > 0 ? Infinity : 1;
  const change = Number.isFinite(ratio) ? `×${ratio.toFixed(2)}` : '×∞';
  if (ratio <= thresholds.maxLatencyRatio)
    return { ...shown, change, verdict: ratio < 1 / thresholds.maxLatencyRatio ? 'improved' : 'ok' };
  if (head.p50 - base.p50 < thresholds.minLatencyMs)
    return {
      ...shown,
      change,
      verdict: 'noise',
      note: `within noise: p50s differ by less than ${thresholds.minLatencyMs} ms`,
    };
  if (head.p50 <= base.p95)
    return { ...shown, change, verdict: 'noise', note: "within noise: head's p50 is inside base's p50..p95 band" };
  return { ...shown, change, verdict: 'regression' };
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
function retrievalChecks(base: CellResult, head: CellResult, limit: number): MetricCheck[] {
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

function invariantChecks(base: CellResult, head: CellResult): MetricCheck[] {
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

function compareCell(base: CellResult, head: CellResult, thresholds: Comparison['thresholds']): MetricCheck[] {
  if (base.status === 'error' || head.status === 'error') {
    const bothFailed = base.status === 'error' && head.status === 'error';
    const verdict =
      base.status === 'ok'
        ? 'regression'
        : head.status === 'ok'
          ? 'improved'
          : thresholds.allowMissing
            ? 'n/a'
            : 'regression';
    const describe = (cell: CellResult) => (cell.status === 'ok' ? 'ok' : `error: ${cell.error ?? ''}`);
    return [
      {
        metric: 'status',
        base: describe(base),
        head: describe(head),
        change: '–',
        limit: bothFailed ? 'no error (--allow-missing to pass)' : 'no new error',
        verdict,
        ...(bothFailed ? { note: 'errored in both runs' } : {}),
      },
    ];
  }
  return [
    recallCheck('context recall', base.recall.contextRecall, head.recall.contextRecall, thresholds.maxRecallDrop, {
      base: outcomesOf([base]),
      head: outcomesOf([head]),
      seed: seedOf(base.id),
    }),
    ...(base.recall.evidenceRecall.n > 0 || head.recall.evidenceRecall.n > 0
      ? [meanCheck('evidence recall', base.recall.evidenceRecall, head.recall.evidenceRecall, thresholds.maxRecallDrop)]
      : []),
    ...(base.recall.conflictExposure.hits > 0 || head.recall.conflictExposure.hits > 0
      ? [
          exposureCheck(
            'conflict exposure',
            base.recall.conflictExposure,
            head.recall.conflictExposure,
            thresholds.maxRecallDrop,
          ),
        ]
      : []),
    tokenCheck('context tokens', base.tokens.contextTotal, head.tokens.contextTotal, thresholds.maxTokenIncrease),
    tokenCheck('maintenance tokens', base.tokens.maintenance, head.tokens.maintenance, thresholds.maxTokenIncrease),
    ...(thresholds.latency
      ? [
          latencyCheck('load p50', base.latency.loadMs, head.latency.loadMs, thresholds),
          latencyCheck('save p50', base.latency.saveMs, head.latency.saveMs, thresholds),
        ]
      : []),
    ...invariantChecks(base, head),
    ...retrievalChecks(base, head, thresholds.maxRecallDrop),
  ];
}

/** A group's cells of one setting, pooled: new errors, recall paired by question, evidence, tokens. */
function compareUnit(
  base: readonly CellResult[],
  head: readonly CellResult[],
  thresholds: CompareThresholds,
): MetricCheck[] {
  const errors = (cells: readonly CellResult[]) => cells.filter((cell) => cell.status === 'error').length;
  const newErrors = head.filter((cell, index) => cell.status === 'error' && base[index]!.status === 'ok').length;
  const failed = newErrors > 0 || (!thresholds.allowMissing && errors(head) > 0);
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
  const pairs = base
    .map((cell, index) => [cell, head[index]!] as const)
    .filter(([a, b]) => a.status === 'ok' && b.status === 'ok');
  const baseOk = pairs.map(([a]) => a);
  const headOk = pairs.map(([, b]) => b);
  if (pairs.length === 0) return checks;
  checks.push(
    recallCheck('context recall', sumRates(baseOk), sumRates(headOk), thresholds.maxRecallDrop, {
      base: outcomesOf(baseOk),
      head: outcomesOf(headOk),
      seed: seedOf(base[0]!.id),
    }),
  );
  if (poolMeans(baseOk).n > 0 || poolMeans(headOk).n > 0)
    checks.push(meanCheck('evidence recall', poolMeans(baseOk), poolMeans(headOk), thresholds.maxRecallDrop));
  checks.push(
    tokenCheck(
      'context tokens',
      sumOf(baseOk, (cell) => cell.tokens.contextTotal),
      sumOf(headOk, (cell) => cell.tokens.contextTotal),
      thresholds.maxTokenIncrease,
    ),
    tokenCheck(
      'maintenance tokens',
      sumOf(baseOk, (cell) => cell.tokens.maintenance),
      sumOf(headOk, (cell) => cell.tokens.maintenance),
      thresholds.maxTokenIncrease,
    ),
  );
  return checks;
}

function headerNotes(base: RunHeader, head: RunHeader): string[] {
  const fields: [string, (header: RunHeader) => string, string][] = [
    ['tokenizer', (header) => header.tokenizer.encoding, 'token counts are not comparable'],
    ['model', (header) => header.model, 'recall and maintenance tokens depend on the model'],
    ['embedder', (header) => header.embedder, 'retrieval depends on the embedder'],
    ['seed', (header) => String(header.seed), 'seeded choices differ'],
    ['trials', (header) => String(header.trials), 'cell ids differ with the number of trials'],
    ['platform', (header) => header.platform, 'latencies come from different machines'],
  ];
  return fields.flatMap(([name, read, why]) =>
    read(base) === read(head) ? [] : [`${name} differs (${read(base)} → ${read(head)}): ${why}`],
  );
}

/** The summaries of a figure pooled over cells: overall, or for one probe category. */
type Pick = (cell: CellResult) => RecallSummary | undefined;
const sumRates = (cells: readonly CellResult[], pick: Pick = (cell) => cell.recall): Rate => {
  const summaries = cells.flatMap((cell) => pick(cell) ?? []);
  const n = summaries.reduce((sum, summary) => sum + summary.contextRecall.n, 0);
  const hits = summaries.reduce((sum, summary) => sum + summary.contextRecall.hits, 0);
  return { n, hits, value: n ? hits / n : null };
};
const poolMeans = (cells: readonly CellResult[], pick: Pick = (cell) => cell.recall): Mean => {
  const means = cells.flatMap((cell) => pick(cell)?.evidenceRecall ?? []).filter((mean) => mean.mean !== null);
  const n = means.reduce((sum, mean) => sum + mean.n, 0);
  return { n, mean: n ? means.reduce((sum, mean) => sum + mean.mean! * mean.n, 0) / n : null };
};

/** Context and evidence recall pooled per probe category over the cells both runs measured. */
function categoryChecks(
  baseSide: readonly CellResult[],
  headSide: readonly CellResult[],
  limit: number,
): MetricCheck[] {
  const categories = [
    ...new Set([...baseSide, ...headSide].flatMap((cell) => Object.keys(cell.recallByCategory))),
  ].sort() as (keyof CellResult['recallByCategory'])[];
  return categories.flatMap((category) => {
    const pick: Pick = (cell) => cell.recallByCategory[category];
    const ofCategory = (cell: CellResult) => cell.probes.filter((probe) => probe.category === category);
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
const sumOf = (cells: readonly CellResult[], read: (cell: CellResult) => number): number =>
  cells.reduce((sum, cell) => sum + read(cell), 0);

/** Why latency is left out under `same-machine`, or undefined when both runs were timed on one machine. */
function otherMachine(base: RunHeader, head: RunHeader): string | undefined {
  if (base.machine === undefined || head.machine === undefined)
    return `${base.machine === undefined ? 'base' : 'head'} does not record the machine it was timed on (older results, or a merge of shards from several machines)`;
  return base.machine === head.machine
    ? undefined
    : `base and head were timed on different machines (${base.machine} → ${head.machine})`;
}

/** Refuses runs that cannot be compared: an empty head, no cell in common, or a cell id twice in one run (exit 2). */
function assertComparable(base: RunResult, head: RunResult, names: { base: string; head: string }): void {
  for (const [side, run] of [
    [names.base, base],
    [names.head, head],
  ] as const) {
    const id = repeatedCellId(run);
    if (id !== undefined)
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `${side} holds two cells with id "${id}": they cannot be matched (two scenarios with one name?); re-run with unique scenario names`,
      );
  }
  if (head.cells.length === 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${names.head} has no cells: nothing to compare with ${names.base} (${base.cells.length} cells); was the run stopped before any cell finished?`,
    );
  const baseIds = new Set(base.cells.map((cell) => cell.id));
  if (!head.cells.some((cell) => baseIds.has(cell.id))) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${names.head} (${head.cells.length} cells, e.g. ${head.cells[0]!.id}) has no cell in common with ${names.base} (${base.cells.length} cells${base.cells[0] ? `, e.g. ${base.cells[0].id}` : ''}): they ran different matrices; compare runs of the same scenarios and strategies`,
    );
  }
}

/**
 * Compares head against base with the given thresholds (defaults: DEFAULT_THRESHOLDS). Throws a
 * bad-input MembenchError when the runs share no cell (nothing compared must never read as "OK").
 */
export function compareRuns(
  base: RunResult,
  head: RunResult,
  overrides: Partial<CompareThresholds> = {},
  names = { base: 'base', head: 'head' },
): Comparison {
  assertComparable(base, head, names);
  const requested = { ...DEFAULT_THRESHOLDS, ...overrides };
  const skipLatency = requested.latency === 'same-machine' ? otherMachine(base.header, head.header) : undefined;
  const thresholds = {
    ...requested,
    latency: requested.latency === 'same-machine' ? skipLatency === undefined : requested.latency,
  };
  const baseCells = new Map(base.cells.map((cell) => [cell.id, cell]));
  const headIds = new Set(head.cells.map((cell) => cell.id));
  const cells: CellComparison[] = [];
  const bothOk: [CellResult, CellResult][] = [];
  // A scenario group (a dataset file, a generated suite) is compared as one unit per setting:
  // its questions pooled, recall paired question by question.
  const units = new Map<string, { base: CellResult[]; head: CellResult[] }>();
  for (const cell of head.cells) {
    const before = baseCells.get(cell.id);
    if (!before) continue;
    if (before.status === 'ok' && cell.status === 'ok') bothOk.push([before, cell]);
    if (cell.group === undefined) {
      cells.push({ id: cell.id, checks: compareCell(before, cell, thresholds) });
      continue;
    }
    const key = `group ${cell.group} · ${cell.setting}`;
    const unit = units.get(key) ?? { base: [], head: [] };
    unit.base.push(before);
    unit.head.push(cell);
    units.set(key, unit);
  }
  for (const [id, unit] of units) cells.push({ id, checks: compareUnit(unit.base, unit.head, thresholds) });
  const baseSide = bothOk.map(([before]) => before);
  const headSide = bothOk.map(([, after]) => after);
  const overall = bothOk.length
    ? [
        recallCheck('context recall', sumRates(baseSide), sumRates(headSide), thresholds.maxRecallDrop, {
          base: outcomesOf(baseSide),
          head: outcomesOf(headSide),
          seed: seedOf('overall'),
        }),
        ...(poolMeans(baseSide).n > 0
          ? [meanCheck('evidence recall', poolMeans(baseSide), poolMeans(headSide), thresholds.maxRecallDrop)]
          : []),
        ...categoryChecks(baseSide, headSide, thresholds.maxRecallDrop),
        tokenCheck(
          'context tokens',
          sumOf(baseSide, (cell) => cell.tokens.contextTotal),
          sumOf(headSide, (cell) => cell.tokens.contextTotal),
          thresholds.maxTokenIncrease,
        ),
        tokenCheck(
          'maintenance tokens',
          sumOf(baseSide, (cell) => cell.tokens.maintenance),
          sumOf(headSide, (cell) => cell.tokens.maintenance),
          thresholds.maxTokenIncrease,
        ),
      ]
    : [];
  const added = head.cells.filter((cell) => !baseCells.has(cell.id));
  const removed = base.cells.filter((cell) => !headIds.has(cell.id));
  // Lost work is a regression: a head that ran fewer cells, or new cells that failed, must not pass a CI gate.
  const absent = (cell: CellResult): MetricCheck => ({
    metric: 'missing from head',
    base: cell.status,
    head: 'absent',
    change: '–',
    limit: 'every base cell (--allow-missing to pass)',
    verdict: 'regression',
  });
  const failedNew = (cell: CellResult): MetricCheck => ({
    metric: 'status',
    base: 'absent',
    head: `error: ${cell.error ?? ''}`,
    change: '–',
    limit: 'no error (--allow-missing to pass)',
    verdict: 'regression',
  });
  const regressions = [
    ...cells.flatMap((cell) =>
      cell.checks.filter((check) => check.verdict === 'regression').map((check) => ({ cell: cell.id, check })),
    ),
    ...overall.filter((check) => check.verdict === 'regression').map((check) => ({ cell: 'overall', check })),
    ...(thresholds.allowMissing
      ? []
      : [
          ...removed.map((cell) => ({ cell: cell.id, check: absent(cell) })),
          ...added.filter((cell) => cell.status === 'error').map((cell) => ({ cell: cell.id, check: failedNew(cell) })),
        ]),
  ];
  return {
    thresholds,
    notes: [
      ...headerNotes(base.header, head.header),
      ...(skipLatency ? [`latency not compared: ${skipLatency}; pass --latency to compare it anyway`] : []),
    ],
    cells,
    added: added.map((cell) => cell.id),
    removed: removed.map((cell) => cell.id),
    errored: head.cells.filter((cell) => cell.status === 'error').map((cell) => cell.id),
    overall,
    regressions,
  };
}

/** True when head regressed anywhere: the CLI exits 1. */
export const hasRegression = (comparison: Comparison): boolean => comparison.regressions.length > 0;

/** Checks flagged as within noise, with their cell: shown so a reader sees why a slowdown passed. */
export function noiseChecks(comparison: Comparison): { cell: string; check: MetricCheck }[] {
  return comparison.cells.flatMap((cell) =>
    cell.checks.filter((check) => check.verdict === 'noise').map((check) => ({ cell: cell.id, check })),
  );
}

/** One line: the verdict with counts. */
export function comparisonHeadline(comparison: Comparison): string {
  const regressedCells = new Set(comparison.regressions.map((item) => item.cell)).size;
  const counts = `${comparison.cells.length} cells compared, ${comparison.removed.length} missing, ${comparison.added.length} new, ${comparison.errored.length} in error`;
  return hasRegression(comparison)
    ? `REGRESSION: ${comparison.regressions.length} regressed metric(s) in ${regressedCells} cell(s) (${counts})`
    : `OK: no regression (${counts})`;
}

/** The console text of a comparison (pure: no colours, fits a terminal). */
export function renderComparison(comparison: Comparison): string {
  const lines: string[] = [];
  const { thresholds } = comparison;
  lines.push(
    `thresholds: recall drop ≤ ${thresholds.maxRecallDrop}, token increase ≤ ${(thresholds.maxTokenIncrease * 100).toFixed(0)}%, ` +
      (thresholds.latency
        ? `latency p50 ratio ≤ ${thresholds.maxLatencyRatio} (differences < ${thresholds.minLatencyMs} ms or inside base's p50..p95 are noise)`
        : 'latency not compared') +
      ', no new invariant violation, no new error',
  );
  for (const note of comparison.notes) lines.push(`note: ${note}`);
  const rows = (items: readonly { cell: string; check: MetricCheck }[]) => {
    const table = new Table({
      head: ['cell', 'metric', 'base', 'head', 'change', 'limit'],
      style: { head: [], border: [], compact: true },
    });
    for (const { cell, check } of items)
      table.push([cell, check.metric, check.base, check.head, check.change, check.limit]);
    return table.toString();
  };
  if (comparison.regressions.length) lines.push('Regressions:', rows(comparison.regressions));
  const noise = noiseChecks(comparison);
  if (noise.length)
    lines.push(
      'Within noise (not regressions):',
      ...noise.map(({ cell, check }) => `  ${cell} ${check.metric} ${check.change}: ${check.note ?? ''}`),
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
  return lines.join('\n');
}
