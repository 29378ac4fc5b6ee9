/**
 * SYNTHETIC data, not LongMemEval: a seeded file in the published LongMemEval_S format
 * (xiaowu0162/LongMemEval: a JSON list of questions `{question_id, question_type, question,
 * answer, question_date, haystack_session_ids, haystack_dates, haystack_sessions: [[{role,
 * content, has_answer?}]], answer_session_ids}`, ids ending `_abs` for abstention) and at its
 * size: 500 questions, each with its own haystack of about 50 sessions, 500 messages and 115 k
 * tokens (the LongMemEval paper's figures for _S), long chatty assistant replies, the answer
 * planted in `has_answer` turns of the `answer_…` sessions. It is the measuring stick of the
 * bench's "dataset scale" section and of `membench run --dataset longmemeval:FILE` at full size;
 * the text is templates, so recall measured on it says nothing about the real set.
 *
 * Near misses: in the real haystacks other sessions talk about what the question asks without
 * answering it, so the question's words alone do not find the answer. The generator plants such
 * statements (the question's words, never the answer) at the start of a user turn in a share of
 * the distractor sessions (`nearMisses`, 0 for none). They are drawn from a random stream of their
 * own, so the rest of a seed's file is the same with or without them.
 * `fixtures/datasets/synthetic/make-longmemeval-s.ts` writes it from the command line.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { seededRandom } from '../core/random.js';

/** The size of the file: LongMemEval_S's shape by default. */
export interface SyntheticLongMemEvalOptions {
  questions?: number;
  /** Sessions per haystack: drawn uniformly in [min, max] (default 46–56, about 51). */
  sessions?: readonly [number, number];
  /** Messages per session: drawn in [min, max] and rounded down to whole exchanges (default 6–15, about 10). */
  messages?: readonly [number, number];
  /** Sentences of an assistant reply, drawn in [min, max] (default 16–30: the published replies are long). */
  replySentences?: readonly [number, number];
  /** Share of the distractor sessions that get a near-miss statement (default 0.05, about 2.5 in a haystack of 50; 0 for none). */
  nearMisses?: number;
  seed?: number;
}

/** The question types of LongMemEval_S with their counts in the published file (the paper's Table 1: 70, 56, 30, 133, 133, 78). */
const TYPES: readonly [string, number][] = [
  ['single-session-user', 70],
  ['single-session-assistant', 56],
  ['single-session-preference', 30],
  ['multi-session', 133],
  ['temporal-reasoning', 133],
  ['knowledge-update', 78],
];
/** Abstention questions (ids ending `_abs`): 30 of the published 500, drawn here among the 414 questions of the types that have them. */
const ABSTENTION_CHANCE = 30 / 414;

