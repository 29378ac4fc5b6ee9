/** One probe's whole record from one call: judgement, evidence, the ranking in the scenario's ids with its figures, distance. */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { ProbeScoring, rankDepthOf } from '../../../harness/results/probe-record.js';
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
});
