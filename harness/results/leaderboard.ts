/**
 * The verdict first (docs/design.md §8): one row per strategy setting pooled over a set of cells (the
 * run, or one group), with intervals, paired comparisons against the best row on the same
 * probes, and the recommendations computed from them. Pure functions of results.
 */
import { distribution, rate } from '../core/metrics.js';
import { meanOf } from './recall.js';
import { measuredContextTokens } from './cells.js';
import type { Rate } from '../core/metrics.js';
import type { CellResult, Mean, OkCell } from './schema.js';
import { judgeAgreement, judgedAccuracy, type JudgedAccuracy } from './agreement.js';
import {
  bootstrapMeanInterval,
  pairedRates,
  seedOf,
  wilsonInterval,
  type Interval,
  type PairedDifference,
} from './stats.js';

/** Context tokens per turn under which "best recall under a budget" is computed. */
export const TOKEN_BUDGET = 500;
/** The context recall below which the best setting under the budget is not recommended: it would miss most of what it was told. */
export const RECALL_FLOOR = 0.5;

/** A probe's outcomes, keyed so the same probe can be paired across strategies. */
interface ProbeOutcomes {
  contextRecall: Map<string, boolean>;
  evidenceRecall: Map<string, number>;
}

/** What one strategy setting lost in one durability mode (cells run with faults). */
export interface ModeLoss {
  mode: string;
  acknowledgedLost: number;
  messagesLost: number;
  compressedAway: number;
  violations: number;
  crashes: number;
}

export interface LeaderboardRow {
  /** The strategy setting as reports label it (`window(k=2)`). */
  setting: string;
  strategy: string;
  cells: number;
  contextRecall: Rate & { interval: Interval | null };
  evidenceRecall: Mean & { interval: Interval | null };
  conflictExposure: Rate & { interval: Interval | null };
  /** Mean context tokens per model call, over every turn of the pooled cells. */
  contextPerTurn: number;
  /** False when no turn recorded its context tokens (ranking-only `--protocol` cells): `contextPerTurn` is then 0, not a cost. */
  contextMeasured: boolean;
  /** Maintenance tokens (summaries, extraction) per turn. */
  maintenancePerTurn: number;
  /** p95 of load + save per turn, ms. */
  loadSaveP95: number;
  /** Durability outcome per mode, for settings that ran with faults. */
  durability: ModeLoss[];
  /** Paired against the best row on the probes both answered; absent for the best row itself. */
  vsBest?: PairedDifference | null;
  /** Answer accuracy by each judge that ran (every probe, abstention ones included), with its Wilson interval. */
  judged?: { judge: string; accuracy: JudgedAccuracy }[];
  /** Cohen's κ of the first two judges over this setting's probes (null: undefined, both judges unanimous). */
  kappa?: number | null;
}

export interface Recommendation {
  kind: 'cheapest-within-noise' | 'best-under-budget' | 'loses-acknowledged';
  /** One short sentence a reader acts on, with the figures it rests on (one line of a terminal). */
  text: string;
  /** The longer account behind it (every pair, every test figure), where a report has room for it (report.html shows it collapsed). */
  detail?: string;
}

export interface Leaderboard {
  rows: LeaderboardRow[];
  best?: string;
  recommendations: Recommendation[];
}

const probeKey = (cell: CellResult, step: number): string => `${cell.scenario}|${cell.trial}|${step}`;

function modeLosses(cells: readonly OkCell[]): ModeLoss[] {
  const modes = new Map<string, ModeLoss>();
  for (const cell of cells) {
    if (!cell.durabilityOutcome) continue;
    const loss = modes.get(cell.durability) ?? {
      mode: cell.durability,
      acknowledgedLost: 0,
      messagesLost: 0,
      compressedAway: 0,
      violations: 0,
      crashes: 0,
    };
    loss.acknowledgedLost += cell.durabilityOutcome.counts.acknowledgedLost + cell.durabilityOutcome.counts.lostUpdates;
    loss.messagesLost += cell.durabilityOutcome.counts.messagesLost;
    loss.compressedAway = Math.max(loss.compressedAway, cell.durabilityOutcome.counts.compressedAway);
    loss.violations += Object.values(cell.durabilityOutcome.invariants).reduce(
      (sum, outcome) => sum + outcome.violations,
      0,
    );
    loss.crashes += cell.durabilityOutcome.crashes.filter((crash) => crash.reached).length;
    modes.set(cell.durability, loss);
  }
  const order = ['sync', 'async', 'exit', 'none'];
  return [...modes.values()].sort((a, b) => order.indexOf(a.mode) - order.indexOf(b.mode));
}