const TOPICS: readonly (readonly string[])[] = [
  ['garden', 'tomatoes', 'compost', 'watering', 'seedlings', 'mulch', 'raised beds', 'pruning', 'soil', 'harvest'],
  [
    'budget',
    'savings',
    'spreadsheet',
    'expenses',
    'interest',
    'retirement',
    'groceries',
    'rent',
    'subscriptions',
    'emergency fund',
  ],
  [
    'workout',
    'running',
    'stretching',
    'protein',
    'recovery',
    'squats',
    'intervals',
    'rest days',
    'hydration',
    'cadence',
  ],
  ['travel', 'itinerary', 'museum', 'train', 'hostel', 'passport', 'luggage', 'street food', 'guidebook', 'day trip'],
  ['recipe', 'oven', 'marinade', 'spices', 'dough', 'simmer', 'skillet', 'leftovers', 'garlic', 'roasting'],
  ['python', 'script', 'library', 'function', 'debugging', 'tests', 'dataset', 'loop', 'performance', 'error message'],
  ['novel', 'chapter', 'characters', 'plot', 'outline', 'dialogue', 'editing', 'genre', 'narrator', 'draft'],
  [
    'photography',
    'lens',
    'exposure',
    'tripod',
    'lighting',
    'aperture',
    'composition',
    'editing software',
    'portrait',
    'landscape',
  ],
  ['apartment', 'lease', 'furniture', 'paint', 'storage', 'neighbours', 'utilities', 'plants', 'rug', 'shelves'],
  [
    'career',
    'resume',
    'interview',
    'salary',
    'manager',
    'promotion',
    'networking',
    'portfolio',
    'skills',
    'cover letter',
  ],
  ['music', 'guitar', 'chords', 'practice', 'metronome', 'playlist', 'concert', 'lessons', 'scales', 'songwriting'],
  ['sleep', 'routine', 'caffeine', 'screens', 'bedtime', 'naps', 'mattress', 'alarm', 'melatonin', 'morning light'],
];
const ASKS = [
  'Can you help me figure out {a} for {b}?',
  'I have been thinking about {a} lately, any tips on {b}?',
  'What is a good way to handle {a} when {b} gets in the way?',
  'Could you explain how {a} relates to {b} in simple terms?',
  'I want to get better at {a}. Where should I start with {b}?',
  'Is it worth spending more time on {a} or on {b}?',
];
const ASIDES = [
  'I only have a little time on weekday evenings, so something simple would be best.',
  'I tried a couple of things last month but nothing really stuck.',
  'A friend suggested a few ideas, but I am not sure they fit my situation.',
  'I would like a plan I can follow for a few weeks and then adjust.',
  'Please keep it practical, I do not need the theory.',
];
const OPENERS = [
  'Great question, and it is one a lot of people run into.',
  'Sure, here is a practical way to think about it.',
  'That makes sense, and there are a few angles worth considering.',
  'Happy to help with that, let us break it down step by step.',
];
const POINTS = [
  'First, look at {a} on its own before you change anything about {b}.',
  'A common approach is to start small with {a} and build up as {b} becomes routine.',
  'Keep a short log of {a}, because patterns in {b} are easier to see on paper.',
  'It often helps to set a fixed time for {a}, so {b} does not crowd it out.',
  'If {a} feels overwhelming, split it into pieces and tackle {b} first.',
  'Many people find that {a} improves noticeably once {b} is consistent.',
  'Be careful not to overdo {a}; too much at once can make {b} harder to sustain.',
  'Try comparing two options for {a} side by side and note how each affects {b}.',
  'Consider asking someone experienced with {a} for feedback on your {b}.',
  'Review your progress on {a} every week and adjust {b} based on what you learn.',
  'Small, regular steps with {a} usually beat occasional big efforts on {b}.',
  'Write down one concrete goal for {a} and one for {b}, then check them off as you go.',
];
const CLOSERS = [
  'I hope this helps, and feel free to tell me how it goes.',
  'Let me know if you want me to go deeper into any of these points.',
  'If you share more details, I can tailor these suggestions further.',
];
const THANKS = [
  'Thanks, that is really helpful.',
  'Great, I will try that this week.',
  'That makes sense, thank you.',
  'Okay, one more thing about this.',
];

/** What each question plants: the statement(s), the question and the answer. */
interface Plant {
  /** Statements put in user turns (the assistant's own for single-session-assistant), in session order. */
  statements: string[];
  role: 'user' | 'assistant';
  question: string;
  answer: string | number;
  /** Near misses: statements sharing the question's words that do not answer it (put in distractor sessions). */
  nearMisses: readonly string[];
}

const DEGREES = [
  'Business Administration',
  'Marine Biology',
  'Civil Engineering',
  'Art History',
  'Computer Science',
  'Nursing',
  'Economics',
  'Philosophy',
];
const PETS = [
  'a beagle named Biscuit',
  'a tabby cat named Miso',
  'a parrot named Kiwi',
  'a rabbit named Clover',
  'a husky named Juniper',
];
const BOOKS = ['The Left Hand of Darkness', 'Middlemarch', 'Piranesi', 'The Overstory', 'Kindred', 'Station Eleven'];
const CITIES = ['Lisbon', 'Kyoto', 'Denver', 'Oslo', 'Cusco', 'Hanoi', 'Tbilisi', 'Quebec City'];
const ITEMS = [
  'a pair of hiking boots',
  'a blender',
  'a rain jacket',
  'a desk lamp',
  'a yoga mat',
  'a coffee grinder',
  'a backpack',
  'a cast iron pan',
];
const ACTIVITIES = [
  'pottery classes',
  'learning Spanish',
  'a couch-to-5k plan',
  'volunteering at the library',
  'a sourdough habit',
  'weekly chess games',
];

