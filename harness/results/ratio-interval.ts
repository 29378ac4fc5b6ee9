/**
 * How many times slower one sample of timings is than another, with an interval that holds under
 * the noise of a shared machine: the Hodges–Lehmann estimate of the shift between the logs of the
 * two samples (the median of all head/base ratios) and its distribution-free interval from the
 * Mann–Whitney rank statistic (Hollander & Wolfe, Nonparametric Statistical Methods, §4.3). It
 * assumes nothing about the shape of the timings (long tails, several modes), only that the two
 * samples differ by a factor; an order statistic of the n·m pairwise differences is found by
 * bisection with an O(n + m) count per step, so a replay of thousands of turns costs no more than
 * sorting it.
 */

/** Timings at or below this (ms) count as this much: a log needs a positive value, and a microsecond is below any clock's honesty here. */
export const SMALLEST_MS = 0.001;

/** A ratio head/base with its interval (each bound holds at the one-sided level asked for). */
export interface RatioInterval {
  ratio: number;
  lo: number;
  hi: number;
}

/** The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9). */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must lie in (0, 1), got ${p}`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
    ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

const logs = (values: readonly number[]): Float64Array =>
  Float64Array.from(values, (value) => Math.log(Math.max(value, SMALLEST_MS))).sort();

/** How many pairwise differences head[j] − base[i] are at most `d` (both sorted ascending). */
function countAtMost(base: Float64Array, head: Float64Array, d: number): number {
  let count = 0;
  let i = 0;
  // For each head value (ascending), base values ≥ head − d form a suffix that only shrinks from the left.
  for (let j = 0; j < head.length; j++) {
    while (i < base.length && base[i]! < head[j]! - d) i++;
    count += base.length - i;
  }
  return count;
}

/** The k-th smallest (1-based) of the pairwise differences head[j] − base[i]. */
function pairwiseOrderStatistic(base: Float64Array, head: Float64Array, k: number): number {
  let lo = head[0]! - base[base.length - 1]!;
  let hi = head[head.length - 1]! - base[0]!;
  // Bisection on the value: the count is a step function of d, so 100 halvings leave an interval far below a timer's resolution.
  for (let step = 0; step < 100 && hi - lo > 1e-12; step++) {
    const middle = (lo + hi) / 2;
    if (countAtMost(base, head, middle) >= k) hi = middle;
    else lo = middle;
  }
  return hi;
}

/**
 * The head/base ratio of two samples of timings, with bounds each holding at one-sided level
 * `alpha` (a two-sided 1 − 2·alpha interval); undefined when the samples are too few for any
 * result to leave a bound inside them at that level (the rank test cannot tell them apart, however
 * they differ).
 */
export function ratioInterval(
  base: readonly number[],
  head: readonly number[],
  alpha: number,
): RatioInterval | undefined {
  const m = base.length;
  const n = head.length;
  if (m === 0 || n === 0) return undefined;
  const pairs = m * n;
  // Mann–Whitney's U has mean mn/2 and variance mn(m+n+1)/12 when the samples differ by no factor.
  const k = Math.floor(pairs / 2 - normalQuantile(1 - alpha) * Math.sqrt((pairs * (m + n + 1)) / 12));
  if (k < 1) return undefined;
  const logBase = logs(base);
  const logHead = logs(head);
  const median =
    pairs % 2 === 1
      ? pairwiseOrderStatistic(logBase, logHead, (pairs + 1) / 2)
      : (pairwiseOrderStatistic(logBase, logHead, pairs / 2) +
          pairwiseOrderStatistic(logBase, logHead, pairs / 2 + 1)) /
        2;
  return {
    ratio: Math.exp(median),
    lo: Math.exp(pairwiseOrderStatistic(logBase, logHead, k)),
    hi: Math.exp(pairwiseOrderStatistic(logBase, logHead, pairs + 1 - k)),
  };
}

/** The fewest samples per side (equal sizes) for which `ratioInterval` gives bounds at level `alpha`. */
export function fewestSamples(alpha: number): number {
  let size = 1;
  while (ratioInterval(new Array<number>(size).fill(1), new Array<number>(size).fill(1), alpha) === undefined) size++;
  return size;
}
