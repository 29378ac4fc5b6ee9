/**
 * Every recall metric pinned on hand-made contexts (English and Chinese): what each one counts
 * and, as important, what it refuses to count (terms scattered over unrelated messages, a stale
 * value beside the current one, yes/no gold answers).
 */
import { describe, expect, it, vi } from 'vitest';
import { answerRecall, containsAny, judgeAnswer, judgeContext } from '../../../harness/core/metrics.js';
import {
  EVIDENCE_COVERAGE_THRESHOLD,
  evidenceRecall,
  evidenceTable,
  probeEvidence,
  type ProbeEvidence,
} from '../../../harness/scenarios/evidence.js';
import type { Step } from '../../../harness/scenarios/format.js';
import { locomoNormalize, multiTokenF1, tokenF1 } from '../../../harness/results/scoring.js';
import { normalizeText, termSet } from '../../../harness/core/text.js';

const messages = (...texts: string[]): string[] => texts.map(normalizeText);
const context = (...texts: string[]): string => messages(...texts).join('\n');

describe('stale and conflict exposure', () => {
  it('sees the stale value beside the current one (conflict), which stale exposure does not', () => {
    const both = judgeContext(context('我们家完全素食。', '我们家现在开始吃鱼了。'), ['开始吃鱼'], ['完全素食']);
    expect(both).toEqual({
      contextRecall: true,
      staleExposure: false,
      conflictExposure: true,
      currentAfterStale: true,
    });
  });

  it('records when the stale value comes last in the context', () => {
    const verdict = judgeContext(
      context('My flight is on Thursday now.', 'Reminder: flight on Tuesday.'),
      ['Thursday'],
      ['Tuesday'],
    );
    expect(verdict).toMatchObject({ conflictExposure: true, currentAfterStale: false });
  });

  it('counts stale exposure only without the current value, and neither without the stale value', () => {
    expect(judgeContext(context('I take oat milk.'), ['soy milk'], ['oat milk'])).toEqual({
      contextRecall: false,
      staleExposure: true,
      conflictExposure: true,
    });
    expect(judgeContext(context('I take soy milk.'), ['soy milk'], ['oat milk'])).toEqual({
      contextRecall: true,
      staleExposure: false,
      conflictExposure: false,
    });
  });
});

describe('answer recall', () => {
  it('is the share of the gold answer content words found within one message', () => {
    expect(
      answerRecall(['Adoption agencies'], messages('Caroline: I have been researching adoption agencies lately.')),
    ).toBe(1);
    // "rapeseed" in one message and "oil" in another: the best single message holds one of two.
    expect(answerRecall(['rapeseed oil'], messages('Rapeseed is grown nearby.', 'Any oil will do.'))).toBe(0.5);
    expect(answerRecall(['rapeseed oil', 'corn oil'], messages('Use corn oil instead.'))).toBe(1);
  });

  it('finds a date in a dated message, and nothing in a context without it', () => {
    expect(
      answerRecall(['7 May 2023'], messages('[8 May 2023, 13:56] Caroline: I went to a support group yesterday.')),
    ).toBe(1);
    expect(answerRecall(['7 May 2023'], messages('Caroline: I went to a support group yesterday.'))).toBe(0);
  });

  it('works on Chinese, where words have no spaces', () => {
    expect(answerRecall(['花生'], messages('对了，我儿子对花生过敏。'))).toBe(1);
    expect(answerRecall(['铸铁锅'], messages('我家只有一口铸铁锅。', '红烧肉要炖一个小时。'))).toBe(1);
    // 菜籽油 is 菜籽 + 油: the other oil holds one of its two words.
    expect(answerRecall(['菜籽油'], messages('可以换成玉米油。'))).toBe(0.5);
    expect(answerRecall(['烤箱'], messages('红烧肉要炖一个小时。'))).toBe(0);
  });

  it('segments only the messages that hold one of the words as text (every term is a piece of its text)', () => {
    const texts = [
      'Ｆｕｌｌ-width ＡＢＣ, the ﬁne ligature, Straße and İstanbul',
      "O’Neil's café: 3.14 and 1,000 items — done → next",
      '我家只有一口铸铁锅。红烧肉要炖一个小时。',
      'Привет, как дела? Ελληνικά κείμενα 😀👍🏽 e\u0301',
    ];
    for (const text of texts) {
      const normalized = normalizeText(text);
      for (const term of termSet(normalized)) expect(normalized).toContain(term);
    }
    // Text off the Latin fast path goes to Intl.Segmenter: none of it is segmented when no word is in it.
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      const unique = `${Date.now()}`;
      const lacking = messages(...Array.from({ length: 20 }, (_, i) => `Привет ${unique} ${i}, как дела сегодня?`));
      expect(answerRecall(['rapeseed oil'], lacking)).toBe(0);
      expect(segment).not.toHaveBeenCalled();
      expect(answerRecall(['rapeseed oil'], [...lacking, ...messages(`Масло rapeseed ${unique}`)])).toBe(0.5);
      expect(segment).toHaveBeenCalled();
    } finally {
      segment.mockRestore();
    }
  });

  it('is null for gold answers without content words (yes/no) and for abstention probes', () => {
    expect(answerRecall(['Yes'], messages('Yes, I think so.'))).toBeNull();
    expect(answerRecall(undefined, messages('anything'))).toBeNull();
  });
});

