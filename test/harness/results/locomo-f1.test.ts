/**
 * LoCoMo's answer scores recomputed on a table in LoCoMo's format (`question`, `answer` or
 * `adversarial_answer`, `category`, a prediction): the reference below follows
 * `eval_question_answering` (snap-research/locomo task_eval/evaluation.py) over words stemmed as
 * NLTK's `PorterStemmer()` stems them (written out in STEMS, not computed), and each row also
 * carries the score that code gives. membench's `datasetScore` must give the same on every row.
 */
import { stemmer } from 'stemmer';
import { describe, expect, it } from 'vitest';
import { datasetScore } from '../../../harness/results/scoring.js';

interface Row {
  question: string;
  answer?: string;
  adversarial_answer?: string;
  category: 1 | 2 | 3 | 4 | 5;
  prediction: string;
  /** evaluation.py's score of the prediction. */
  score: number;
}

const TABLE: readonly Row[] = [
  {
    question: 'What did Caroline try last summer?',
    answer: 'She tried pottery',
    category: 4,
    prediction: 'Caroline likes to try pottery',
    score: 1 / 2,
  },
  {
    question: 'What is Melanie hoping for?',
    answer: 'Hopefully a new job',
    category: 4,
    prediction: 'She hopes for a new job',
    score: 3 / 4,
  },
  {
    question: 'What does Jon watch at night?',
    answer: 'the skies',
    category: 4,
    prediction: 'He watches the sky',
    score: 1 / 2,
  },
  {
    question: 'How many kids does Gina have?',
    answer: 'one',
    category: 4,
    prediction: 'She has a kid, on weekends',
    score: 0,
  },
  { question: 'What did Tim tell Sam about?', answer: 'his new job', category: 4, prediction: 'the news', score: 0 },
  {
    question: 'What did Nate say about his old dog?',
    answer: 'it was dying',
    category: 4,
    prediction: 'the dog could die',
    score: 1 / 3,
  },
  {
    question: 'When did Nate adopt the dog?',
    answer: 'The week before 9 June 2023',
    category: 2,
    prediction: '[9 June 2023, 13:30] Nate: We adopted a dog last week, he was dying to have one.',
    score: 8 / 21,
  },
  {
    question: 'When did Joanna visit Paris?',
    answer: 'In May 2022',
    category: 2,
    prediction: 'She visited in may, days before 2022 ended',
    score: 6 / 11,
  },
  {
    question: 'Which cities has Evan visited?',
    answer: 'Rome, Paris',
    category: 1,
    prediction: 'Paris, Rome and Tokyo',
    score: 5 / 6,
  },
  {
    question: 'What hobbies do they share?',
    answer: 'flying kites, sky watching',
    category: 1,
    prediction: 'they fly kites, they watch skies',
    score: 4 / 5,
  },
  {
    question: 'Would Maria enjoy a pottery class?',
    answer: 'Likely yes; she loves crafts',
    category: 3,
    prediction: 'Yes, likely',
    score: 1,
  },
  {
    question: 'Would Dave enjoy hiking?',
    answer: 'Probably not; he dislikes the outdoors',
    category: 3,
    prediction: 'Probably not, he hates outings',
    score: 4 / 7,
  },
  {
    question: "What is the name of Leo's cat?",
    adversarial_answer: 'Biscuit',
    category: 5,
    prediction: 'Not mentioned in the conversation',
    score: 1,
  },
  {
    question: 'What did Leo bake?',
    adversarial_answer: 'bread',
    category: 5,
    prediction: 'No information available.',
    score: 1,
  },
  { question: 'What did Maya paint?', adversarial_answer: 'a sunset', category: 5, prediction: 'a sunset', score: 0 },
  { question: 'What did Sam cook?', adversarial_answer: 'curry', category: 5, prediction: "I don't know.", score: 0 },
  {
    question: 'What did John say about the innings?',
    answer: 'the innings were long',
    category: 4,
    prediction: 'long, in the evening',
    score: 1 / 3,
  },
  {
    question: "What is Audrey's job?",
    answer: 'She is a sensitivity trainer',
    category: 4,
    prediction: 'sensitive training',
    score: 1 / 3,
  },
  {
    question: 'How does Andrew feel?',
    answer: 'Generally hopeful',
    category: 4,
    prediction: 'hopefully in general',
    score: 4 / 5,
  },
];

