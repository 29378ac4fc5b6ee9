import { describe, expect, it } from 'vitest';
import { fewestSamples, normalQuantile, ratioInterval } from '../../../harness/results/ratio-interval.js';

/** A seeded sequence in [0, 1) (a linear congruential generator), so the samples are the same every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** The k-th smallest head/base ratio over every pair, by brute force. */
function pairwise(base: number[], head: number[], k: number): number {
  const ratios = base.flatMap((b) => head.map((h) => Math.log(h) - Math.log(b))).sort((x, y) => x - y);
  return Math.exp(ratios[k - 1]!);
}

describe('ratioInterval', () => {
  it('finds the median ratio and the Mann–Whitney bounds the brute-force pairs give', () => {
    const random = seeded(7);
    const base = Array.from({ length: 23 }, () => 1 + random() * 9);
    const head = Array.from({ length: 17 }, () => 3 * (1 + random() * 9));
    const alpha = 0.01;
    const interval = ratioInterval(base, head, alpha)!;
    const pairs = base.length * head.length;
    const k = Math.floor(
      pairs / 2 - normalQuantile(1 - alpha) * Math.sqrt((pairs * (base.length + head.length + 1)) / 12),
    );
    expect(interval.lo).toBeCloseTo(pairwise(base, head, k), 9);
    expect(interval.hi).toBeCloseTo(pairwise(base, head, pairs + 1 - k), 9);
    // An odd count of pairs: the median is one of them.
    expect(interval.ratio).toBeCloseTo(pairwise(base, head, (pairs + 1) / 2), 9);
    expect(interval.lo).toBeLessThan(interval.ratio);
    expect(interval.hi).toBeGreaterThan(interval.ratio);
  });

  it('gives the exact factor between samples that differ by one, and no interval when they are too few', () => {
    const base = Array.from({ length: 10 }, (_, index) => index + 1);
    const interval = ratioInterval(
      base,
      base.map((value) => value * 5),
      0.025,
    )!;
    expect(interval.ratio).toBeCloseTo(5, 9);
    expect(interval.lo).toBeLessThan(5);
    expect(interval.hi).toBeGreaterThan(5);
    expect(ratioInterval([1, 2, 3], [10, 20, 30], 0.01)).toBeUndefined();
    expect(ratioInterval([], [1], 0.01)).toBeUndefined();
    // Fewer samples suffice at a looser level.
    expect(fewestSamples(0.05)).toBeLessThan(fewestSamples(0.0001));
    expect(
      ratioInterval(Array(fewestSamples(0.001)).fill(1), Array(fewestSamples(0.001)).fill(2), 0.001),
    ).toBeDefined();
    expect(
      ratioInterval(Array(fewestSamples(0.001) - 1).fill(1), Array(fewestSamples(0.001) - 1).fill(2), 0.001),
    ).toBeUndefined();
  });

  it('reads timings of zero as a microsecond instead of failing on a log of zero', () => {
    const interval = ratioInterval(Array(20).fill(0), Array(20).fill(0.002), 0.01)!;
    expect(interval.ratio).toBeCloseTo(2, 9);
  });

  it('matches the standard normal quantiles', () => {
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963985, 8);
    expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
    expect(normalQuantile(1 - 1e-5)).toBeCloseTo(4.264890794, 7);
    expect(normalQuantile(0.01)).toBeCloseTo(-2.326347874, 8);
  });
});
