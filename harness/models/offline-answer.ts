/**
 * The offline model's answerer (docs/design.md §4): it quotes the context sentence that best
 * answers the question, prefers the most recent of equally good ones, and declines below
 * DECLINE_BELOW. It sees only the request's messages.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { boundedMemo, MEMO_CHARS } from '../core/memo.js';
import { contentWords, hasCjk, normalizeText, sentences, termSet, withoutLeadingNote } from '../core/text.js';
import { messageText, roleOf } from '../core/tokens.js';
import { SPEAKER_PREFIX, speakerLines, statementOf } from './offline-statements.js';

/** A term's weight in the question: longer terms say more than short ones. */
const termWeight = (term: string): number => 1 + Math.min(term.length, 8) / 8;

/**
 * The answerer declines when no sentence covers at least this share of the question's weighted
 * terms: below it the best match is about something else (an abstention question about an oven
 * brand must not be answered with the sentence about the pot).
 */
export const DECLINE_BELOW = 0.2;

/**
 * Sentences whose score is at least this share of the best one count as answering the question
 * equally well; among them the most recent is quoted (after a correction, the new value).
 */
export const RECENT_WITHIN = 0.75;

/** Context lines the answerer cut into statements (tests count them: once per line, not once per question). */
export const answererStats = { linesCut: 0 };

/** A statement of a context line the answerer can quote, with its terms. */
interface Statement {
  sentence: string;
  terms: ReadonlySet<string>;
}

/**
 * The statements of a context line (a message's text), questions left out: what the answerer
 * scores against every question. A probe's context holds mostly the lines the probe before held,
 * so each line is cut into sentences and statements once, not once per probe.
 */
const lineStatements = boundedMemo(MEMO_CHARS.messages, (line: string): readonly Statement[] => {
  answererStats.linesCut++;
  const statements: Statement[] = [];
  for (const raw of sentences(line)) {
    const sentence = statementOf(raw.replace(SPEAKER_PREFIX, '')) ?? '';
    if (sentence && !/[?？]\s*$/u.test(sentence)) statements.push({ sentence, terms: termSet(sentence) });
  }
  return statements;
});

/**
 * The share of the question's weighted terms a statement holds (0..1). The weights are multiples
 * of 1/8, so the sum is exact in any order: the question's few terms are looked up in the
 * statement's set rather than the other way round.
 */
function answerScore(
  question: readonly (readonly [string, number])[],
  questionWeight: number,
  terms: ReadonlySet<string>,
): number {
  if (questionWeight === 0) return 0;
  let shared = 0;
  for (const [term, weight] of question) if (terms.has(term)) shared += weight;
  return shared / questionWeight;
}

/**
 * Quotes the context sentence that best answers the question: every statement (the statement
 * part of a question included) is scored by the share of the question's weighted terms it
 * holds; below DECLINE_BELOW it declines; among the sentences within RECENT_WITHIN of the best
 * score the most recent is quoted, so a corrected value wins over the old one. A question that
 * offers answers to choose from is answered with one of them (`choose`).
 */
export function answerQuestion(messages: readonly BaseMessage[]): string {
  const question = messages.at(-1);
  if (!question) return '';
  const asked = readQuestion(withoutLeadingNote(messageText(question)));
  const questionTerms = [...termSet(asked.question)].map((term) => [term, termWeight(term)] as const);
  let questionWeight = 0;
  for (const [, weight] of questionTerms) questionWeight += weight;
  const context = messages.slice(0, -1).filter((message) => roleOf(message) !== 'system' || !isInstruction(message));
  const scored: { sentence: string; score: number }[] = [];
  for (const line of speakerLines(context)) {
    for (const { sentence, terms } of lineStatements(line)) {
      const score = answerScore(questionTerms, questionWeight, terms);
      if (score > 0) scored.push({ sentence, score });
    }
  }
  const best = Math.max(0, ...scored.map((item) => item.score));
  const found =
    best < DECLINE_BELOW ? undefined : scored.findLast((item) => item.score >= best * RECENT_WITHIN)!.sentence;
  if (asked.choices.length >= 2) {
    const chosen = choose(asked.choices, found);
    if (chosen !== undefined) return chosen;
  }
  return found ?? (hasCjk(asked.question) ? '我不知道。' : "I don't know.");
}

/** "(a) …", "(b) …" marks of the answers a question offers. */
const CHOICE_MARK = /\(([a-h])\)\s*/gu;

/**
 * A question as the offline answerer reads it: the question itself (up to its question mark, when
 * more text follows: a hint or a choice is instruction, not what is asked about) and the answers it
 * offers as "(a) … (b) …", in order (none when it offers no choice).
 */
export function readQuestion(text: string): { question: string; choices: string[] } {
  const marks: RegExpExecArray[] = [];
  for (const mark of text.matchAll(CHOICE_MARK)) {
    if (mark[1] === String.fromCharCode(97 + marks.length)) marks.push(mark);
    else if (marks.length >= 2) break;
  }
  const choices =
    marks.length >= 2
      ? marks.map((mark, i) =>
          text
            .slice(mark.index + mark[0].length, marks[i + 1]?.index ?? text.length)
            .trim()
            .replace(/\s*[.;,]$/u, ''),
        )
      : [];
  const mark = text.indexOf('?');
  const end =
    mark >= 0 && text.slice(mark + 1).trim() !== '' ? mark + 1 : choices.length > 0 ? marks[0]!.index : text.length;
  return { question: text.slice(0, end).trim(), choices };
}

/** An offered answer that says the conversation does not tell. */
const NOT_TOLD =
  /\b(not mentioned|no information|not (?:said|stated|in the conversation)|cannot be answered|unknown)\b/iu;

/**
 * The offered answer a found sentence supports (at least half of the answer's content words in
 * it), or, when none is supported or nothing was found, the answer saying the conversation does not
 * tell; undefined when no offered answer fits.
 */
function choose(choices: readonly string[], found: string | undefined): string | undefined {
  const notTold = choices.find((choice) => NOT_TOLD.test(choice));
  if (found !== undefined) {
    const said = new Set(contentWords(found));
    const supported = choices.find((choice) => {
      if (choice === notTold) return false;
      const wanted = contentWords(choice);
      if (wanted.length === 0) return normalizeText(found).includes(normalizeText(choice));
      return wanted.filter((word) => said.has(word)).length * 2 >= wanted.length;
    });
    if (supported !== undefined) return supported;
  }
  return notTold;
}

function isInstruction(message: BaseMessage): boolean {
  return roleOf(message) === 'system' && messageText(message).startsWith('Answer the last question');
}