function plantFor(type: string, pick: <T>(items: readonly T[]) => T, next: () => number, gapDays: number): Plant {
  switch (type) {
    case 'single-session-user': {
      const degree = pick(DEGREES);
      return {
        statements: [`By the way, I graduated with a degree in ${degree}, so I come at this from that angle.`],
        role: 'user',
        question: 'What degree did I graduate with?',
        answer: degree,
        nearMisses: [
          'My cousin just graduated and keeps asking me which degree is worth it.',
          'I sometimes wonder what I would do with a second degree, now that graduating feels so long ago.',
          'A colleague graduated with a degree in something unrelated and still got the job.',
        ],
      };
    }
    case 'single-session-assistant': {
      const book = pick(BOOKS);
      return {
        statements: [
          `If you want something to read on the side, I would suggest ${book}, which many readers in your position enjoy.`,
        ],
        role: 'assistant',
        question: 'Which book did you suggest I read on the side in our earlier chat?',
        answer: book,
        nearMisses: [
          'I never find time to read a book on the side, maybe you could suggest how to fit it in.',
          'In an earlier chat a friend suggested I read more, but I did not note which book.',
        ],
      };
    }
    case 'single-session-preference': {
      const city = pick(CITIES);
      return {
        statements: [
          `I should say that I love quiet trips to places like ${city}, with slow mornings and lots of walking.`,
        ],
        role: 'user',
        question: 'Can you suggest a destination for my next holiday?',
        answer: `The user would prefer a quiet, walkable destination similar to ${city}, with slow mornings.`,
        nearMisses: [
          'My sister wants me to suggest a destination for her next holiday, she likes big loud cities.',
          'Work is busy, so my next holiday is far off and I have no destination in mind.',
        ],
      };
    }
    case 'multi-session': {
      const count = 2 + Math.floor(next() * 2);
      const bought = Array.from({ length: count }, () => pick(ITEMS));
      return {
        statements: bought.map((item) => `Oh, and I bought ${item} for myself this week, it was on sale.`),
        role: 'user',
        question: 'How many things did I say I bought for myself on sale?',
        answer: count,
        nearMisses: [
          'I said I would not buy anything for myself this month, even things on sale.',
          'My partner bought a few things on sale for the kitchen, nothing for me.',
          'Everything I looked at for myself was sold out, so I bought nothing on sale.',
        ],
      };
    }
    case 'temporal-reasoning': {
      const activity = pick(ACTIVITIES);
      return {
        statements: [`Today I finally started ${activity}, which I had put off for ages.`],
        role: 'user',
        question: `How many days ago did I start ${activity}?`,
        answer: `${gapDays} days ago`,
        nearMisses: [
          `I keep saying I will start ${activity} one of these days, but I have not yet.`,
          `A friend of mine started ${activity} a few days ago and loves it.`,
          `Do you think ${activity} is a good thing to start when my days are this busy?`,
        ],
      };
    }
    default: {
      const [before, after] = [pick(PETS), pick(PETS)];
      return {
        statements: [
          `At home it is just me and ${before} at the moment.`,
          `Big change at home: we now have ${after} instead.`,
        ],
        role: 'user',
        question: 'What pet do I have at home now?',
        answer: after,
        nearMisses: [
          'My neighbour has a new pet at home now and it is very loud at night.',
          'We talked about getting a pet for home, but now is not the right time.',
        ],
      };
    }
  }
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
/** `2023/05/20 (Sat) 02:21`, the published files' date format. */
function longMemEvalDate(ms: number): string {
  const date = new Date(ms);
  const pad = (value: number): string => String(value).padStart(2, '0');
  return `${date.getUTCFullYear()}/${pad(date.getUTCMonth() + 1)}/${pad(date.getUTCDate())} (${WEEKDAYS[date.getUTCDay()]}) ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}`;
}

const hex = (next: () => number, length: number): string =>
  Array.from({ length }, () => Math.floor(next() * 16).toString(16)).join('');

/** One question with its haystack. */
function question(
  index: number,
  type: string,
  abstention: boolean,
  options: Required<SyntheticLongMemEvalOptions>,
  next: () => number,
): Record<string, unknown> {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const between = ([low, high]: readonly [number, number]): number => low + Math.floor(next() * (high - low + 1));
  const fill = (template: string, topic: readonly string[]): string =>
    template.replace('{a}', pick(topic)).replace('{b}', pick(topic));
  const sessionCount = between(options.sessions);
  const start = Date.UTC(2023, index % 12, 1 + (index % 20), 8, 0);
  const times: number[] = [];
  let at = start;
  for (let s = 0; s < sessionCount; s++) {
    at += (2 + Math.floor(next() * 10)) * 3_600_000 + Math.floor(next() * 60) * 60_000;
    times.push(at);
  }
  const questionTime = at + (1 + Math.floor(next() * 5)) * 86_400_000;
  // Answer sessions spread over the haystack; temporal questions count days back from the question.
  const plantSession = Math.floor(next() * sessionCount);
  const gapDays = Math.max(0, Math.round((questionTime - times[plantSession]!) / 86_400_000));
  const plant = plantFor(type, pick, next, gapDays);
  const answerSessions =
    plant.statements.length === 1
      ? [plantSession]
      : [
          ...new Set(
            plant.statements.map((_, i) => Math.floor(((i + next()) / plant.statements.length) * sessionCount)),
          ),
        ].sort((a, b) => a - b);
  const questionId = `${hex(next, 8)}${abstention ? '_abs' : ''}`;
  // Near misses draw from a stream of their own: the rest of the file does not depend on them.
  const nearMissDraw = seededRandom((options.seed * 7919 + index) >>> 0);
  const ids: string[] = [];
  const sessions: Record<string, unknown>[][] = [];
  const answerIds: string[] = [];
  for (let s = 0; s < sessionCount; s++) {
    const planted = answerSessions.indexOf(s);
    const id =
      planted >= 0
        ? `answer_${hex(next, 8)}_${planted + 1}`
        : next() < 0.5
          ? `sharegpt_${hex(next, 7)}_${Math.floor(next() * 4)}`
          : `${hex(next, 8)}_${1 + Math.floor(next() * 3)}`;
    ids.push(id);
    if (planted >= 0) answerIds.push(id);
    const topic = pick(TOPICS);
    const turns: Record<string, unknown>[] = [];
    const pairs = Math.max(1, Math.floor(between(options.messages) / 2));
    const plantAt = planted >= 0 ? Math.floor(next() * pairs) : -1;
    const nearMiss =
      planted < 0 && nearMissDraw() < options.nearMisses
        ? {
            at: Math.floor(nearMissDraw() * pairs),
            text: plant.nearMisses[Math.floor(nearMissDraw() * plant.nearMisses.length)]!,
          }
        : undefined;
    for (let p = 0; p < pairs; p++) {
      const asides = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(ASIDES)).join(' ');
      const userText =
        p === 0 || next() < 0.6
          ? `${fill(pick(ASKS), topic)} ${asides}`
          : `${pick(THANKS)} ${fill(pick(ASKS), topic)} ${asides}`;
      const reply = [pick(OPENERS)];
      const sentences = between(options.replySentences);
      for (let i = 0; i < sentences; i++) reply.push(fill(pick(POINTS), topic));
      reply.push(pick(CLOSERS));
      const statement = p === plantAt ? plant.statements[planted] : undefined;
      const lead = statement && plant.role === 'user' ? statement : p === nearMiss?.at ? nearMiss.text : undefined;
      const user: Record<string, unknown> = { role: 'user', content: lead ? `${lead} ${userText}` : userText };
      if (statement)
        reply.splice(1 + Math.floor(next() * (reply.length - 1)), 0, plant.role === 'assistant' ? statement : '');
      const assistant: Record<string, unknown> = { role: 'assistant', content: reply.filter(Boolean).join(' ') };
      // has_answer marks the turn holding the evidence, as in the published file.
      if (statement && plant.role === 'user') user.has_answer = true;
      if (statement && plant.role === 'assistant') assistant.has_answer = true;
      turns.push(user, assistant);
    }
    sessions.push(turns);
  }
  return {
    question_id: questionId,
    question_type: type,
    question: abstention
      ? plant.question.replace(/\b(degree|book|pet|destination|things)\b/u, (word) => `${word} for my sister`)
      : plant.question,
    answer: abstention ? 'The information provided is not enough to answer this question.' : plant.answer,
    question_date: longMemEvalDate(questionTime),
    haystack_session_ids: ids,
    haystack_dates: times.map(longMemEvalDate),
    haystack_sessions: sessions,
    answer_session_ids: answerIds,
  };
}

