/** The interval maths against known values, and the paired tests on hand-made cases. */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { quantileSorted, sampleWithReplacement } from 'simple-statistics';
import { describe, expect, it } from 'vitest';
import {
  bootstrapMeanInterval,
  mcnemarExact,
  pairedMeans,
  pairedRates,
  seedOf,
  wilsonInterval,
  Z95,
} from '../../../harness/results/stats.js';

describe('Wilson score interval', () => {
  it('matches published values', () => {
    // 8/10 at 95 %: 0.4902–0.9433 (e.g. Newcombe 1998, method 3).
    const eight = wilsonInterval(8, 10)!;
    expect(eight.lo).toBeCloseTo(0.4902, 4);
    expect(eight.hi).toBeCloseTo(0.9433, 4);
    // 0/10 stays inside [0, 1]: 0–0.2775.
    const none = wilsonInterval(0, 10)!;
    expect(none.lo).toBe(0);
    expect(none.hi).toBeCloseTo(0.2775, 4);
    expect(wilsonInterval(0, 0)).toBeNull();
    expect(Z95).toBeCloseTo(1.959964, 6);
  });

  it('narrows with n', () => {
    const small = wilsonInterval(5, 10)!;
    const large = wilsonInterval(500, 1000)!;
    expect(large.hi - large.lo).toBeLessThan((small.hi - small.lo) / 5);
  });
});

describe('exact McNemar', () => {
  it('gives the binomial two-sided p-value of the discordant pairs', () => {
    expect(mcnemarExact(0, 5)).toBeCloseTo(2 / 32, 12);
    expect(mcnemarExact(1, 9)).toBeCloseTo((2 * 11) / 1024, 12);
    expect(mcnemarExact(4, 4)).toBe(1);
    expect(mcnemarExact(0, 0)).toBe(1);
    // Stays finite and exact-ish for thousands of pairs (log space).
    expect(mcnemarExact(1000, 1100)).toBeGreaterThan(0.02);
    expect(mcnemarExact(1000, 1100)).toBeLessThan(0.04);
  });

  it('pairs outcomes on the same probes: a hand-made case', () => {
    // A and B agree on 6 probes; A alone is right on 7, B alone on 1.
    const a = [...Array(6).fill(true), ...Array(7).fill(true), false];
    const b = [...Array(6).fill(true), ...Array(7).fill(false), true];
    const result = pairedRates(a, b, 1)!;
    expect(result.n).toBe(14);
    expect(result.difference).toBeCloseTo(6 / 14, 12);
    expect(result.p).toBeCloseTo(mcnemarExact(7, 1), 12);
    expect(result.p).toBeCloseTo(0.0703125, 7);
    expect(result.verdict).toBe('within noise');
    const clearer = pairedRates([...a, ...Array(6).fill(true)], [...b, ...Array(6).fill(false)], 1)!;
    expect(clearer.verdict).toBe('ahead');
    expect(clearer.interval.lo).toBeGreaterThan(0);
  });
});

describe('bootstrap', () => {
  it('is reproducible from its seed and brackets the mean', () => {
    const values = [0, 0.5, 1, 1, 0.25, 0.75, 1, 0, 0.5, 1];
    const first = bootstrapMeanInterval(values, seedOf('x'))!;
    expect(bootstrapMeanInterval(values, seedOf('x'))).toEqual(first);
    expect(first.lo).toBeLessThan(0.6);
    expect(first.hi).toBeGreaterThan(0.6);
    expect(bootstrapMeanInterval([1, 1, 1], 3)).toEqual({ lo: 1, hi: 1 });
    expect(bootstrapMeanInterval([], 3)).toBeNull();
  });

  it("gives the very interval of simple-statistics' resampling from the same seeded source", () => {
    /** The bootstrap written plainly: an array per resample, its mean, the 2.5 % and 97.5 % quantiles. */
    const plain = (values: number[], seed: number): { lo: number; hi: number } => {
      const generator = xoroshiro128plus(seed | 0);
      const random = (): number => uniformInt(generator, 0, 0x3fffffff) / 0x40000000;
      const means = Array.from({ length: 1000 }, () => {
        const sample = sampleWithReplacement(values, values.length, random);
        return sample.reduce((sum, value) => sum + value, 0) / sample.length;
      }).sort((a, b) => a - b);
      return { lo: quantileSorted(means, 0.025), hi: quantileSorted(means, 0.975) };
    };
    for (const [index, size] of [7, 100, 531].entries()) {
      const values = Array.from({ length: size }, (_, i) => ((i * 7919 + index) % 13) / 12);
      const seed = seedOf(`case ${index}`);
      expect(bootstrapMeanInterval(values, seed)).toStrictEqual(plain(values, seed));
    }
    // Seeds of either sign and past 32 bits (`seed | 0`), and 0/1 values as recall's are.
    for (const seed of [0, -1, 0x7fffffff, -0x80000000, 2 ** 40 + 5]) {
      const hits = Array.from({ length: 546 }, (_, i) => ((i * 31 + seed) % 7 < 5 ? 1 : 0));
      expect(bootstrapMeanInterval(hits, seed)).toStrictEqual(plain(hits, seed));
    }
  });

  it('pairs means: a constant shift is ahead with a point interval; noise is within noise', () => {
    expect(pairedMeans([0.5, 0.75, 1], [0.25, 0.5, 0.75], 1)).toMatchObject({
      difference: 0.25,
      verdict: 'ahead',
      interval: { lo: 0.25, hi: 0.25 },
    });
    const noisy = pairedMeans([1, 0, 1, 0, 1, 0], [0, 1, 0, 1, 0, 1], 1)!;
    expect(noisy.verdict).toBe('within noise');
  });
});
