/**
 * A leniency probe for the offline judge: vague, on-topic, wrong answers (the kind an audit of
 * LoCoMo found a gpt-4o-mini judge accepting) must all fail, including answers that only quote a
 * dated message whose stamp holds the gold's year, date or digits; the right answers to the same
 * questions pass.
 */
import { describe, expect, it } from 'vitest';
import { offlineVerdict, ownWords, type JudgeItem, type JudgeType } from '../../../harness/results/judge-rules.js';

interface Probe {
  type: JudgeType;
  question: string;
  expect: string[];
  forbid?: string[];
  wrong: string;
  right: string;
}

const PROBES: readonly Probe[] = [
  {
    type: 'default',
    question: 'What did Caroline research?',
    expect: ['Adoption agencies'],
    wrong: 'Caroline researched a few different options for her future.',
    right: 'She researched adoption agencies.',
  },
  {
    type: 'temporal',
    question: 'When did Melanie paint a sunrise?',
    expect: ['2022'],
    wrong: '[8 May 2023, 13:56] Melanie: I painted that lake sunrise a while back.',
    right: 'In 2022.',
  },
  {
    type: 'temporal',
    question: 'When did Melanie start painting?',
    expect: ['2023'],
    wrong: '[8 May 2023, 13:56] Melanie: Painting has become my favourite way to relax.',
    right: 'Sometime in 2023.',
  },
  {
    type: 'temporal',
    question: 'When did Caroline go to the support group?',
    expect: ['7 May 2023'],
    wrong: '[7 May 2023, 13:56] Caroline: I went to a support group recently.',
    right: 'On 7 May 2023.',
  },
  {
    type: 'temporal',
    question: 'When did Nate adopt the dog?',
    expect: ['The week before 9 June 2023'],
    wrong: 'Around June, I think.',
    right: 'The week before 9 June 2023.',
  },
  {
    type: 'temporal',
    question: 'When did Leo go hiking?',
    expect: ['The Friday before 27 May 2023'],
    wrong: '[27 May 2023, 10:30] Leo: We went hiking on Friday.',
    right: 'On Friday, 26 May 2023.',
  },
  {
    type: 'temporal',
    question: 'When was the concert?',
    expect: ['June 2023'],
    wrong: '[15 June 2023, 18:00] Leo: The concert was amazing.',
    right: 'It was in June 2023.',
  },
  {
    type: 'temporal',
    question: 'When did Maya start her class?',
    expect: ['2 May 2023'],
    wrong: 'DATE: 9:00 am on 2 May, 2023\nMaya: I started a new class.',
    right: 'She started it on 2 May 2023.',
  },
  {
    type: 'temporal',
    question: 'How long has Caroline had her friends?',
    expect: ['4 years'],
    wrong: 'A few years.',
    right: 'For 4 years.',
  },
  {
    type: 'default',
    question: 'How many children does Melanie have?',
    expect: ['3'],
    wrong: '[3 June 2023, 13:30] Melanie: The kids had fun at the beach.',
    right: 'She has 3 kids.',
  },
  {
    type: 'default',
    question: 'How many hours did Caroline volunteer?',
    expect: ['13'],
    wrong: '[8 May 2023, 13:56] Caroline: I have been volunteering for years.',
    right: 'Caroline volunteered 13 hours.',
  },
  {
    type: 'default',
    question: 'What are Melanie’s hobbies?',
    expect: ['pottery, camping, painting'],
    wrong: 'She has several hobbies she enjoys with her family.',
    right: 'Pottery, camping and painting.',
  },
  {
    type: 'default',
    question: 'Would Caroline pursue writing as a career?',
    expect: ['Likely no'],
    wrong: 'It depends on what she decides later.',
    right: 'Likely no; she wants to be a counsellor.',
  },
  {
    type: 'knowledge-update',
    question: 'Which day is the flight now?',
    expect: ['Thursday'],
    forbid: ['Tuesday'],
    wrong: 'The flight was on Tuesday, I think.',
    right: 'Thursday now (it was Tuesday before).',
  },
  {
    type: 'default',
    question: "What is the name of Leo's dog?",
    expect: ['Pepper'],
    wrong: "It's a lovely name for a dog.",
    right: 'His dog is called Pepper.',
  },
  {
    type: 'default',
    question: 'What did Maya make in her first pottery class?',
    expect: ['a bowl, mugs'],
    wrong: 'Some pottery pieces for her kitchen.',
    right: 'A bowl and some mugs.',
  },
  {
    type: 'default',
    question: 'Where did Caroline move from?',
    expect: ['Sweden'],
    wrong: 'Her home country, which she misses a lot.',
    right: 'From Sweden.',
  },
  {
    type: 'default',
    question: 'What sport does Melanie do?',
    expect: ['running'],
    wrong: 'She likes staying active outdoors.',
    right: 'She goes running.',
  },
  {
    type: 'default',
    question: 'What is Caroline’s identity?',
    expect: ['transgender woman'],
    wrong: 'She is a woman with a big heart.',
    right: 'Caroline is a transgender woman.',
  },
  {
    type: 'default',
    question: 'What cause does Caroline care about?',
    expect: ['mental health'],
    wrong: 'She cares about health a lot.',
    right: 'Mental health.',
  },
  {
    type: 'default',
    question: 'Which day did Leo go to the market?',
    expect: ['Saturday'],
    wrong: 'On the weekend.',
    right: 'Saturday.',
  },
  {
    type: 'preference',
    question: 'Can you suggest something to cook tonight?',
    expect: ['suggests vegetarian recipes without peanuts'],
    wrong: 'Here are some tasty recipes you might enjoy.',
    right: 'I suggest these vegetarian recipes, all without peanuts: lentil curry or a veggie stir-fry.',
  },
  {
    type: 'abstention',
    question: "What is the name of Caroline's cat?",
    expect: [],
    forbid: ['Biscuit'],
    wrong: 'Her cat is called Biscuit.',
    right: 'That was never mentioned in the conversation.',
  },
  {
    type: 'abstention',
    question: 'What brand is my oven?',
    expect: [],
    wrong: 'Probably a well-known brand.',
    right: 'Not mentioned in the conversation',
  },
];

