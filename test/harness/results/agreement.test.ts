/** Judged accuracy and judge agreement against hand-computed values: κ, raw agreement, the 2×2 counts, unparsed verdicts left out. */
import { describe, expect, it } from 'vitest';
import { cohensKappa, disagreements, judgeAgreement, judgedAccuracy } from '../../../harness/results/agreement.js';
import type { JudgeVerdict, OkCell, ProbeRecord } from '../../../harness/results/schema.js';
import { smallRun } from '../../reports/fixture.js';

/** The fixture's first cell with its probes replaced by ones judged `a` by judge A and `b` by judge B. */
function judgedCell(pairs: readonly [JudgeVerdict, JudgeVerdict, string?][]): OkCell {
  const cell = structuredClone(smallRun().cells[0]!);
  const template = cell.probes[0]!;
  cell.probes = pairs.map(
    ([a, b, label], index): ProbeRecord => ({
      ...template,
      step: index,
      ...(label ? { label } : {}),
      expect: ['gold'],
      judgements: [
        { judge: 'A', verdict: a, type: 'default', raw: a },
        { judge: 'B', verdict: b, type: 'default', raw: b },
      ],
    }),
  );
  return cell;
}

const repeat = <T>(value: T, times: number): T[] => Array.from({ length: times }, () => value);

describe("Cohen's κ", () => {
  it('matches the hand-computed value of a 2×2 table: 20/5/10/15 gives observed 0.70, chance 0.50, κ 0.40', () => {
    expect(cohensKappa({ yesYes: 20, yesNo: 5, noYes: 10, noNo: 15 })).toBeCloseTo(0.4, 12);
    // Perfect agreement 1, systematic disagreement -1, no probes or both unanimous: undefined.
    expect(cohensKappa({ yesYes: 3, yesNo: 0, noYes: 0, noNo: 7 })).toBe(1);
    expect(cohensKappa({ yesYes: 0, yesNo: 4, noYes: 4, noNo: 0 })).toBe(-1);
    expect(cohensKappa({ yesYes: 0, yesNo: 0, noYes: 0, noNo: 0 })).toBeNull();
    expect(cohensKappa({ yesYes: 6, yesNo: 0, noYes: 0, noNo: 0 })).toBeNull();
  });

  it('per category and over all: the two accuracies, raw agreement, κ and counts; unparsed verdicts are counted apart', () => {
    // temporal: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no; single-hop: 3 yes/yes, 1 no/no, 1 yes/no; 2 probes with an unparsed verdict.
    const cell = judgedCell([
      ...repeat<[JudgeVerdict, JudgeVerdict, string]>(['yes', 'yes', 'temporal'], 20),
      ...repeat<[JudgeVerdict, JudgeVerdict, string]>(['yes', 'no', 'temporal'], 5),
      ...repeat<[JudgeVerdict, JudgeVerdict, string]>(['no', 'yes', 'temporal'], 10),
      ...repeat<[JudgeVerdict, JudgeVerdict, string]>(['no', 'no', 'temporal'], 15),
      ...repeat<[JudgeVerdict, JudgeVerdict, string]>(['yes', 'yes', 'single-hop'], 3),
      ['no', 'no', 'single-hop'],
      ['yes', 'no', 'single-hop'],
      ['unparsed', 'yes', 'single-hop'],
      ['no', 'unparsed', 'temporal'],
    ]);
    const [singleHop, temporal, all] = judgeAgreement([cell], 'A', 'B');
    expect(temporal).toMatchObject({
      category: 'temporal',
      n: 50,
      counts: { yesYes: 20, yesNo: 5, noYes: 10, noNo: 15 },
      accuracyA: 0.5,
      accuracyB: 0.6,
      agreement: 0.7,
      unparsed: 1,
    });
    expect(temporal!.kappa).toBeCloseTo(0.4, 12);
    // single-hop: n 5, A yes 4/5, B yes 3/5, observed 4/5, chance 0.8·0.6 + 0.2·0.4 = 0.56, κ = 0.24/0.44.
    expect(singleHop).toMatchObject({
      category: 'single-hop',
      n: 5,
      accuracyA: 0.8,
      accuracyB: 0.6,
      agreement: 0.8,
      unparsed: 1,
    });
    expect(singleHop!.kappa).toBeCloseTo(0.24 / 0.44, 12);
    expect(all).toMatchObject({
      category: 'all',
      n: 55,
      counts: { yesYes: 23, yesNo: 6, noYes: 10, noNo: 16 },
      unparsed: 2,
    });
    // A's accuracy leaves its unparsed verdict out of n and counts it.
    expect(judgedAccuracy(cell.probes, 'A')).toMatchObject({ n: 56, hits: 29, unparsed: 1 });
    expect(judgedAccuracy(cell.probes, 'A').interval!.lo).toBeLessThan(29 / 56);
    // Every probe with different verdicts is listed, an unparsed against a parsed one included.
    expect(disagreements([cell], 'A', 'B')).toHaveLength(5 + 10 + 1 + 2);
  });
});
