/** One probe's whole record from one call: judgement, evidence, the ranking in the scenario's ids with its figures, distance. */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { KEPT_RANKING_DEPTH, ProbeScoring, rankDepthOf } from '../../../harness/results/probe-record.js';
import type { ProbeStep, Step } from '../../../harness/scenarios/format.js';

const probe: ProbeStep = {
  kind: 'probe',
  probe: 'What is my locker code?',
  expect: ['4172'],
  forbid: ['3391'],
  category: 'update',
  evidence: ['u2'],
};
const steps: Step[] = [
  { kind: 'user', id: 'u1', user: 'My locker code is 3391.', assistant: 'Noted.' },
  { kind: 'user', id: 'u2', user: 'I changed my locker code to 4172.', assistant: 'Got it.' },
  { kind: 'user', id: 'u3', user: 'The weather is nice today.', assistant: 'It is.' },
  probe,
];

describe('ProbeScoring.record', () => {
  const tokens = new TokenCounter('gpt-4o-mini');
  const context = {
    messages: [new HumanMessage('I changed my locker code to 4172.'), new AIMessage('Got it.')],
    retrieved: [{ stepIds: ['s2'] }, { stepIds: ['s1'] }, { stepIds: ['s0'] }],
  };

  it('judges the context and answer, maps the ranking to the scenario ids, scores it at each k and adds the distance', () => {
    const record = new ProbeScoring({ steps, retrievalK: [1, 2] }, tokens).record({
      index: 3,
      step: probe,
      turn: 3,
      context,
      loadMs: 1,
      answer: '4172',
      keepsVerbatim: true,
    });
    expect(record).toMatchObject({
      step: 3,
      turn: 3,
      category: 'update',
      contextRecall: true,
      staleExposure: false,
      conflictExposure: false,
      answerCorrect: true,
      evidenceRecall: 1,
      evidenceCoverage: 1,
    });
    // Cut to the deepest k (2), in the scenario's ids.
    expect(record.retrieved).toEqual([['u3'], ['u2']]);
    expect(record.retrieval?.turn.map(({ k, recallAny }) => [k, recallAny])).toEqual([
      [1, 0],
      [2, 1],
    ]);
    // u2 is two exchanges back; u3's text (both messages) was saved after it.
    expect(record.distance).toEqual({
      exchanges: 2,
      tokens: tokens.countText('The weather is nice today.') + tokens.countText('It is.'),
    });
    expect(record.contextTokens).toBe(tokens.countMessages(context.messages));
  });

  it('leaves out the context figures when asked (a ranking-only cell), every other figure as it was', () => {
    const seen = { index: 3, step: probe, turn: 3, context, loadMs: 1, keepsVerbatim: true };
    const full = new ProbeScoring({ steps, retrievalK: [1, 2] }, tokens).record(seen);
    const ranking = new ProbeScoring({ steps, retrievalK: [1, 2], contextFigures: false }, tokens).record(seen);
    expect(full).toMatchObject({ answerRecall: 1, evidenceCoverage: 1 });
    expect(full.contextTokens).toBeGreaterThan(0);
    const { contextTokens, answerRecall, evidenceCoverage, ...rest } = full;
    expect(ranking).toEqual(rest);
  });

  it('scores a probe outside the scenario (a concurrent session) without evidence, figures or distance, its ranking still mapped', () => {
    const record = new ProbeScoring({ steps }, tokens).record({
      index: 30_000,
      step: probe,
      turn: 3,
      context,
      loadMs: 1,
      answer: '4172',
      keepsVerbatim: true,
    });
    expect(record.evidenceRecall).toBeNull();
    expect(record.retrieval).toBeUndefined();
    expect(record.distance).toBeUndefined();
    expect(record.retrieved).toEqual([['u3'], ['u2'], ['u1']]);
  });

  it('ranks as deep as the deepest k, or the whole store under a protocol', () => {
    expect(rankDepthOf({})).toBe(10);
    expect(rankDepthOf({ retrievalK: [3, 25] })).toBe(25);
    expect(rankDepthOf({ protocol: 'longmemeval' })).toBeGreaterThanOrEqual(100_000);
  });

  it('scores the whole ranking under a protocol and keeps its top 50, or all of it with keepRankings', () => {
    // Sixty user turns of session 0 outrank the gold turn of session 1: LongMemEval's session@3 of a
    // turn ranking widens past the sixty until three sessions are in, so it needs the 61st item.
    const many: Step[] = [
      ...Array.from({ length: 60 }, (_, i): Step => ({ kind: 'user', id: `u${i}`, user: `turn ${i}` })),
      { kind: 'session', session: 'new' } as Step,
      { kind: 'user', id: 'gold', user: 'My locker code is 4172.' },
      { kind: 'session', session: 'new' } as Step,
      { kind: 'user', id: 'last', user: 'Bye.' },
      { ...probe, evidence: ['gold'] },
    ];
    const ranked = [
      ...Array.from({ length: 60 }, (_, i) => ({ stepIds: [`s${i}`] })),
      { stepIds: ['s61'] },
      { stepIds: ['s63'] },
    ];
    const record = (keepRankings?: boolean) =>
      new ProbeScoring(
        { steps: many, protocol: 'longmemeval', ...(keepRankings ? { keepRankings } : {}) },
        tokens,
      ).record({
        index: 64,
        step: many[64] as ProbeStep,
        turn: 62,
        context: { messages: [], retrieved: ranked },
        loadMs: 1,
        answer: '',
        keepsVerbatim: true,
      });
    const cut = record();
    const sessionAt3 = cut.protocolRetrieval?.session?.find(({ k }) => k === 3);
    expect(sessionAt3?.recallAny).toBe(1);
    expect(cut.retrieved).toHaveLength(KEPT_RANKING_DEPTH);
    expect(cut.retrieved?.[0]).toEqual(['u0']);
    const whole = record(true);
    expect(whole.retrieved).toHaveLength(62);
    expect(whole.protocolRetrieval).toEqual(cut.protocolRetrieval);
  });
});
