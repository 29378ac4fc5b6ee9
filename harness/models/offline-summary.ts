/**
 * The offline model's summariser (docs/design.md §4): an extractive running summary that keeps
 * salient statements (first-person facts, preferences, numbers, names, dates, corrections) ahead of
 * chit-chat, a correction replacing the statement about the same thing.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { boundedMemo, MEMO_CHARS } from '../core/memo.js';
import { parseSummarizePrompt } from '../core/prompts.js';
import { matchTerms, normalizeText, sentences } from '../core/text.js';
import { messageText, roleOf, type TokenCounter } from '../core/tokens.js';
import { extractEntities } from './offline-entities.js';
import {
  ACKNOWLEDGEMENT,
  CORRECTION,
  FIRST_PERSON_EN,
  FIRST_PERSON_ZH,
  REQUEST,
  SPEAKER_PREFIX,
  statementOf,
  topicOf,
} from './offline-statements.js';

/** A sentence a summary may keep, with how much it matters and the topic it states a value of. */
interface SummaryFact {
  text: string;
  salience: number;
  topic?: string;
}

const NUMBER = /\d|[一二两三四五六七八九十百千万]+(?:个|口|位|斤|两|点|号|月|岁|天|次|块|张|朵)/u;
const DATE_WORD =
  /\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|today|tomorrow|yesterday|tonight|weekend)\b|周[一二三四五六日末]|星期|今天|明天|昨天|上周|下周/iu;

/**
 * How much a statement is worth keeping in a summary: a first-person fact or preference of the
 * user's most (2), a correction more (+1), numbers, dates and names a little (+0.5 each);
 * chit-chat scores low and questions 0 (they are kept only when there is room).
 */
function salienceOf(statement: string, fromUser: boolean): number {
  let score = 0.25;
  if (fromUser && (FIRST_PERSON_EN.test(statement) || FIRST_PERSON_ZH.test(statement))) score += 2;
  if (CORRECTION.test(statement)) score += 1;
  if (NUMBER.test(statement)) score += 0.5;
  if (DATE_WORD.test(statement)) score += 0.5;
  if (extractEntities(statement).length > 0) score += 0.5;
  if (REQUEST.test(statement)) score = Math.min(score, 0.5);
  return score;
}

/** Later copies win: a fact repeated keeps its latest position. */
function dedupeFacts(facts: readonly SummaryFact[]): SummaryFact[] {
  const seen = new Set<string>();
  const out: SummaryFact[] = [];
  for (let i = facts.length - 1; i >= 0; i--) {
    const key = normalizeText(facts[i]!.text);
    if (seen.has(key)) continue;
    seen.add(key);
    out.unshift(facts[i]!);
  }
  return out;
}

/** The most salient facts that fit the budget (ties: the more recent), in their original order. */
function keepSalient(facts: readonly SummaryFact[], budget: number, counter: TokenCounter): string[] {
  const order = facts
    .map((fact, index) => ({ fact, index }))
    .sort((a, b) => b.fact.salience - a.fact.salience || b.index - a.index);
  const kept = new Set<number>();
  let used = 0;
  for (const { fact, index } of order) {
    const cost = counter.countText(fact.text) + 1;
    if (used + cost > budget) continue;
    kept.add(index);
    used += cost;
  }
  return facts.filter((_, index) => kept.has(index)).map((fact) => fact.text);
}

/**
 * An extractive running summary that keeps what matters: every sentence of the previous
 * summary and the new lines is scored by salience (`salience`), a statement about a topic
 * that it corrects (or that holds one value at a time: where I live, how many we are)
 * replaces the earlier statement about the same topic, and the most salient sentences that fit
 * the budget are kept (ties: the more recent), in conversation order.
 */
export function summarizeMessages(messages: readonly BaseMessage[], budget: number, counter: TokenCounter): string {
  const prompt = messages
    .filter((message) => roleOf(message) !== 'system')
    .map(messageText)
    .join('\n');
  const { previousSummary, newLines } = parseSummarizePrompt(prompt);
  const facts: SummaryFact[] = [];
  const add = (line: string, fromUser: boolean): void => {
    for (const raw of sentences(line)) {
      const fact = sentenceFact(`${fromUser ? 'u' : 'a'}${raw}`);
      if (fact === null) continue;
      if (fact.replaces) {
        for (let i = facts.length - 1; i >= 0; i--) if (facts[i]!.topic === fact.fact.topic) facts.splice(i, 1);
      }
      facts.push(fact.fact);
    }
  };
  // The previous summary holds what was already judged worth keeping: its facts stay the user's.
  // (A fold that found a newer summary passes the lines first, as the older information.)
  for (const line of previousSummary.split('\n'))
    add(line.replace(SPEAKER_PREFIX, ''), !/^(ai|assistant|tool|system)\s*:/iu.test(line));
  for (const line of newLines.split('\n')) add(line.replace(SPEAKER_PREFIX, ''), /^(human|user)\s*:/iu.test(line));
  return keepSalient(dedupeFacts(facts), budget, counter).join(' ');
}

/**
 * What one sentence of a summarize prompt adds (key: "u" or "a" for who said it, then the
 * sentence): the fact kept (null: none), and whether it replaces the earlier facts of its topic.
 * A pure function of the sentence, memoised (its facts are shared, never changed): every fold re-reads the previous summary's sentences, and entity
 * drafts fold the same lines into several entities.
 */
const sentenceFact = boundedMemo(MEMO_CHARS.sentences, (key): { fact: SummaryFact; replaces: boolean } | null => {
  const fromUser = key.startsWith('u');
  const raw = key.slice(1);
  if (ACKNOWLEDGEMENT.test(raw) || matchTerms(raw).length === 0) return null;
  const statement = statementOf(raw);
  if (!statement) return { fact: { text: raw, salience: 0 }, replaces: false };
  const salience = salienceOf(statement, fromUser);
  const topic = salience >= 2 ? topicOf(statement) : undefined;
  return {
    fact: { text: statement, salience, ...(topic ? { topic: topic.name } : {}) },
    replaces: topic !== undefined && (topic.single || CORRECTION.test(statement)),
  };
});
