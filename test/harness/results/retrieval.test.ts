/** Retrieval metrics against hand-computed values (LongMemEval's definitions), and which probes get them. */
import { describe, expect, it } from 'vitest';
import {
  poolSummaries,
  probeRetrieval,
  scoreRanking,
  sessionsOfSteps,
  retrievalByLabel,
  summarizeRetrieval,
  withRetrieval,
} from '../../../harness/results/retrieval.js';
import type { Step } from '../../../harness/scenarios/format.js';
import { idsOfOpaque } from '../../../harness/scenarios/step-ids.js';

describe('scoreRanking', () => {
  it('computes recall_any, recall_all and NDCG with LongMemEval discount (ranks 1 and 2 weigh the same)', () => {
    // Relevant at ranks 2 and 3, two relevant items in the store: DCG = 1 + 1/log2(3), ideal = 1 + 1.
    const ranking = [['x'], ['a'], ['b'], ['y']];
    const at3 = scoreRanking(ranking, ['a', 'b'], 3, 2);
    expect(at3.recallAny).toBe(1);
    expect(at3.recallAll).toBe(1);
    expect(at3.ndcg).toBeCloseTo((1 + 1 / Math.log2(3)) / 2, 10);
    const at2 = scoreRanking(ranking, ['a', 'b'], 2, 2);
    expect([at2.recallAny, at2.recallAll]).toEqual([1, 0]);
    expect(at2.ndcg).toBeCloseTo(1 / 2, 10);
    expect(scoreRanking(ranking, ['a', 'b'], 1, 2)).toEqual({ k: 1, recallAny: 0, recallAll: 0, ndcg: 0 });
    expect(scoreRanking([], ['a'], 5, 1)).toEqual({ k: 5, recallAny: 0, recallAll: 0, ndcg: 0 });
  });

  it("takes a protocol's rules: a wider cutoff reported at k, relevance apart from the gold ids, recall_all without gold", () => {
    // Sessions ranked s1, s2, s2, s3 by their turns; only the third turn is relevant (a has_answer turn).
    const ranking = [['s1'], ['s2'], ['s2'], ['s3']];
    const rules = { cutoff: 4, relevant: [false, false, true, false] };
    const wide = scoreRanking(ranking, ['s2'], 3, 1, rules);
    expect(wide.k).toBe(3);
    expect([wide.recallAny, wide.recallAll]).toEqual([1, 1]);
    // The second item holds the gold id but is not relevant: DCG 1/log2(3) against an ideal of 1.
    expect(wide.ndcg).toBeCloseTo(1 / Math.log2(3), 10);
    expect(scoreRanking(ranking, ['s2'], 1, 1, { relevant: [false, false, true, false] })).toEqual({
      k: 1,
      recallAny: 0,
      recallAll: 0,
      ndcg: 0,
    });
    // No gold: recall_all is 0 by default, 1 as Python's all() of nothing.
    expect(scoreRanking(ranking, [], 3, 0)).toEqual({ k: 3, recallAny: 0, recallAll: 0, ndcg: 0 });
    expect(scoreRanking(ranking, [], 3, 0, { recallAllWithoutGold: 1 })).toEqual({
      k: 3,
      recallAny: 0,
      recallAll: 1,
      ndcg: 0,
    });
  });

  it('counts two evidence steps held by one item as one relevant item', () => {
    // u3 and t1 are one exchange: found at rank 1 is a perfect ranking.
    const figures = probeRetrieval([['u3', 't1'], ['u9']], ['u3', 't1'], [1, 5]);
    expect(figures.turn).toEqual([
      { k: 1, recallAny: 1, recallAll: 1, ndcg: 1 },
      { k: 5, recallAny: 1, recallAll: 1, ndcg: 1 },
    ]);
    expect(figures.session).toBeUndefined();
  });

  it('keeps NDCG within 1 when several items hold the same evidence step (entity summaries)', () => {
    const figures = probeRetrieval([['e1'], ['e1', 'x'], ['y']], ['e1'], [5]);
    expect(figures.turn[0]).toEqual({ k: 5, recallAny: 1, recallAll: 1, ndcg: 1 });
    expect(probeRetrieval([['y'], ['e1'], ['e1']], ['e1'], [5]).turn[0]!.ndcg).toBeCloseTo(
      (1 + 1 / Math.log2(3)) / 2,
      10,
    );
  });

  it('ranks sessions by their first appearance, each once', () => {
    const steps: Step[] = [
      { kind: 'session', session: 'new' },
      { kind: 'user', id: 'a1', user: 'one' },
      { kind: 'user', id: 'a2', user: 'two' },
      { kind: 'session', session: 'new' },
      { kind: 'user', id: 'b1', user: 'three' },
    ];
    const sessionOf = sessionsOfSteps(steps)!;
    expect([...sessionOf]).toEqual([
      ['a1', 1],
      ['a2', 1],
      ['b1', 2],
    ]);
    // Turn ranking a1, a2, b1 with b1 the evidence: turn rank 3, session rank 2 (a2 repeats session 1).
    const figures = probeRetrieval([['a1'], ['a2'], ['b1']], ['b1'], [1, 2], sessionOf);
    expect(figures.turn.map((at) => at.recallAny)).toEqual([0, 0]);
    expect(figures.session).toEqual([
      { k: 1, recallAny: 0, recallAll: 0, ndcg: 0 },
      { k: 2, recallAny: 1, recallAll: 1, ndcg: 1 },
    ]);
    expect(sessionsOfSteps([{ kind: 'user', id: 'u', user: 'x' }])).toBeUndefined();
  });

  it("derives a scenario's sessions and opaque ids once for its cells in a row (the same steps), afresh for other steps", () => {
    const steps: Step[] = [
      { kind: 'session', session: 'new' },
      { kind: 'user', id: 'a1', user: 'one' },
    ];
    expect(sessionsOfSteps(steps)).toBe(sessionsOfSteps(steps));
    expect(idsOfOpaque(steps)).toBe(idsOfOpaque(steps));
    const copy = [...steps];
    expect(sessionsOfSteps(copy)).not.toBe(sessionsOfSteps(steps));
    expect(sessionsOfSteps(copy)).toEqual(sessionsOfSteps(steps));
    expect(idsOfOpaque(copy)).toEqual(idsOfOpaque(steps));
    // Only the last scenario's is kept: a run of many questions does not hold every one's.
    const first = sessionsOfSteps(steps);
    sessionsOfSteps(copy);
    expect(sessionsOfSteps(steps)).not.toBe(first);
  });
});