/** Every normalised word of the table → its stem by NLTK's PorterStemmer() (default mode). */
const STEMS: Readonly<Record<string, string>> = {
  '1330': '1330',
  '2022': '2022',
  '2023': '2023',
  '9': '9',
  adopted: 'adopt',
  available: 'avail',
  before: 'befor',
  caroline: 'carolin',
  conversation: 'convers',
  could: 'could',
  days: 'day',
  die: 'die',
  dog: 'dog',
  dont: 'dont',
  dying: 'die',
  ended: 'end',
  evening: 'even',
  fly: 'fli',
  flying: 'fli',
  for: 'for',
  general: 'gener',
  generally: 'gener',
  has: 'ha',
  hates: 'hate',
  have: 'have',
  he: 'he',
  his: 'hi',
  hopeful: 'hope',
  hopefully: 'hope',
  hopes: 'hope',
  i: 'i',
  in: 'in',
  information: 'inform',
  innings: 'inning',
  is: 'is',
  it: 'it',
  job: 'job',
  june: 'june',
  kid: 'kid',
  kites: 'kite',
  know: 'know',
  last: 'last',
  likely: 'like',
  likes: 'like',
  long: 'long',
  may: 'may',
  mentioned: 'mention',
  nate: 'nate',
  new: 'new',
  news: 'news',
  no: 'no',
  not: 'not',
  on: 'on',
  one: 'one',
  outings: 'outing',
  paris: 'pari',
  pottery: 'potteri',
  probably: 'probabl',
  rome: 'rome',
  sensitive: 'sensit',
  sensitivity: 'sensit',
  she: 'she',
  skies: 'sky',
  sky: 'sky',
  sunset: 'sunset',
  they: 'they',
  to: 'to',
  tokyo: 'tokyo',
  trainer: 'trainer',
  training: 'train',
  tried: 'tri',
  try: 'tri',
  visited: 'visit',
  was: 'wa',
  watch: 'watch',
  watches: 'watch',
  watching: 'watch',
  we: 'we',
  week: 'week',
  weekends: 'weekend',
  were: 'were',
  yes: 'ye',
};

/** evaluation.py's `normalize_answer`: commas out, lower case, ASCII punctuation out, a/an/the/and out. */
function normalize(text: string): string[] {
  return text
    .replace(/,/gu, '')
    .toLowerCase()
    .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/gu, '')
    .replace(/\b(a|an|the|and)\b/gu, ' ')
    .split(/\s+/u)
    .filter((word) => word.length > 0);
}

function f1Score(prediction: string, gold: string, stem: (word: string) => string): number {
  const predicted = normalize(prediction).map(stem);
  const truth = normalize(gold).map(stem);
  const left = new Map<string, number>();
  for (const token of truth) left.set(token, (left.get(token) ?? 0) + 1);
  let same = 0;
  for (const token of predicted) {
    const count = left.get(token) ?? 0;
    if (count > 0) {
      same++;
      left.set(token, count - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / predicted.length;
  const recall = same / truth.length;
  return (2 * precision * recall) / (precision + recall);
}

/** `eval_question_answering`'s score of one row, with the given stemmer. */
function reference(row: Row, stem: (word: string) => string): number {
  const prediction = row.prediction;
  if (row.category === 5) {
    const lowered = prediction.toLowerCase();
    return lowered.includes('no information available') || lowered.includes('not mentioned') ? 1 : 0;
  }
  let gold = row.answer!;
  if (row.category === 3) gold = gold.split(';')[0]!.trim();
  if (row.category !== 1) return f1Score(prediction, gold, stem);
  const parts = prediction.split(',').map((part) => part.trim());
  const golds = gold.split(',').map((part) => part.trim());
  return golds.reduce((sum, part) => sum + Math.max(...parts.map((p) => f1Score(p, part, stem))), 0) / golds.length;
}

const nltkStem = (word: string): string => {
  const stem = STEMS[word];
  if (stem === undefined) throw new Error(`the table has no NLTK stem for "${word}"`);
  return stem;
};

/** What the importer makes of a row: the scoring and the gold membench scores against. */
function membenchScore(row: Row): number | undefined {
  if (row.category === 5) return datasetScore('locomo-adversarial', row.prediction, undefined);
  const gold = row.category === 3 ? row.answer!.split(';')[0]!.trim() : row.answer!;
  return datasetScore(row.category === 1 ? 'locomo-f1-multi' : 'locomo-f1', row.prediction, [gold]);
}

describe("LoCoMo's answer scores, recomputed from NLTK-stemmed words", () => {
  it('the reference over the written-out NLTK stems gives evaluation.py’s score on every row', () => {
    for (const row of TABLE) expect(reference(row, nltkStem), row.question).toBeCloseTo(row.score, 12);
  });

  it('membench scores every row as evaluation.py does', () => {
    for (const row of TABLE) expect(membenchScore(row), row.question).toBeCloseTo(row.score, 12);
  });

  it('the original Porter algorithm would score several rows otherwise (the table tells the stemmers apart)', () => {
    const apart = TABLE.filter((row) => Math.abs(reference(row, stemmer) - row.score) > 1e-12);
    expect(apart.length).toBeGreaterThanOrEqual(5);
  });
});
