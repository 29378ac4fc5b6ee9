/** Durability tables shared by the console and report.md: the matrix and each mode's price. */
import {
  INVARIANTS,
  invariantName,
  type InvariantId,
  type ModePrice,
  type RunResult,
} from '../harness/results/schema.js';
import { median } from '../harness/core/calibration.js';
import { formatMs } from './summary.js';

export const MATRIX_COLUMNS = [
  'strategy',
  'mode',
  'keys',
  'crash point',
  'reached/armed',
  'acks lost',
  'msgs lost',
  'dup effects',
  'misclassified',
  'torn',
  'index ≠',
] as const;
export const PRICE_COLUMNS = [
  'strategy',
  'mode',
  'keys',
  'save p50 ms',
  'save p95 ms',
  'crashes',
  'acks lost',
  'compressed away',
  'msgs lost',
  'dup effects',
  'lost updates',
  'torn',
  'jobs lost',
  'stale',
  'invariants',
] as const;

/** What the `compressed away` column means, for the line under every table that shows it. */
export const COMPRESSED_AWAY_NOTE =
  'compressed away = acknowledged memories a summarising strategy no longer holds although it persisted its summary (sync/async): its design, counted apart from the losses; in exit and none modes they count as acks lost';

/** One row per strategy × mode × keys × crash point (empty when no cell ran with faults). */
export function matrixRows(result: RunResult): string[][] {
  return result.durabilityMatrix.map((row) => [
    row.strategy,
    row.durability,
    row.idempotencyKeys ? 'on' : 'off',
    row.point,
    `${row.reached}/${row.armed}`,
    String(row.acknowledgedLost),
    String(row.messagesLost),
    String(row.effectsDuplicated),
    String(row.toolsMisclassified),
    String(row.tornFiles),
    String(row.indexMismatches),
  ]);
}

/** One row per strategy × mode: what the mode costs and what it lost; invariants as `1✓ 3✗2`. */
export function priceRows(result: RunResult): string[][] {
  return result.durabilityPrices.map((price) => [
    price.strategy,
    price.durability,
    price.idempotencyKeys ? 'on' : 'off',
    formatMs(price.saveP50),
    formatMs(price.saveP95),
    String(price.crashes),
    String(price.losses.acknowledgedLost),
    String(price.losses.compressedAway ?? 0),
    String(price.losses.messagesLost),
    String(price.losses.effectsDuplicated),
    String(price.losses.lostUpdates),
    String(price.losses.tornFiles),
    String(price.losses.pendingJobsLost),
    String(price.losses.staleOverwrites),
    invariantCell(price),
  ]);
}

/** `1✓ 3✗2`, with errored cells named: they checked nothing, so they show as neither ✓ nor ✗. */
function invariantCell(price: ModePrice): string {
  const checked = Object.entries(price.violations).map(([id, count]) => (count === 0 ? `${id}✓` : `${id}✗${count}`));
  const errored = price.errored ? [`${price.errored} of ${price.cells} cell(s) errored: not checked`] : [];
  return [...checked, ...errored].join(' ') || 'not checked';
}

/** The invariants by number and name, for the line under every durability table. */
export function invariantLegend(): string {
  return (Object.keys(INVARIANTS) as InvariantId[]).map(invariantName).join('; ');
}

export const MODE_COLUMNS = [
  'mode',
  'strategies',
  'save p50 ms (median)',
  'save p95 ms (median)',
  'crashes',
  'acks lost',
  'msgs lost',
  'lost by',
] as const;

/** One row per durability mode over every strategy priced in it: "when must memory be written synchronously?" in numbers. */
export function modeRows(result: RunResult): string[][] {
  const order = ['sync', 'async', 'exit', 'none'];
  const modes = [...new Set(result.durabilityPrices.map((price) => price.durability))].sort(
    (a, b) => order.indexOf(a) - order.indexOf(b),
  );
  return modes.map((mode) => {
    const prices = result.durabilityPrices.filter((price) => price.durability === mode && price.idempotencyKeys);
    const losers = prices
      .filter((price) => price.losses.acknowledgedLost + price.losses.messagesLost + price.losses.lostUpdates > 0)
      .map((price) => price.strategy);
    return [
      mode,
      String(new Set(prices.map((price) => price.strategy)).size),
      formatMs(median(prices.map((price) => price.saveP50))),
      formatMs(median(prices.map((price) => price.saveP95))),
      String(prices.reduce((sum, price) => sum + price.crashes, 0)),
      String(prices.reduce((sum, price) => sum + price.losses.acknowledgedLost + price.losses.lostUpdates, 0)),
      String(prices.reduce((sum, price) => sum + price.losses.messagesLost, 0)),
      losers.length ? [...new Set(losers)].join(', ') : '–',
    ];
  });
}

/**
 * Which strategies ran the with / without idempotency keys contrast, for the line under the
 * durability tables; undefined when no cell ran without keys.
 */
export function idempotencyNote(result: RunResult): string | undefined {
  const withEffects = result.cells.filter((cell) => cell.durabilityOutcome !== undefined && !cell.pricing);
  const without = [
    ...new Set(
      withEffects.filter((cell) => cell.durabilityOutcome?.idempotencyKeys === false).map((cell) => cell.strategy),
    ),
  ];
  if (without.length === 0) return undefined;
  const all = new Set(result.header.strategies.map((strategy) => strategy.name));
  if (without.length >= all.size)
    return `keys: every strategy ran its crash cells with side effects both with idempotency keys (on) and without them (off)`;
  return (
    `keys: the crash cells with side effects ran without idempotency keys (off) for ${without.join(', ')} only, with keys for all ${all.size} strategies: ` +
    `a duplicated effect comes from the harness's tool-call recovery, not the strategy (--idempotency both runs the contrast for every strategy)`
  );
}