const judged = (probe: Probe, response: string) =>
  offlineVerdict({
    type: probe.type,
    question: probe.question,
    expect: probe.expect,
    forbid: probe.forbid ?? [],
    response,
  } satisfies JudgeItem);

describe('leniency probe: the offline judge', () => {
  it('fails every vague, on-topic, wrong answer', () => {
    expect(PROBES.length).toBeGreaterThanOrEqual(20);
    expect(new Set(PROBES.map((probe) => probe.type)).size).toBeGreaterThanOrEqual(5);
    const accepted = PROBES.filter((probe) => judged(probe, probe.wrong).correct).map(
      (probe) => `${probe.question} ← ${probe.wrong} (${judged(probe, probe.wrong).rule})`,
    );
    expect(accepted).toEqual([]);
  });

  it('passes the right answer to each of the same questions', () => {
    const refused = PROBES.filter((probe) => !judged(probe, probe.right).correct).map(
      (probe) => `${probe.question} ← ${probe.right} (${judged(probe, probe.right).rule})`,
    );
    expect(refused).toEqual([]);
  });

  it('reads the answer’s own words: quoted date stamps and session date lines are left out', () => {
    expect(ownWords('[8 May 2023, 13:56] Leo: In 2022, I think.').trim()).toBe('Leo: In 2022, I think.');
    expect(ownWords('Session 3, 8 May 2023: Leo went hiking.').trim()).toBe('Leo went hiking.');
    expect(ownWords('DATE: 1:56 pm on 8 May, 2023\nLeo: hi').trim()).toBe('Leo: hi');
    // A bracket without a year is the answer's own.
    expect(ownWords('Pepper [the dog]')).toBe('Pepper [the dog]');
    // Gold "2022" against an answer whose only year is the stamp's 2023; gold "2023" not given by the stamp.
    const temporal = { type: 'temporal' as const, question: 'When?', forbid: [] };
    expect(
      offlineVerdict({ ...temporal, expect: ['2022'], response: '[8 May 2023, 13:56] Mel: last year' }).correct,
    ).toBe(false);
    expect(
      offlineVerdict({ ...temporal, expect: ['2023'], response: '[8 May 2023, 13:56] Mel: last year' }).correct,
    ).toBe(false);
    expect(
      offlineVerdict({ ...temporal, expect: ['2022'], response: '[8 May 2023, 13:56] Mel: in 2022' }).correct,
    ).toBe(true);
    // A year is matched exactly, never within one as a count of days is.
    expect(offlineVerdict({ ...temporal, expect: ['2022'], response: 'It was 2023.' }).correct).toBe(false);
    expect(offlineVerdict({ ...temporal, expect: ['3 days'], response: 'About 4 days.' }).correct).toBe(true);
    expect(offlineVerdict({ ...temporal, expect: ['2022'], response: '[8 May 2023, 13:56]' }).rule).toBe(
      'the answer only quotes dates of the conversation',
    );
  });
});
