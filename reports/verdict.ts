/**
 * The verdict every report opens with: the leaderboard of strategy settings (pooled over the
 * run, and over each scenario group), its recommendations, and recall by distance. Rows and
 * words are built here once; console, report.md and report.html only lay them out.
 */
import { recallByDistance, type DistanceRow, type DistanceUnit } from '../harness/results/by-distance.js';
import { leaderboard, TOKEN_BUDGET, type Leaderboard, type LeaderboardRow } from '../harness/results/leaderboard.js';
import { judgeLabel } from '../harness/results/agreement.js';
import { recallByCategory, recallByLabel } from '../harness/results/recall.js';
import { okCells } from '../harness/results/cells.js';
import type { OkCell, RecallSummary, RunResult } from '../harness/results/schema.js';
import type { Interval } from '../harness/results/stats.js';
import { breakdowns, formatMs } from './summary.js';

/**
 * The leaderboard's columns, the ones a reader decides by first: laid out to a terminal's width,
 * the columns after those that fit go to a second table (reports/layout.ts).
 */
export const LEADERBOARD_COLUMNS = [
  'setting',
  'context recall [95% CI]',
  'ctx/turn',
  'maint/turn',
  'vs best (paired)',
  'durability',
  'evidence recall [95% CI]',
  'conflict',
  'p95 ms',
] as const;

const fixed = (value: number | null | undefined): string =>
  value === null || value === undefined ? '–' : value.toFixed(2);
const withInterval = (value: number | null, interval: Interval | null, n: number): string =>
  value === null
    ? '–'
    : `${fixed(value)} ${interval ? `[${fixed(interval.lo)}, ${fixed(interval.hi)}]` : ''} n=${n}`.replace('  ', ' ');
/** A signed difference: `−0.14`, `+0.02` (a true minus sign, as in the interval). */
const signed = (value: number): string => `${value < 0 ? '−' : '+'}${Math.abs(value).toFixed(2)}`;

/** "−0.14 [−0.17, −0.11] p<0.001" (behind or ahead of the best, paired) / "within noise p=0.41" / "best"; "–" with no recall measured. */
export function versusBest(row: LeaderboardRow): string {
  // A run without probes has no best: every setting said "best" of nothing.
  if (row.contextRecall.value === null) return '–';
  if (!row.vsBest) return row.vsBest === null ? 'no shared probes' : 'best';
  const { difference, interval, p, verdict } = row.vsBest;
  if (verdict === 'within noise') return `within noise p=${p.toFixed(2)}`;
  return `${signed(difference)} [${signed(interval.lo)}, ${signed(interval.hi)}] p${p < 0.001 ? '<0.001' : `=${p.toFixed(3)}`}`;
}

/** What the durability marks mean, for the line under every leaderboard that shows them. */
const DURABILITY_MARKS =
  '✓ nothing lost · ✗N N acknowledged memories and messages lost · !N N invariants violated, nothing lost';
export const DURABILITY_MARKS_LEGEND = `durability: ${DURABILITY_MARKS}`;

/** Durability as one mark per mode: `sync ✓ async ✗6 exit ✗8 none ✗8` (DURABILITY_MARKS_LEGEND). */
export function durabilityText(row: LeaderboardRow): string {
  if (row.durability.length === 0) return '–';
  return row.durability
    .map((loss) => {
      const lost = loss.acknowledgedLost + loss.messagesLost;
      if (lost > 0) return `${loss.mode} ✗${lost}`;
      return loss.violations > 0 ? `${loss.mode} !${loss.violations}` : `${loss.mode} ✓`;
    })
    .join(' ');
}

/** The leaderboard's columns: LEADERBOARD_COLUMNS, then judged accuracy per judge and κ when judges ran. */
export function leaderboardHead(board: Leaderboard): string[] {
  const judged = board.rows[0]?.judged ?? [];
  return [
    ...LEADERBOARD_COLUMNS,
    ...judged.map(({ judge }) => `answer acc, ${judgeLabel(judge)} [95% CI]`),
    ...(board.rows[0]?.kappa !== undefined ? ['judges κ'] : []),
  ];
}

