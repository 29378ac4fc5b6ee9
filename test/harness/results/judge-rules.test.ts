/** The offline judge's rules: containment, dates and numbers (off by one for temporal), token F1, stale values, rubrics, declines. */
import { describe, expect, it } from 'vitest';
import { datesIn, numbersIn, offlineVerdict, type JudgeItem } from '../../../harness/results/judge-rules.js';
import { adversarialScore, datasetScore } from '../../../harness/results/scoring.js';

const verdict = (item: Partial<JudgeItem> & Pick<JudgeItem, 'response'>): boolean =>
  offlineVerdict({ type: 'default', question: 'q?', expect: [], forbid: [], ...item }).correct;

describe('offline judge', () => {
  it('says an empty answer (an endpoint that sent content: null) is empty, whatever the question type', () => {
    for (const type of ['default', 'abstention', 'preference', 'temporal'] as const) {
      expect(offlineVerdict({ type, question: 'q?', expect: ['tea'], forbid: [], response: ' ' })).toEqual({
        correct: false,
        rule: 'the answer is empty (no text came back: an endpoint reply with content null?)',
      });
    }
  });

  it('accepts the gold contained after normalisation, and refuses a stale value beside it except for knowledge-update', () => {
    expect(verdict({ expect: ['Cast-Iron Pan'], response: 'You use a cast-iron   pan.' })).toBe(true);
    expect(verdict({ expect: ['six'], forbid: ['four'], response: 'It was four, now six.' })).toBe(false);
    expect(
      verdict({ type: 'knowledge-update', expect: ['six'], forbid: ['four'], response: 'It was four, now six.' }),
    ).toBe(true);
  });

  it('reads dates in any common format, off by one day only for temporal questions', () => {
    expect(datesIn('on May 7, 2023 and 2023-05-08 and the 9th of May 2023')).toEqual([
      Date.UTC(2023, 4, 9),
      Date.UTC(2023, 4, 7),
      Date.UTC(2023, 4, 8),
    ]);
    expect(verdict({ expect: ['7 May 2023'], response: 'It was on May 7th, 2023.' })).toBe(true);
    expect(verdict({ expect: ['7 May 2023'], response: 'It was on May 8th, 2023.' })).toBe(false);
    expect(verdict({ type: 'temporal', expect: ['7 May 2023'], response: 'It was on May 8th, 2023.' })).toBe(true);
    expect(verdict({ type: 'temporal', expect: ['7 May 2023'], response: 'It was on May 9th, 2023.' })).toBe(false);
  });

  it('matches numbers in digits or words, a count of days off by one only for temporal questions', () => {
    expect(numbersIn('three dogs, 1,200 cats and 2.5 birds')).toEqual([1200, 2.5, 3]);
    expect(verdict({ expect: ['3 days'], response: 'three days' })).toBe(true);
    expect(verdict({ expect: ['3 days'], response: 'It took 4 days.' })).toBe(false);
    expect(verdict({ type: 'temporal', expect: ['3 days'], response: 'It took 4 days.' })).toBe(true);
    expect(verdict({ type: 'temporal', expect: ['3 days'], response: 'It took 5 days.' })).toBe(false);
  });

  it('accepts a close paraphrase by token F1 at the threshold, not a loose one', () => {
    expect(verdict({ expect: ['adoption agencies'], response: 'adoption agency' })).toBe(true);
    expect(verdict({ expect: ['she went to adoption agencies in the city'], response: 'she likes painting' })).toBe(
      false,
    );
  });

  it('judges abstention by a decline, refusing one that names the unsupported answer; preference by the rubric', () => {
    expect(verdict({ type: 'abstention', response: "I don't know." })).toBe(true);
    expect(verdict({ type: 'abstention', response: 'That information is not mentioned.' })).toBe(true);
    expect(verdict({ type: 'abstention', response: 'It was blue.' })).toBe(false);
    expect(verdict({ type: 'abstention', forbid: ['blue'], response: "I don't know, maybe blue." })).toBe(false);
    const rubric = ['The user prefers vegetarian recipes with tofu and mushrooms'];
    expect(
      verdict({ type: 'preference', expect: rubric, response: 'Try a vegetarian stir-fry with tofu and mushrooms.' }),
    ).toBe(true);
    expect(verdict({ type: 'preference', expect: rubric, response: 'Try a steak.' })).toBe(false);
  });
});

describe("LoCoMo's scoring (task_eval/evaluation.py)", () => {
  it('scores adversarial answers by its two abstention phrases, lower-cased', () => {
    expect(adversarialScore('No information available about that.')).toBe(1);
    expect(adversarialScore('It is NOT MENTIONED in the conversation.')).toBe(1);
    expect(adversarialScore("I don't know.")).toBe(0);
    expect(datasetScore('locomo-adversarial', 'not mentioned', undefined)).toBe(1);
  });

  it('scores multi-hop by comma-split multi-answer F1 and the rest by token F1, best over the gold strings', () => {
    expect(datasetScore('locomo-f1-multi', 'hiking, painting', ['painting, hiking'])).toBe(1);
    expect(datasetScore('locomo-f1', 'hiking, painting', ['painting, hiking'])).toBe(1);
    expect(datasetScore('locomo-f1-multi', 'hiking', ['painting, hiking'])).toBe(0.5);
    expect(datasetScore('locomo-f1', 'the hikes', ['hiking', 'hike'])).toBe(1);
    expect(datasetScore('contains', 'x', ['x'])).toBeUndefined();
  });
});
