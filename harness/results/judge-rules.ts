/**
 * The offline judge (docs/judging.md): deterministic rules that say whether a free-form answer
 * gives the gold answer, one rule set per question type. It reads the question's gold only to
 * judge an answer already given, as an LLM judge does; the offline model that writes answers never
 * sees it. Each verdict names the rule that decided, stored as the judgement's raw reply.
 */
import { containsAny, judgeAnswer } from '../core/metrics.js';
import { adversarialScore, tokenF1 } from './scoring.js';
import { contentWords, MONTH_NAMES, normalizeText } from '../core/text.js';

/** The question types judges tell apart: each has its own prompt (LLM judges) and rules (offline). */
export const JUDGE_TYPES = ['default', 'temporal', 'knowledge-update', 'preference', 'abstention'] as const;
export type JudgeType = (typeof JUDGE_TYPES)[number];

/** Token F1 (LoCoMo's, stemmed) at or above which an answer that matched no other rule counts as right. */
export const OFFLINE_F1_THRESHOLD = 0.5;
/** Share of a preference rubric's content words an answer must use. */
export const RUBRIC_WORD_SHARE = 0.5;

/** One answer to judge: the question, what the run scored as gold, and the response. */
export interface JudgeItem {
  type: JudgeType;
  question: string;
  /** Any of these counts (empty for abstention questions). */
  expect: readonly string[];
  /** Stale or wrong values (LoCoMo's adversarial answer, a corrected fact). */
  forbid: readonly string[];
  response: string;
}

export interface RuleVerdict {
  correct: boolean;
  /** The rule that decided, in words (kept as the judgement's raw reply). */
  rule: string;
}

const NUMBER_WORDS: Readonly<Record<string, number>> = {
  zero: 0,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  thirteen: 13,
  fourteen: 14,
  fifteen: 15,
  sixteen: 16,
  seventeen: 17,
  eighteen: 18,
  nineteen: 19,
  twenty: 20,
  thirty: 30,
  forty: 40,
  fifty: 50,
  sixty: 60,
  seventy: 70,
  eighty: 80,
  ninety: 90,
  hundred: 100,
  once: 1,
  twice: 2,
};

/** Numbers written in digits ("3", "1,200", "2.5") or as a word ("three", "twice"). */
export function numbersIn(text: string): number[] {
  const normalized = normalizeText(text);
  const out: number[] = [];
  for (const match of normalized.matchAll(/\d[\d,]*(?:\.\d+)?/gu)) {
    const value = Number(match[0].replace(/,(?=\d{3}\b)/gu, '').replace(/,/gu, ''));
    if (Number.isFinite(value)) out.push(value);
  }
  for (const word of normalized.split(/[^a-z]+/u)) if (NUMBER_WORDS[word] !== undefined) out.push(NUMBER_WORDS[word]);
  return out;
}

const MONTHS = MONTH_NAMES.map((month) => month.toLowerCase());
const MONTH = `(${MONTHS.map((month) => `${month.slice(0, 3)}(?:${month.slice(3)})?`).join('|')})\\.?`;
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';

/** Calendar days (UTC ms at midnight) named in the text: "7 May 2023", "May 7, 2023", "2023-05-07". */
export function datesIn(text: string): number[] {
  const normalized = normalizeText(text);
  const out: number[] = [];
  const push = (year: number, month: number, day: number): void => {
    const time = Date.UTC(year, month, day);
    const date = new Date(time);
    if (month >= 0 && date.getUTCMonth() === month && date.getUTCDate() === day) out.push(time);
  };
  const monthIndex = (name: string): number => MONTHS.findIndex((month) => month.startsWith(name.slice(0, 3)));
  for (const match of normalized.matchAll(new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH},?\\s+(\\d{4})\\b`, 'gu')))
    push(Number(match[3]), monthIndex(match[2]!), Number(match[1]));
  for (const match of normalized.matchAll(new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+(\\d{4})\\b`, 'gu')))
    push(Number(match[3]), monthIndex(match[1]!), Number(match[2]));
  for (const match of normalized.matchAll(/\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b/gu))
    push(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return out;
}

const DAY_MS = 86_400_000;

/** A message's date stamp as the context shows it ("[8 May 2023, 13:56]", "[Current date: 2023/05/30]"): a bracket naming a year. */
const QUOTED_STAMP = /\[[^\]\n]*\d{4}[^\]\n]*\]/gu;
/** A session's date line ("DATE: 1:56 pm on 8 May, 2023") or heading ("Session 3, 8 May 2023:"). */
const SESSION_HEADING = /^[ \t]*(?:date[ \t]*:[^\n]*\d{4}[^\n]*$|session\b[^\n:]*\d{4}[^\n:]*:)/gimu;

/**
 * The answer's own words: the response without the dated prefixes it quotes from the context (a
 * message's date stamp, a session's date line). A quoted "[8 May 2023, 13:56] Leo: …" says when
 * the message was written, not what the answer claims: its date, year and time digits must never
 * match a gold date or number.
 */