/** The leaderboard's rows as text cells, in leaderboardHead order. */
export function leaderboardCells(board: Leaderboard): string[][] {
  return board.rows.map((row) => [
    row.setting,
    withInterval(row.contextRecall.value, row.contextRecall.interval, row.contextRecall.n),
    row.contextMeasured ? String(Math.round(row.contextPerTurn)) : '–',
    String(Math.round(row.maintenancePerTurn)),
    versusBest(row),
    durabilityText(row),
    withInterval(row.evidenceRecall.mean, row.evidenceRecall.interval, row.evidenceRecall.n),
    fixed(row.conflictExposure.value),
    formatMs(row.loadSaveP95),
    ...(row.judged ?? []).map(
      ({ accuracy }) =>
        `${withInterval(accuracy.value, accuracy.interval, accuracy.n)}${accuracy.unparsed ? `, ${accuracy.unparsed} unparsed` : ''}`,
    ),
    ...(row.kappa !== undefined ? [fixed(row.kappa)] : []),
  ]);
}

/** The numbers the leaderboard's columns sort by (report.html), in leaderboardHead order; undefined: sorted as text. */
export function leaderboardSortKeys(row: LeaderboardRow): (number | null | undefined)[] {
  return [
    undefined,
    row.contextRecall.value,
    row.contextMeasured ? row.contextPerTurn : null,
    row.maintenancePerTurn,
    row.vsBest?.difference ?? 0,
    undefined,
    row.evidenceRecall.mean,
    row.conflictExposure.value,
    row.loadSaveP95,
    ...(row.judged ?? []).map(({ accuracy }) => accuracy.value),
    ...(row.kappa !== undefined ? [row.kappa] : []),
  ];
}

/** A leaderboard with the name of what it pools: the whole run, or one group. */
export interface PooledBoard {
  title: string;
  board: Leaderboard;
  /** The ok cells it pools. */
  cells: readonly OkCell[];
}

/** Boards already computed, per results object: every renderer of one run asks (their bootstraps are the costly part of rendering). */
const computed = new WeakMap<RunResult, PooledBoard[]>();

/** The run's leaderboard, then one per scenario group (a generated suite, a dataset file) when the run has groups. */
export function leaderboards(result: RunResult): PooledBoard[] {
  let boards = computed.get(result);
  if (!boards) computed.set(result, (boards = computeLeaderboards(result)));
  return boards;
}

function computeLeaderboards(result: RunResult): PooledBoard[] {
  const seed = result.header.seed;
  const judges = (result.judges ?? []).map((run) => run.judge);
  const ok = okCells(result.cells);
  const boards: PooledBoard[] = [{ title: 'the whole run', board: leaderboard(ok, seed, judges), cells: ok }];
  const groups = [...new Set(result.cells.flatMap((cell) => (cell.group === undefined ? [] : [cell.group])))];
  if (groups.length === 1 && result.cells.every((cell) => cell.group !== undefined))
    return [{ ...boards[0]!, title: `group ${groups[0]}` }];
  for (const group of groups) {
    const cells = ok.filter((cell) => cell.group === group);
    boards.push({ title: `group ${group}`, board: leaderboard(cells, seed, judges), cells });
  }
  return boards;
}

/** What the leaderboard's columns mean, in one paragraph. */
export const LEADERBOARD_NOTE =
  `One row per strategy setting, pooled over its cells' answerable probes. Context recall with a 95 % Wilson interval; evidence recall (mean share of evidence steps held) with a 95 % bootstrap interval; ` +
  `"vs best" pairs each setting with the best one on the same probes (exact McNemar test, paired bootstrap interval of the difference; p ≥ 0.05 is within noise). ` +
  `Conflict: the share of probes whose context showed an outdated value (same n as context recall). Tokens are per model call; p95 ms is the 95th percentile of load + save time per turn; durability per mode after real crashes (${DURABILITY_MARKS}). "Best under budget" uses ${TOKEN_BUDGET} context tokens per turn.`;

/** Recall by distance as a table: one row per setting, one column per bucket ("0.83 (5/6)"). */
export function distanceTable(rows: readonly DistanceRow[]): { head: string[]; body: string[][] } {
  const buckets = [...new Map(rows.map((row) => [row.bucket.hi, row.bucket])).values()].sort((a, b) => a.hi - b.hi);
  const settings = [...new Set(rows.map((row) => row.setting))];
  return {
    head: ['setting', ...buckets.map((bucket) => bucket.label)],
    body: settings.map((setting) => [
      setting,
      ...buckets.map((bucket) => {
        const row = rows.find((item) => item.setting === setting && item.bucket.hi === bucket.hi);
        return row?.contextRecall.value === null || !row
          ? '–'
          : `${fixed(row.contextRecall.value)} (${row.contextRecall.hits}/${row.contextRecall.n})`;
      }),
    ]),
  };
}

