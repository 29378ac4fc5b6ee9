/**
 * The statistics every figure is reported with (docs/design.md §5): a 95 % Wilson score interval for
 * rates, a percentile bootstrap over probes for means, and paired comparisons of two strategies
 * on the same probes: the exact McNemar test for binary outcomes, a paired bootstrap for the
 * difference and its interval. Bootstraps draw from a seeded generator (pure-rand), so reports
 * are reproducible; each resample draws its indices as simple-statistics' `sampleWithReplacement`
 * does, and sums them in place (no array per resample).
 */
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { quantileSorted } from 'simple-statistics';
import { fnv1a } from '../core/hash.js';

/** The two-sided 95 % standard normal quantile. */
export const Z95 = 1.959963984540054;
/** Resamples per bootstrap: enough for stable 95 % percentiles at report precision. */
export const BOOTSTRAP_RESAMPLES = 1000;
/** A difference whose two-sided p-value is at least this is "within noise". */
export const NOISE_P = 0.05;

export interface Interval {
  lo: number;
  hi: number;
}

/** Wilson score interval of `hits` out of `n` (null when n is 0): honest near 0 and 1, unlike the normal approximation. */
export function wilsonInterval(hits: number, n: number, z = Z95): Interval | null {
  if (n === 0) return null;
  const p = hits / n;
  const denominator = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / denominator;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / denominator;
  return { lo: Math.max(0, centre - half), hi: Math.min(1, centre + half) };
}

/**
 * A seeded random source in [0, 1) for simple-statistics' resampling: pure-rand's
 * `uniformInt(generator, 0, 2^30 - 1) / 2^30`, whose range divides 2^32, so it never rejects a
 * draw and takes the low 30 bits of the generator's next int32; taken here directly, the same
 * values at about half the cost (a run's leaderboards draw millions).
 */
function randomSource(seed: number): () => number {
  const generator = xoroshiro128plus(seed | 0);
  return () => (generator.next() & 0x3fffffff) / 0x40000000;
}

/** A string → 32-bit seed, so each figure's bootstrap has its own reproducible stream. */
export function seedOf(text: string, base = 0): number {
  return fnv1a(text, base) | 0;
}

const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

/**
 * The sorted means of `resamples` bootstrap resamples of `values`: the indices simple-statistics'
 * `sampleWithReplacement` would draw from `random` (⌊random() · n⌋, n per resample), summed left
 * to right as `mean` sums, so every mean is the same double; without its array per resample (a
 * default run's leaderboards draw ~10⁸ indices).
 */
function resampledMeans(values: readonly number[], resamples: number, random: () => number): number[] {
  const length = values.length;
  const means = new Array<number>(resamples);
  for (let resample = 0; resample < resamples; resample++) {
    let sum = 0;
    for (let drawn = 0; drawn < length; drawn++) sum += values[Math.floor(random() * length)]!;
    means[resample] = sum / length;
  }
  return means.sort((a, b) => a - b);
}

/** Percentile bootstrap interval of the mean (null for no values; a point when all values agree). */
export function bootstrapMeanInterval(
  values: readonly number[],
  seed: number,
  resamples = BOOTSTRAP_RESAMPLES,
): Interval | null {
  if (values.length === 0) return null;
  if (values.every((value) => value === values[0])) return { lo: values[0]!, hi: values[0]! };
  const random = randomSource(seed);
  const means = resampledMeans(values, resamples, random);
  return { lo: quantileSorted(means, 0.025), hi: quantileSorted(means, 0.975) };
}

/** ln C(n, k). */
function logChoose(n: number, k: number): number {
  let total = 0;
  for (let i = 1; i <= k; i++) total += Math.log(n - k + i) - Math.log(i);
  return total;
}

/**
 * Exact (binomial) McNemar test on the discordant pairs: `b` probes only A got right, `c` only B.
 * Two-sided p = 2 · P(X ≤ min(b, c)) for X ~ Binomial(b + c, 1/2), capped at 1; computed in log
 * space, so it stays exact for thousands of pairs.
 */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return Math.min(1, 2 * tail);
}

/** A paired difference A − B with its interval, p-value and verdict. */
export interface PairedDifference {
  /** Pairs compared (probes both measured). */
  n: number;
  /** Mean of A − B (for binary outcomes: the difference of rates). */
  difference: number;
  interval: Interval;
  p: number;
  verdict: 'ahead' | 'behind' | 'within noise';
}

function verdictOf(difference: number, p: number): PairedDifference['verdict'] {
  return p >= NOISE_P || difference === 0 ? 'within noise' : difference > 0 ? 'ahead' : 'behind';
}

/** Binary outcomes of A and B on the same probes: exact McNemar for the verdict, paired bootstrap for the interval. */
export function pairedRates(a: readonly boolean[], b: readonly boolean[], seed: number): PairedDifference | null {
  if (a.length !== b.length) throw new Error('pairedRates: outcomes must be paired one to one');
  if (a.length === 0) return null;
  let onlyA = 0;
  let onlyB = 0;
  const diffs = a.map((hit, i) => {
    const other = b[i]!;
    if (hit && !other) onlyA++;
    if (other && !hit) onlyB++;
    return Number(hit) - Number(other);
  });
  const difference = mean(diffs);
  const p = mcnemarExact(onlyA, onlyB);
  return {
    n: a.length,
    difference,
    interval: bootstrapMeanInterval(diffs, seed)!,
    p,
    verdict: verdictOf(difference, p),
  };
}

/**
 * Paired bootstrap for means (evidence recall per probe): the interval of the mean difference,
 * and a two-sided p-value from the share of resampled means on the other side of 0.
 */
export function pairedMeans(
  a: readonly number[],
  b: readonly number[],
  seed: number,
  resamples = BOOTSTRAP_RESAMPLES,
): PairedDifference | null {
  if (a.length !== b.length) throw new Error('pairedMeans: values must be paired one to one');
  if (a.length === 0) return null;
  const diffs = a.map((value, i) => value - b[i]!);
  const difference = mean(diffs);
  if (diffs.every((value) => value === diffs[0]))
    return {
      n: a.length,
      difference,
      interval: { lo: difference, hi: difference },
      p: difference === 0 ? 1 : 0,
      verdict: verdictOf(difference, difference === 0 ? 1 : 0),
    };
  const random = randomSource(seed);
  const means = resampledMeans(diffs, resamples, random);
  const below = means.filter((value) => value <= 0).length / resamples;
  const above = means.filter((value) => value >= 0).length / resamples;
  const p = Math.min(1, 2 * Math.min(below, above));
  return {
    n: a.length,
    difference,
    interval: { lo: quantileSorted(means, 0.025), hi: quantileSorted(means, 0.975) },
    p,
    verdict: verdictOf(difference, p),
  };
}
