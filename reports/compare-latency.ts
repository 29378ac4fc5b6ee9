/**
 * Latency judged as a measurement. Per cell and operation (load, save), the per-turn times both
 * runs recorded are divided by each run's own calibration (the machine's speed over the run: the
 * median time of a fixed piece of CPU work, sampled through the run), and the head/base ratio is
 * estimated with a rank interval (harness/results/ratio-interval.ts). The interval's level is
 * Bonferroni-corrected over every latency figure of the comparison, so the family of figures
 * raises a false alarm at most `latencyFalseAlarm` of the time when each is exactly at the limit.
 * A figure regresses only when its whole interval lies above `maxLatencyRatio` and its p50 grew by
 * at least `minLatencyMs`; too few samples for any verdict at that level is "not enough samples".
 */
import { distribution } from '../harness/core/metrics.js';
import type { OkCell, RunHeader } from '../harness/results/schema.js';
import { fewestSamples, ratioInterval } from '../harness/results/ratio-interval.js';
import { formatMs } from './summary.js';
import type { CompareThresholds, MetricCheck } from './compare-types.js';

/** The two operations timed per turn. */
const OPERATIONS = ['load', 'save'] as const;
type Operation = (typeof OPERATIONS)[number];

/** A cell's per-turn times of one operation, as its latency distribution was computed from them. */
export function latencySamples(cell: OkCell, operation: Operation): number[] {
  return operation === 'load'
    ? cell.turns.flatMap((turn) => (turn.loadMs === null ? [] : [turn.loadMs]))
    : cell.turns.map((turn) => turn.saveMs);
}

/** The floor every figure is divided by: the CPU work's median over the run (the commit floor swings too far to divide by). */
const floorOf = (header: RunHeader): number | undefined => header.calibration?.cpuMs;

/** How much slower head's commit floor was than base's before a save counts as met by a busier disk. */
const BUSIER_DISK = 1.5;

/**
 * What a flagged save time adds when head's commit floor (a fixed fsync, timed by the run) was much
 * slower than base's: said, never divided by (it swings too far), so the reader can tell a busier
 * disk from slower code. Empty otherwise.
 */
function busierDisk(headers: { base: RunHeader; head: RunHeader }): string {
  const [before, after] = [headers.base.calibration?.commitMs, headers.head.calibration?.commitMs];
  if (before === undefined || after === undefined || before <= 0 || after < BUSIER_DISK * before) return '';
  return `; head's commit floor was ${times(after / before)} base's (${formatMs(before)} → ${formatMs(after)} ms): a busier disk slows durable saves as much, so run both on a quiet disk before reading this as slower code`;
}

const times = (value: number): string => (Number.isFinite(value) ? `×${value.toFixed(2)}` : '×∞');

/** What latency is judged for: one cell, or a scenario group's cells of one setting pooled (its ok pairs). */
export interface LatencySubject {
  id: string;
  base: readonly OkCell[];
  head: readonly OkCell[];
}

/** One latency figure: a subject's load or save in both runs. */
interface Figure {
  subject: LatencySubject;
  operation: Operation;
}

function judge(
  figure: Figure,
  headers: { base: RunHeader; head: RunHeader },
  thresholds: CompareThresholds,
  alpha: number,
): MetricCheck {
  const { subject, operation } = figure;
  const baseSamples = subject.base.flatMap((cell) => latencySamples(cell, operation));
  const headSamples = subject.head.flatMap((cell) => latencySamples(cell, operation));
  const [before, after] = [distribution(baseSamples), distribution(headSamples)];
  const shown = {
    metric: `${operation} time`,
    base: `p50 ${formatMs(before.p50)} ms, p95 ${formatMs(before.p95)} ms`,
    head: `p50 ${formatMs(after.p50)} ms, p95 ${formatMs(after.p95)} ms`,
    limit: `interval above ×${thresholds.maxLatencyRatio}`,
  };
  if (baseSamples.length === 0 || headSamples.length === 0)
    return { ...shown, change: '–', verdict: 'n/a', note: 'not measured in both runs' };
  const interval = ratioInterval(baseSamples, headSamples, alpha);
  if (!interval)
    return {
      ...shown,
      change: '–',
      verdict: 'n/a',
      note: `not enough samples to judge (${baseSamples.length} and ${headSamples.length} turns; ${fewestSamples(alpha)} a side are needed at this level)`,
    };
  const floors = { base: floorOf(headers.base), head: floorOf(headers.head) };
  const calibrated = floors.base !== undefined && floors.head !== undefined;
  // The floor excuses a slowdown measured on a slower moment; it never makes one out of a faster
  // floor (a CPU floor itself swings by up to ×1.5 between runs on a loaded machine).
  const scale = calibrated ? Math.min(1, floors.base! / floors.head!) : 1;
  const [ratio, lo, hi] = [interval.ratio * scale, interval.lo * scale, interval.hi * scale];
  const change = `${times(ratio)} [${times(lo)}, ${times(hi)}]`;
  const span = calibrated ? `${formatMs(floors.base!)} → ${formatMs(floors.head!)} ms` : '';
  const normalised = !calibrated
    ? 'not normalised: a run records no calibration'
    : scale < 1
      ? `normalised by each run's CPU floor (${span}; raw ${times(interval.ratio)})`
      : `not normalised: head's CPU floor was no slower (${span}); a floor only excuses a slowdown`;
  if (lo > thresholds.maxLatencyRatio) {
    if (after.p50 - before.p50 < thresholds.minLatencyMs)
      return {
        ...shown,
        change,
        verdict: 'noise',
        note: `within noise: p50s differ by less than ${thresholds.minLatencyMs} ms; ${normalised}`,
      };
    return {
      ...shown,
      change,
      verdict: 'regression',
      note: `${normalised}${operation === 'save' ? busierDisk(headers) : ''}`,
    };
  }
  if (ratio > thresholds.maxLatencyRatio)
    return {
      ...shown,
      change,
      verdict: 'noise',
      note: `within noise: the interval reaches ${times(lo)}; ${normalised}`,
    };
  return { ...shown, change, verdict: hi < 1 / thresholds.maxLatencyRatio ? 'improved' : 'ok', note: normalised };
}

/**
 * Judges the load and save times of every subject given (cells ok in both runs), with the interval
 * level corrected for all of them together; returns each subject's two checks by its id.
 */
export function latencyChecks(
  subjects: readonly LatencySubject[],
  headers: { base: RunHeader; head: RunHeader },
  thresholds: CompareThresholds,
): Map<string, MetricCheck[]> {
  const figures = subjects
    .filter((subject) => subject.base.length > 0)
    .flatMap((subject) => OPERATIONS.map((operation) => ({ subject, operation })));
  const alpha = thresholds.latencyFalseAlarm / Math.max(1, figures.length);
  const checks = new Map<string, MetricCheck[]>();
  for (const figure of figures) {
    const list = checks.get(figure.subject.id) ?? [];
    list.push(judge(figure, headers, thresholds, alpha));
    checks.set(figure.subject.id, list);
  }
  return checks;
}
