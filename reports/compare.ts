/**
 * `compare`: two runs matched cell by cell (by cell id), each figure checked against its limit
 * (compare-checks.ts), scenario groups and the run's totals pooled (compare-pooling.ts), latency
 * judged as a measurement (compare-latency.ts), regressions named by cell and metric. Pure
 * functions of the two results. A cell that ran concurrent sessions is nondeterministic (its
 * sessions interleave as the scheduler runs them): only its errors, invariants and losses are gated.
 */
import { assertRunResult } from '../harness/results/read.js';
import { errorCells, okCells, okPairs } from '../harness/results/cells.js';
import type { CellResult, RunResult } from '../harness/results/schema.js';
import { errorText } from './summary.js';
import { seedOf } from '../harness/results/stats.js';
import {
  exposureCheck,
  invariantChecks,
  lossesCheck,
  meanCheck,
  recallCheck,
  retrievalChecks,
  tokenCheck,
} from './compare-checks.js';
import { latencyChecks } from './compare-latency.js';
import { compareUnit, outcomesOf, overallChecks } from './compare-pooling.js';
import { assertComparable, headerNotes, otherMachine } from './compare-refusals.js';
import { checkThresholds } from './compare-thresholds.js';
import {
  DEFAULT_THRESHOLDS,
  type AppliedThresholds,
  type CellComparison,
  type CompareThresholds,
  type Comparison,
  type MetricCheck,
} from './compare-types.js';

export { DEFAULT_THRESHOLDS, type CellComparison, type CompareThresholds, type Comparison, type MetricCheck };
export { comparisonHeadline, hasRegression, noiseChecks, renderComparison, ungatedChecks } from './compare-render.js';

/** Figures of a nondeterministic cell that stay gated: what no interleaving may change. */
const GATED_ALWAYS = (check: MetricCheck): boolean =>
  check.metric === 'status' || check.metric === 'durability losses' || check.metric.startsWith('invariant ');

const UNGATED_NOTE =
  'not gated: a nondeterministic cell (its concurrent sessions interleave as the scheduler runs them); only its errors, invariants and losses are gated';

/** A cell's status in `compare`'s tables. */
const describe = (cell: CellResult): string => (cell.status === 'ok' ? 'ok' : `error: ${errorText(cell)}`);

/** The one check of a cell that errored in either run: it has no figures to compare. */
function statusCheck(base: CellResult, head: CellResult, allowMissing: boolean): MetricCheck {
  const bothFailed = base.status === 'error' && head.status === 'error';
  const verdict =
    base.status === 'ok' ? 'regression' : head.status === 'ok' ? 'improved' : allowMissing ? 'n/a' : 'regression';
  return {
    metric: 'status',
    base: describe(base),
    head: describe(head),
    change: '–',
    limit: bothFailed ? 'no error (--allow-missing to pass)' : 'no new error',
    verdict,
    ...(bothFailed ? { note: 'errored in both runs' } : {}),
  };
}

function compareCell(
  before: CellResult,
  after: CellResult,
  thresholds: AppliedThresholds,
  latency: readonly MetricCheck[],
): MetricCheck[] {
  const [pair] = okPairs([[before, after] as const]);
  if (!pair) return [statusCheck(before, after, thresholds.allowMissing)];
  const [base, head] = pair;
  const limit = thresholds.maxRecallDrop;
  const checks = [
    recallCheck('context recall', base.recall.contextRecall, head.recall.contextRecall, limit, {
      base: outcomesOf([base]),
      head: outcomesOf([head]),
      seed: seedOf(base.id),
    }),
    ...(base.recall.evidenceRecall.n > 0 || head.recall.evidenceRecall.n > 0
      ? [meanCheck('evidence recall', base.recall.evidenceRecall, head.recall.evidenceRecall, limit)]
      : []),
    ...(base.recall.conflictExposure.hits > 0 || head.recall.conflictExposure.hits > 0
      ? [exposureCheck('conflict exposure', base.recall.conflictExposure, head.recall.conflictExposure, limit)]
      : []),
    tokenCheck('context tokens', base.tokens.contextTotal, head.tokens.contextTotal, thresholds.maxTokenIncrease),
    tokenCheck('maintenance tokens', base.tokens.maintenance, head.tokens.maintenance, thresholds.maxTokenIncrease),
    ...latency,
    ...invariantChecks(base, head),
    ...retrievalChecks(base, head, limit),
  ];
  if (!nondeterministic(base, head)) return checks;
  return [
    ...checks.map((check) =>
      GATED_ALWAYS(check) || (check.verdict !== 'regression' && check.verdict !== 'noise')
        ? check
        : {
            ...check,
            verdict: 'ungated' as const,
            note: check.note ? `${UNGATED_NOTE} (${check.note})` : UNGATED_NOTE,
          },
    ),
    ...lossesCheck(base, head),
  ];
}