/** The question types in file order: the published counts scaled to `count`, interleaved by a seeded shuffle. */
function typeOrder(count: number, next: () => number): string[] {
  const order = TYPES.flatMap(([type, n]) => Array.from({ length: Math.round((n / 500) * count) }, () => type));
  while (order.length < count) order.push(TYPES[order.length % TYPES.length]![0]);
  order.length = count;
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** The questions one at a time (nothing holds the whole file). */
export function* syntheticLongMemEval(options: SyntheticLongMemEvalOptions = {}): Generator<Record<string, unknown>> {
  const settings: Required<SyntheticLongMemEvalOptions> = {
    questions: 500,
    sessions: [46, 56],
    messages: [6, 15],
    replySentences: [16, 30],
    nearMisses: 0.05,
    seed: 2025,
    ...options,
  };
  const next = seededRandom(settings.seed);
  const types = typeOrder(settings.questions, next);
  for (const [index, type] of types.entries()) {
    const abstention =
      type !== 'single-session-assistant' && type !== 'single-session-preference' && next() < ABSTENTION_CHANCE;
    yield question(index, type, abstention, settings, next);
  }
}

/** Writes the file as one JSON list, streamed question by question; resolves with its size in bytes. */
export async function writeSyntheticLongMemEval(
  file: string,
  options: SyntheticLongMemEvalOptions = {},
): Promise<number> {
  const out = createWriteStream(file);
  let bytes = 0;
  const write = async (text: string): Promise<void> => {
    bytes += Buffer.byteLength(text);
    if (!out.write(text)) await once(out, 'drain');
  };
  let first = true;
  await write('[');
  for (const item of syntheticLongMemEval(options)) {
    await write(`${first ? '' : ',\n'}${JSON.stringify(item)}`);
    first = false;
  }
  await write(']\n');
  out.end();
  await once(out, 'finish');
  return bytes;
}