/** Tables already pooled, per results object: report.md, report.html and explain's answers (twice each) ask for them. */
const tables = new WeakMap<RunResult, readonly { unit: DistanceUnit; rows: DistanceRow[] }[]>();

/** Recall by distance in both units, when the run's probes have distances. */
export function distanceTables(result: RunResult): readonly { unit: DistanceUnit; rows: DistanceRow[] }[] {
  let pooled = tables.get(result);
  if (!pooled) {
    const ok = okCells(result.cells);
    pooled = (['exchanges', 'tokens'] as const)
      .map((unit) => ({ unit, rows: recallByDistance(ok, unit) }))
      .filter((item) => item.rows.length > 0);
    tables.set(result, pooled);
  }
  return pooled;
}

/** One breakdown row: a scenario's cell, or a group's cells pooled, by membench category or dataset label. */
export interface BreakdownRow {
  /** The scenario name, or `group NAME`. */
  scope: string;
  setting: string;
  category: string;
  summary: RecallSummary;
}

/** Recall by category and label: per cell for scenarios outside a group, pooled per setting for each group. */
export function breakdownRows(result: RunResult): BreakdownRow[] {
  const rows: BreakdownRow[] = [];
  const ok = okCells(result.cells);
  for (const cell of ok.filter((item) => item.group === undefined)) {
    for (const group of breakdowns(cell))
      rows.push({
        scope: cell.scenario,
        setting: cell.setting,
        category: group.by === 'label' ? `label: ${group.name}` : group.name,
        summary: group.summary,
      });
  }
  const grouped = new Map<string, { group: string; setting: string; cells: OkCell[] }>();
  for (const cell of ok) {
    if (cell.group === undefined || cell.pricing) continue;
    const key = JSON.stringify([cell.group, cell.setting]);
    const entry = grouped.get(key) ?? { group: cell.group, setting: cell.setting, cells: [] };
    entry.cells.push(cell);
    grouped.set(key, entry);
  }
  for (const { group, setting, cells } of grouped.values()) {
    const probes = cells
      .filter((cell) => cell.durabilityOutcome?.idempotencyKeys !== false)
      .flatMap((cell) => cell.probes);
    for (const [category, summary] of Object.entries(recallByCategory(probes)))
      rows.push({ scope: `group ${group}`, setting, category, summary: summary! });
    for (const [label, summary] of Object.entries(recallByLabel(probes) ?? {}))
      rows.push({ scope: `group ${group}`, setting, category: `label: ${label}`, summary });
  }
  return rows;
}

/** The heading and one-line reading of the per-mode table (shown when the run priced two or more modes). */
export const MODE_TABLE_TITLE = 'Sync or async? What each durability mode costs and what it lost under real crashes';
export const MODE_TABLE_NOTE =
  'sync commits before acknowledging; async writes behind through a durable queue; exit persists on clean close only; none keeps memory in the process. ' +
  'Latency is save time per turn; losses are counted after SIGKILL at every crash point of the priced scenarios.';

/**
 * A group's settings by the dataset's own category (LongMemEval's question types, LoCoMo's five):
 * context recall / answer recall with n per category; undefined when no probe carries a label.
 */
export function labelTable(cells: readonly OkCell[]): { head: string[]; body: string[][] } | undefined {
  const pooled = cells.filter((cell) => !cell.pricing && cell.durabilityOutcome?.idempotencyKeys !== false);
  const labels = [
    ...new Set(
      pooled.flatMap((cell) => cell.probes.flatMap((probe) => (probe.label === undefined ? [] : [probe.label]))),
    ),
  ].sort();
  if (labels.length === 0) return undefined;
  const settings = [...new Set(pooled.map((cell) => cell.setting))];
  return {
    head: ['setting', ...labels.map((label) => `${label} (context / answer recall)`)],
    body: settings.map((setting) => {
      const byLabel =
        recallByLabel(pooled.filter((cell) => cell.setting === setting).flatMap((cell) => cell.probes)) ?? {};
      return [
        setting,
        ...labels.map((label) => {
          const summary = byLabel[label];
          if (!summary) return '–';
          if (summary.contextRecall.n === 0)
            return `abstained ${fixed(summary.abstention.value)} (n=${summary.abstention.n})`;
          return `${fixed(summary.contextRecall.value)} / ${fixed(summary.answerRecall.mean)} (n=${summary.contextRecall.n})`;
        }),
      ];
    }),
  };
}