export function ownWords(response: string): string {
  return response.replace(QUOTED_STAMP, ' ').replace(SESSION_HEADING, ' ');
}

/** A year ("2023"): matched exactly, never within one as a count of days or weeks is. */
const isYear = (value: number): boolean => Number.isInteger(value) && value >= 1000 && value <= 2999;

/** Every number of the gold is among the response's (within `slack` for temporal counts; years exactly). */
function numbersAgree(gold: string, response: string, slack: number): boolean {
  const wanted = numbersIn(gold);
  if (wanted.length === 0) return false;
  const given = numbersIn(response);
  return wanted.every((number) => given.some((value) => Math.abs(value - number) <= (isYear(number) ? 0 : slack)));
}

/** The share of the gold's non-number content words the response holds. */
function wordShare(gold: string, response: string): number {
  const wanted = [...new Set(contentWords(gold).filter((word) => numbersIn(word).length === 0))];
  if (wanted.length === 0) return 1;
  const given = new Set(contentWords(response));
  return wanted.filter((word) => given.has(word)).length / wanted.length;
}

/** One gold string against the response: containment, then dates, then numbers, then token F1 (only when the response gives the gold's numbers). */
function matchGold(gold: string, response: string, type: JudgeType): RuleVerdict | undefined {
  const normalized = normalizeText(response);
  if (containsAny(normalized, [gold])) return { correct: true, rule: `contains the gold answer "${gold}"` };
  const offByOne = type === 'temporal';
  const goldDates = datesIn(gold);
  if (goldDates.length > 0) {
    const given = datesIn(response);
    const slack = offByOne ? DAY_MS : 0;
    if (goldDates.every((date) => given.some((value) => Math.abs(value - date) <= slack)))
      return {
        correct: true,
        rule: `names the gold date${goldDates.length > 1 ? 's' : ''} of "${gold}"${offByOne ? ' (within a day)' : ''}`,
      };
  } else if (numbersAgree(gold, response, offByOne ? 1 : 0) && wordShare(gold, response) >= 0.5) {
    return {
      correct: true,
      rule: `gives the number${numbersIn(gold).length > 1 ? 's' : ''} of "${gold}"${offByOne ? ' (within one)' : ''}`,
    };
  }
  // Words in common are no answer when the gold names a number the response does not give ("a few years" for "4 years").
  if (numbersIn(gold).length > 0 && !numbersAgree(gold, response, offByOne ? 1 : 0)) return undefined;
  const f1 = tokenF1(response, gold);
  if (f1 >= OFFLINE_F1_THRESHOLD)
    return { correct: true, rule: `token F1 ${f1.toFixed(2)} >= ${OFFLINE_F1_THRESHOLD} against "${gold}"` };
  return undefined;
}

/**
 * The offline judge's verdict, on the answer's own words (`ownWords`: quoted date stamps and
 * session headings left out). Abstention: the response declines (the decline phrases of
 * answer accuracy, or LoCoMo's) and names no forbidden value. Preference: the response uses at
 * least RUBRIC_WORD_SHARE of the rubric's content words. The rest: a gold answer matched by
 * containment, date or number equivalence (off by one day or one unit for temporal questions) or
 * token F1; a forbidden (stale) value beside it fails the answer, except for knowledge-update
 * questions, which accept the old value alongside the updated one.
 */
export function offlineVerdict(given: JudgeItem): RuleVerdict {
  if (given.response.trim() === '')
    return { correct: false, rule: 'the answer is empty (no text came back: an endpoint reply with content null?)' };
  const response = ownWords(given.response);
  if (response.trim() === '') return { correct: false, rule: 'the answer only quotes dates of the conversation' };
  const item = { ...given, response };
  const normalized = normalizeText(item.response);
  if (item.type === 'abstention') {
    const declined = judgeAnswer(item.response, undefined, item.forbid) || adversarialScore(item.response) === 1;
    const stale = containsAny(normalized, item.forbid);
    return {
      correct: declined && !stale,
      rule: stale
        ? 'names the unsupported answer'
        : declined
          ? 'says the information is not available'
          : 'gives an answer instead of declining',
    };
  }
  if (item.type === 'preference') {
    const best = Math.max(0, ...item.expect.map((rubric) => wordShare(rubric, item.response)));
    return {
      correct: best >= RUBRIC_WORD_SHARE,
      rule: `uses ${Math.round(best * 100)} % of the rubric's content words (needs ${Math.round(RUBRIC_WORD_SHARE * 100)} %)`,
    };
  }
  const stale = item.type !== 'knowledge-update' && containsAny(normalized, item.forbid);
  for (const gold of item.expect) {
    const match = matchGold(gold, item.response, item.type);
    if (match) return stale ? { correct: false, rule: `${match.rule}, but also names a stale value` } : match;
  }
  const best = Math.max(0, ...item.expect.map((gold) => tokenF1(item.response, gold)));
  return { correct: false, rule: `no rule matched (best token F1 ${best.toFixed(2)})` };
}