describe('withRetrieval', () => {
  const steps: Step[] = [
    { kind: 'user', id: 'u1', user: 'My cat is Mochi.' },
    { kind: 'probe', probe: 'Cat?', expect: ['Mochi'], forbid: [], category: 'extraction', evidence: ['u1'] },
    { kind: 'probe', probe: 'Dog?', forbid: [], category: 'abstention', evidence: ['u1'] },
    { kind: 'probe', probe: 'Fish?', expect: ['Nemo'], forbid: [], category: 'extraction', evidence: [] },
  ];

  it('scores answerable probes with evidence and a ranking, and pools them', () => {
    const probes = withRetrieval(
      [
        { step: 1, category: 'extraction' as const, retrieved: [['s0']] },
        { step: 2, category: 'abstention' as const, retrieved: [['s0']] },
        { step: 3, category: 'extraction' as const, retrieved: [['s0']] },
        { step: 1, category: 'extraction' as const },
      ],
      { steps },
      [1],
    );
    expect(probes.map((probe) => probe.retrieval !== undefined)).toEqual([true, false, false, false]);
    // The strategy ranked opaque ids (`s0`: step 0's messages): the record holds the scenario's ids.
    expect(probes.map((probe) => probe.retrieved)).toEqual([[['u1']], [['u1']], [['u1']], undefined]);
    expect(summarizeRetrieval(probes)).toEqual({
      turn: { n: 1, atK: [{ k: 1, recallAny: 1, recallAll: 1, ndcg: 1 }] },
    });
    expect(summarizeRetrieval([{}])).toBeUndefined();
  });
});

describe('message-level evidence', () => {
  it("maps an exchange to both its messages' ids, so evidence citing the reply alone is found in it", () => {
    const steps: Step[] = [
      {
        kind: 'user',
        id: 'D1:1',
        replyId: 'D1:2',
        user: 'Caroline: I went to a support group.',
        assistant: 'Melanie: I signed up for pottery.',
      },
      { kind: 'user', id: 'D1:3', user: 'Caroline: Adoption agencies.' },
      { kind: 'probe', probe: 'Pottery?', expect: ['pottery'], forbid: [], category: 'extraction', evidence: ['D1:2'] },
    ];
    const [probe] = withRetrieval(
      [{ step: 2, category: 'extraction' as const, retrieved: [['s1'], ['s0']] }],
      { steps },
      [1, 2],
    );
    expect(probe!.retrieved).toEqual([['D1:3'], ['D1:1', 'D1:2']]);
    expect(probe!.retrieval!.turn.map((at) => at.recallAll)).toEqual([0, 1]);
  });
});

describe('poolSummaries', () => {
  it('weights each summary by its probes', () => {
    const at = (recallAny: number) => [{ k: 5, recallAny, recallAll: recallAny, ndcg: recallAny }];
    const pooled = poolSummaries([
      { turn: { n: 1, atK: at(1) } },
      { turn: { n: 3, atK: at(0) }, session: { n: 3, atK: at(0.5) } },
    ])!;
    expect(pooled.turn).toEqual({ n: 4, atK: [{ k: 5, recallAny: 0.25, recallAll: 0.25, ndcg: 0.25 }] });
    expect(pooled.session).toEqual({ n: 3, atK: [{ k: 5, recallAny: 0.5, recallAll: 0.5, ndcg: 0.5 }] });
    expect(poolSummaries([])).toBeUndefined();
  });
});

describe('retrievalByLabel', () => {
  it("pools a dataset's own categories apart, leaving unlabelled probes out", () => {
    const figures = (hit: number) => ({ turn: [{ k: 1, recallAny: hit, recallAll: hit, ndcg: hit }] });
    const byLabel = retrievalByLabel([
      { label: 'temporal', retrieval: figures(1) },
      { label: 'temporal', retrieval: figures(0) },
      { label: 'single-hop', retrieval: figures(1) },
      { retrieval: figures(0) },
    ])!;
    expect(Object.keys(byLabel)).toEqual(['single-hop', 'temporal']);
    expect(byLabel.temporal!.turn).toEqual({ n: 2, atK: [{ k: 1, recallAny: 0.5, recallAll: 0.5, ndcg: 0.5 }] });
    expect(retrievalByLabel([{ retrieval: figures(1) }])).toBeUndefined();
  });
});