/** The setting a cell belongs to: its label, without the mode of a cell run only to price that mode. */
export function settingOf(cell: CellResult): string {
  return cell.pricing
    ? cell.setting
        .replace(/,?durability=\w+/u, '')
        .replace(/\(\)$/u, '')
        .replace(/\(,/u, '(')
    : cell.setting;
}

/**
 * One row per setting of the ok cells (harness/results/cells.ts); `seed` makes the bootstrap
 * intervals reproducible; `judges` (their ids) add judged accuracy and, with two, κ.
 */
export function leaderboard(cells: readonly OkCell[], seed: number, judges: readonly string[] = []): Leaderboard {
  const bySetting = new Map<string, OkCell[]>();
  for (const cell of cells) bySetting.set(settingOf(cell), [...(bySetting.get(settingOf(cell)) ?? []), cell]);
  const outcomes = new Map<string, ProbeOutcomes>();
  const rows: LeaderboardRow[] = [...bySetting]
    .filter(([, all]) => all.some((cell) => !cell.pricing))
    .map(([setting, all]) => {
      // Cells run without idempotency keys, or only to price a mode, replay the same probes: they count under durability.
      const pooled = all.filter((cell) => !cell.pricing && cell.durabilityOutcome?.idempotencyKeys !== false);
      const probes = pooled.flatMap((cell) =>
        cell.probes.filter((probe) => probe.contextRecall !== undefined).map((probe) => ({ cell, probe })),
      );
      const recalled = probes.map(({ probe }) => probe.contextRecall === true);
      const evidence = probes.flatMap(({ probe }) => (probe.evidenceRecall === null ? [] : [probe.evidenceRecall]));
      const conflict = probes.map(({ probe }) => probe.conflictExposure);
      outcomes.set(setting, {
        contextRecall: new Map(
          probes.map(({ cell, probe }) => [probeKey(cell, probe.step), probe.contextRecall === true]),
        ),
        evidenceRecall: new Map(
          probes.flatMap(({ cell, probe }) =>
            probe.evidenceRecall === null ? [] : [[probeKey(cell, probe.step), probe.evidenceRecall] as const],
          ),
        ),
      });
      const turns = pooled.flatMap((cell) => cell.turns);
      const loaded = measuredContextTokens(turns);
      const recallRate = rate(recalled);
      const conflictRate = rate(conflict);
      const evidenceMean = meanOf(evidence);
      return {
        setting,
        strategy: pooled[0]?.strategy ?? all[0]!.strategy,
        cells: pooled.length,
        contextRecall: { ...recallRate, interval: wilsonInterval(recallRate.hits, recallRate.n) },
        evidenceRecall: {
          ...evidenceMean,
          interval: bootstrapMeanInterval(evidence, seedOf(`evidence|${setting}`, seed)),
        },
        conflictExposure: { ...conflictRate, interval: wilsonInterval(conflictRate.hits, conflictRate.n) },
        contextPerTurn: loaded.length ? loaded.reduce((sum, value) => sum + value, 0) / loaded.length : 0,
        contextMeasured: loaded.length > 0,
        maintenancePerTurn: turns.length
          ? pooled.reduce((sum, cell) => sum + cell.tokens.maintenance, 0) / turns.length
          : 0,
        loadSaveP95: distribution(turns.map((turn) => (turn.loadMs ?? 0) + turn.saveMs)).p95,
        durability: modeLosses(all),
        ...(judges.length > 0
          ? {
              judged: judges.map((judge) => ({
                judge,
                accuracy: judgedAccuracy(
                  pooled.flatMap((cell) => cell.probes),
                  judge,
                ),
              })),
            }
          : {}),
        ...(judges.length > 1 ? { kappa: judgeAgreement(pooled, judges[0]!, judges[1]!).at(-1)!.kappa } : {}),
      };
    });
  rows.sort(
    (a, b) =>
      (b.contextRecall.value ?? -1) - (a.contextRecall.value ?? -1) ||
      a.contextPerTurn - b.contextPerTurn ||
      a.setting.localeCompare(b.setting),
  );
  const best = rows.find((row) => row.contextRecall.n > 0);
  if (best) {
    const bestOutcomes = outcomes.get(best.setting)!.contextRecall;
    for (const row of rows) {
      if (row === best) continue;
      const mine = outcomes.get(row.setting)!.contextRecall;
      const shared = [...mine.keys()].filter((key) => bestOutcomes.has(key));
      row.vsBest = pairedRates(
        shared.map((key) => mine.get(key)!),
        shared.map((key) => bestOutcomes.get(key)!),
        seedOf(`${row.setting}|vs|${best.setting}`, seed),
      );
    }
  }
  return { rows, ...(best ? { best: best.setting } : {}), recommendations: recommend(rows, best) };
}

const fixed = (value: number | null | undefined, digits = 2): string =>
  value === null || value === undefined ? '–' : value.toFixed(digits);
const interval = (value: Interval | null): string => (value ? `[${fixed(value.lo)}, ${fixed(value.hi)}]` : '');
const tokensText = (value: number): string => `${Math.round(value)} tokens/turn`;

/** `a`, `a and b`, `a, b and c`. */
const andList = (items: readonly string[]): string =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)!}`;

function recommend(rows: readonly LeaderboardRow[], best: LeaderboardRow | undefined): Recommendation[] {
  const out: Recommendation[] = [];
  if (best) {
    const peers = rows.filter((row) => row === best || row.vsBest?.verdict === 'within noise');
    const cheapest = [...peers].sort((a, b) => a.contextPerTurn - b.contextPerTurn)[0]!;
    const bestFigure = `${fixed(best.contextRecall.value)} ${interval(best.contextRecall.interval)} (n=${best.contextRecall.n})`;
    out.push(
      !best.contextMeasured
        ? {
            kind: 'cheapest-within-noise',
            text: `${best.setting} recalls best, ${bestFigure} (context tokens not measured: no cost to compare).`,
          }
        : cheapest === best
          ? {
              kind: 'cheapest-within-noise',
              text: `${best.setting} recalls best, ${bestFigure}, and nothing within noise of it is cheaper (${tokensText(best.contextPerTurn)}).`,
            }
          : {
              kind: 'cheapest-within-noise',
              text: `${cheapest.setting} recalls as well as ${best.setting} within noise (${fixed(cheapest.contextRecall.value)} vs ${fixed(best.contextRecall.value)}) at ${tokensText(cheapest.contextPerTurn)}, not ${Math.round(best.contextPerTurn)}.`,
              detail: `${cheapest.setting} is the cheapest setting within noise of the best recall: ${fixed(cheapest.contextRecall.value)} ${interval(cheapest.contextRecall.interval)} at ${tokensText(cheapest.contextPerTurn)}, against ${best.setting}'s ${bestFigure} at ${tokensText(best.contextPerTurn)} (paired difference ${fixed(cheapest.vsBest?.difference)} ${interval(cheapest.vsBest?.interval ?? null)}, McNemar p=${fixed(cheapest.vsBest?.p, 3)}; n=${cheapest.vsBest?.n}).`,
            },
    );
  }
  const priced = rows.filter((row) => row.contextMeasured);
  const affordable = priced.filter((row) => row.contextRecall.n > 0 && row.contextPerTurn <= TOKEN_BUDGET);
  const top = affordable[0];
  if (top && (top.contextRecall.value ?? 0) >= RECALL_FLOOR) {
    out.push({
      kind: 'best-under-budget',
      text: `Under ${TOKEN_BUDGET} context tokens per turn, ${top.setting} recalls best: ${fixed(top.contextRecall.value)} ${interval(top.contextRecall.interval)} (n=${top.contextRecall.n}) at ${tokensText(top.contextPerTurn)}.`,
    });
  } else if (top) {
    out.push({
      kind: 'best-under-budget',
      text: `No setting under ${TOKEN_BUDGET} context tokens per turn recalls ${fixed(RECALL_FLOOR)} or more (the best there: ${top.setting}, ${fixed(top.contextRecall.value)}).`,
    });
  } else if (priced.length > 0) {
    out.push({
      kind: 'best-under-budget',
      text: `No setting stays under ${TOKEN_BUDGET} context tokens per turn in this run.`,
    });
  }
  const losers = rows.flatMap((row) =>
    row.durability.filter((loss) => loss.acknowledgedLost + loss.messagesLost > 0).map((loss) => ({ row, loss })),
  );
  if (losers.length > 0) {
    const order = ['sync', 'async', 'exit', 'none'];
    const modes = [...new Set(rows.flatMap((row) => row.durability.map((loss) => loss.mode)))].sort(
      (a, b) => order.indexOf(a) - order.indexOf(b),
    );
    const losing = modes.filter((mode) => losers.some(({ loss }) => loss.mode === mode));
    const clean = modes.filter((mode) => !losing.includes(mode));
    const priced = (mode: string): number =>
      rows.filter((row) => row.durability.some((loss) => loss.mode === mode)).length;
    const counts = losing.map((mode) => `${losers.filter(({ loss }) => loss.mode === mode).length}`).join(' / ');
    const of = new Set(losing.map(priced)).size === 1 ? ` of ${priced(losing[0]!)}` : '';
    const lost = `${andList(losing)} lost acknowledged memories or messages in ${counts}${of} ${losing.length > 1 || counts !== '1' ? 'strategies' : 'strategy'}`;
    out.push({
      kind: 'loses-acknowledged',
      text:
        clean.length > 0
          ? `${clean.length === 1 ? 'Only ' : ''}${andList(clean)} lost nothing: ${lost}.`
          : `Every mode lost something: ${lost}.`,
      detail: `Lost after real crashes: ${losers.map(({ row, loss }) => `${row.setting} in ${loss.mode} mode (${loss.acknowledgedLost} memories, ${loss.messagesLost} messages over ${loss.crashes} crashes)`).join('; ')}.`,
    });
  } else if (rows.some((row) => row.durability.length > 0)) {
    out.push({
      kind: 'loses-acknowledged',
      text: 'No setting lost an acknowledged memory or a saved message in any durability mode this run crashed it in.',
    });
  }
  return out;
}