/** Evidence of a probe citing `cited` (messages of a step each), its rarity weighed over the scenario's `others` messages and the cited ones. */
function evidenceOf(cited: string[][], others: string[] = []): ProbeEvidence {
  const steps = [
    ...cited.map((texts, i) => ({ kind: 'assistant' as const, id: `e${i}`, assistant: texts.join('\n') })),
    ...others.map((text) => ({ kind: 'assistant' as const, assistant: text })),
  ];
  const table = evidenceTable(steps as Step[]);
  const { rarity } = probeEvidence(
    {
      kind: 'probe',
      probe: '?',
      forbid: [],
      category: 'extraction',
      evidence: cited.map((_, i) => `e${i}`),
    } as unknown as Step,
    table,
  )!;
  return { cited, rarity };
}

/** Chat that shares the words of the evidence below ("careful", "oil", "cook"...), so those weigh little. */
const CHAT = [
  'Please be careful with the hot oil when you cook.',
  'I have to be careful, so I cook with less oil.',
  'We are a family that likes to cook.',
  'Be careful: the oil is hot.',
  'So I have to cook tonight.',
  'The family is coming, so I cook.',
];

describe('evidence recall', () => {
  const allergy = [
    'Oh, and my son is allergic to peanuts, so I have to be careful.',
    'Then skip peanut oil; rapeseed oil works just as well.',
  ];
  const pot = ['The only pot I have is a cast-iron Dutch oven.'];

  it('holds a step its message is quoted in (the strategy kept the message itself), under either rule', () => {
    for (const transforms of [false, true])
      expect(evidenceRecall(evidenceOf([allergy], CHAT), messages('Hello!', allergy[0]!, 'Bye.'), transforms)).toEqual({
        value: 1,
        findings: ['verbatim'],
      });
  });

  it('for a strategy that keeps messages verbatim, only the quoted text counts', () => {
    const summary = messages('The user says: my son is allergic to peanuts, be careful.');
    expect(evidenceRecall(evidenceOf([allergy], CHAT), summary, false)).toEqual({ value: 0, findings: ['missing'] });
    // The message less its last character is no quote.
    expect(evidenceRecall(evidenceOf([pot], CHAT), messages(pot[0]!.slice(0, -2)), false).findings).toEqual([
      'missing',
    ]);
  });

  it("holds a transformed step when one memory covers a sentence's rare terms (a summary keeps the fact, not the message)", () => {
    const step = ['We are a family of four. Oh, and my son is allergic to peanuts, so please be careful with the oil.'];
    expect(
      evidenceRecall(
        evidenceOf([step], CHAT),
        messages('The user says: my son is allergic to peanuts, be careful.'),
        true,
      ).findings,
    ).toEqual(['covered']);
    // A short sentence ("Thanks!") is never enough on its own.
    expect(
      evidenceRecall(
        evidenceOf([['Thanks! The cast-iron pot simmered the braised pork for an hour.']], CHAT),
        messages('Thanks!'),
        true,
      ).findings,
    ).toEqual(['missing']);
  });

  it('common words weigh nothing: a chatty memory sharing every common word of the evidence does not hold it', () => {
    const step = ['I have to be careful, so I cook with less oil: my son is allergic to peanuts.'];
    // Half the sentence's terms (careful, cook, oil...) are in this memory, none of its rare ones.
    const chatty = messages('Be careful, I cook with less oil, so I have to watch it.');
    expect(evidenceRecall(evidenceOf([step], CHAT), chatty, true).findings).toEqual(['missing']);
    expect(
      evidenceRecall(evidenceOf([step], CHAT), messages('Note: the son is allergic to peanuts.'), true).findings,
    ).toEqual(['covered']);
  });

  it('holds a step a single memory covers, and counts each step apart', () => {
    const summary = 'User: my son is allergic to peanuts; be careful.';
    const found = evidenceRecall(evidenceOf([allergy, pot], CHAT), messages(summary), true);
    expect(found).toEqual({ value: 0.5, findings: ['covered', 'missing'] });
    expect(EVIDENCE_COVERAGE_THRESHOLD).toBe(0.5);
  });

  it('holds a step covered at exactly the threshold, and not just below it', () => {
    // Four terms of equal rarity: a memory with two of them holds exactly half the weight.
    const cited = [[normalizeText('kayak paddle harbour sunrise')]];
    const rarity = { kayak: 1, paddle: 1, harbour: 1, sunrise: 1 };
    const evidence: ProbeEvidence = { cited, rarity };
    expect(EVIDENCE_COVERAGE_THRESHOLD).toBe(0.5);
    expect(evidenceRecall(evidence, messages('a kayak in the harbour'), true).findings).toEqual(['covered']);
    // Just below: the same two terms weigh a little less than half.
    const lighter: ProbeEvidence = { cited, rarity: { ...rarity, paddle: 1.01, sunrise: 1.01 } };
    expect(evidenceRecall(lighter, messages('a kayak in the harbour'), true).findings).toEqual(['missing']);
  });

  it('scores 0 when the evidence terms are only scattered over unrelated messages', () => {
    // Every content word of the pot step appears somewhere, but no one message covers half of it.
    const scattered = messages(
      'Only the weekend works for me.',
      'I have a pot of tea.',
      'Cast the net wide.',
      'Iron the shirts first.',
      'The Dutch are coming.',
      'Preheat the oven.',
    );
    expect(evidenceRecall(evidenceOf([pot], CHAT), scattered, true)).toEqual({ value: 0, findings: ['missing'] });
  });

  it('works on Chinese evidence', () => {
    const step = ['我们家四口人，两个大人两个孩子。对了，我儿子对花生过敏，做菜的时候要特别注意。'];
    const chat = ['今天做菜的时候要特别注意火候。', '我们家四口人都喜欢吃面。', '两个孩子在做作业。'];
    expect(
      evidenceRecall(evidenceOf([step], chat), messages('用户的儿子对花生过敏，做菜要特别注意。'), true).findings,
    ).toEqual(['covered']);
    expect(
      evidenceRecall(evidenceOf([step], chat), messages('红烧肉要炖一个小时。', '购物清单：五花肉、冰糖。'), true)
        .findings,
    ).toEqual(['missing']);
    expect(
      evidenceRecall(evidenceOf([step], chat), messages('用户的儿子对花生过敏，做菜要特别注意。'), false).findings,
    ).toEqual(['missing']);
  });
});