const nondeterministic = (base: CellResult, head: CellResult): boolean =>
  base.interleaved === true || head.interleaved === true;

/** The check that fails a comparison in which no cell was measured (ok) in both runs: nothing compared is never "OK". */
function nothingCompared(base: RunResult, head: RunResult): MetricCheck {
  const ok = (run: RunResult) => okCells(run.cells).length;
  return {
    metric: 'cells measured in both runs',
    base: `${ok(base)} ok`,
    head: `${ok(head)} ok`,
    change: '–',
    limit: 'at least one',
    verdict: 'regression',
    note: 'no cell finished in both runs: nothing was compared',
  };
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
  assertRunResult(base, 'compareRuns base');
  assertRunResult(head, 'compareRuns head');
  checkThresholds(overrides);
  assertComparable(base, head, names);
  const requested = { ...DEFAULT_THRESHOLDS, ...overrides };
  const skipLatency = requested.latency === 'same-machine' ? otherMachine(base.header, head.header) : undefined;
  const thresholds = {
    ...requested,
    latency: requested.latency === 'same-machine' ? skipLatency === undefined : requested.latency,
  };
  const baseCells = new Map(base.cells.map((cell) => [cell.id, cell]));
  const headIds = new Set(head.cells.map((cell) => cell.id));
  const singles: [CellResult, CellResult][] = [];
  const matched: [CellResult, CellResult][] = [];
  // A scenario group (a dataset file, a generated suite) is compared as one unit per setting:
  // its questions pooled, recall paired question by question.
  const units = new Map<string, { base: CellResult[]; head: CellResult[] }>();
  for (const cell of head.cells) {
    const before = baseCells.get(cell.id);
    if (!before) continue;
    matched.push([before, cell]);
    if (cell.group === undefined) {
      singles.push([before, cell]);
      continue;
    }
    const key = `group ${cell.group} · ${cell.setting}`;
    const unit = units.get(key) ?? { base: [], head: [] };
    unit.base.push(before);
    unit.head.push(cell);
    units.set(key, unit);
  }
  const bothOk = okPairs(matched);
  const okSides = (before: readonly CellResult[], after: readonly CellResult[]) => {
    const both = okPairs(before.map((cell, index) => [cell, after[index]!] as const));
    return { base: both.map(([cell]) => cell), head: both.map(([, cell]) => cell) };
  };
  const latency = thresholds.latency
    ? latencyChecks(
        [
          ...singles.map(([before, after]) => ({ id: after.id, ...okSides([before], [after]) })),
          ...[...units].map(([id, unit]) => ({ id, ...okSides(unit.base, unit.head) })),
        ],
        { base: base.header, head: head.header },
        thresholds,
      )
    : new Map<string, MetricCheck[]>();
  const cells: CellComparison[] = [
    ...singles.map(([before, after]) => ({
      id: after.id,
      checks: compareCell(before, after, thresholds, latency.get(after.id) ?? []),
      ...(nondeterministic(before, after) ? { nondeterministic: true as const } : {}),
    })),
    ...[...units].map(([id, unit]) => ({
      id,
      checks: [...compareUnit(unit.base, unit.head, thresholds), ...(latency.get(id) ?? [])],
    })),
  ];
  // The run's totals leave nondeterministic cells out: their recall and tokens are not gated.
  const gated = bothOk.filter(([before, after]) => !nondeterministic(before, after));
  const overall = overallChecks(
    gated.map(([before]) => before),
    gated.map(([, after]) => after),
    thresholds,
  );
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
    head: describe(cell),
    change: '–',
    limit: 'no error (--allow-missing to pass)',
    verdict: 'regression',
  });
  const regressions = [
    ...cells.flatMap((cell) =>
      cell.checks.filter((check) => check.verdict === 'regression').map((check) => ({ cell: cell.id, check })),
    ),
    ...overall.filter((check) => check.verdict === 'regression').map((check) => ({ cell: 'overall', check })),
    ...(bothOk.length === 0 ? [{ cell: 'overall', check: nothingCompared(base, head) }] : []),
    ...(thresholds.allowMissing
      ? []
      : [
          ...removed.map((cell) => ({ cell: cell.id, check: absent(cell) })),
          ...errorCells(added).map((cell) => ({ cell: cell.id, check: failedNew(cell) })),
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
    errored: errorCells(head.cells).map((cell) => cell.id),
    overall,
    regressions,
  };
}