describe('answer accuracy and LoCoMo scoring', () => {
  it('accepts an expect string without a forbid string; abstention wants a decline', () => {
    expect(judgeAnswer('Your flight is on Thursday.', ['Thursday'], ['Tuesday'])).toBe(true);
    expect(judgeAnswer('Thursday, not Tuesday.', ['Thursday'], ['Tuesday'])).toBe(false);
    expect(judgeAnswer('No information available.', undefined, [])).toBe(true);
    expect(judgeAnswer('It is not mentioned in the conversation.', undefined, [])).toBe(true);
    expect(judgeAnswer('我不知道。', undefined, [])).toBe(true);
    expect(judgeAnswer('A Bosch oven.', undefined, [])).toBe(false);
    expect(containsAny(normalizeText('ＴＨＵＲＳＤＡＹ'), ['thursday'])).toBe(true);
  });

  it('normalises as evaluation.py does: commas, case, punctuation and a/an/the/and', () => {
    expect(locomoNormalize('The Adoption, agencies!')).toBe('adoption agencies');
    expect(locomoNormalize('Pottery and painting')).toBe('pottery painting');
  });

  it('scores token F1 over stemmed tokens, with known values', () => {
    expect(tokenF1('7 May 2023', '7 May 2023')).toBe(1);
    expect(tokenF1('the adoption agencies', 'Adoption agencies')).toBe(1);
    expect(tokenF1('She was running', 'runs')).toBeCloseTo(0.5, 10); // stems: she, wa, run / run → P 1/3, R 1
    expect(tokenF1('Sunday', 'Monday')).toBe(0);
    // Recall below 1: P 1, R 1/2 → 2/3. A repeated token counts once per gold occurrence: P 1/2, R 1 → 2/3.
    expect(tokenF1('Paris', 'Paris London')).toBeCloseTo(2 / 3, 10);
    expect(tokenF1('Paris Paris', 'Paris')).toBeCloseTo(2 / 3, 10);
    // Multi-hop: each gold part takes its best predicted part; the mean over gold parts.
    expect(multiTokenF1('Paris, London', 'London, Berlin')).toBe(0.5);
  });
});
