/** Recall checks on a context (docs/design.md §5) and the statistics every figure is reported with. */
import { quantileSorted } from 'simple-statistics';
import type { BaseMessage } from '@langchain/core/messages';
import { messageText } from './tokens.js';
import { boundedMemo, MEMO_CHARS } from './memo.js';
import { contentWords, hasCjk, normalizeText, sentences, termSet } from './text.js';

/** normalizeText of context messages, memoised (see contextMessages). */
const normalizedMessage = boundedMemo(MEMO_CHARS.messages, normalizeText);

/**
 * Each message a model call would see, normalised (tool call names and arguments included).
 * Every probe normalises its whole context, mostly the same messages as the probe before: the
 * normalised text is memoised (a bounded cache, cleared when full), which also hands later
 * lookups the same string, whose hash V8 has already computed.
 */
export function contextMessages(messages: readonly BaseMessage[]): string[] {
  return messages.map((message) => {
    let text = messageText(message);
    const calls =
      'tool_calls' in message ? (message.tool_calls as { name: string; args: unknown }[] | undefined) : undefined;
    for (const call of calls ?? []) text += `\n${call.name}\n${JSON.stringify(call.args)}`;
    return normalizedMessage(text);
  });
}

/** Everything a model call would see, as one normalised string (tool call arguments included). */
export function contextText(messages: readonly BaseMessage[]): string {
  return contextMessages(messages).join('\n');
}

/** True when any of `needles` occurs in the (already normalised) haystack, after normalising the needle. */
export function containsAny(normalizedHaystack: string, needles: readonly string[]): boolean {
  return needles.some((needle) => normalizedHaystack.includes(normalizeText(needle)));
}

export interface RecallVerdict {
  /** An `expect` string is in the context (undefined for abstention probes: they have none). */
  contextRecall: boolean | undefined;
  /** A `forbid` string is in the context and no `expect` string is. */
  staleExposure: boolean;
  /** A `forbid` string is in the context at all, with or without the current value beside it. */
  conflictExposure: boolean;
  /** When both are present: the current value's last mention comes after the stale value's (contexts in conversation order). */
  currentAfterStale?: boolean;
}

/** Where the last mention of any needle starts in the normalised haystack (-1: none). */
function lastMention(normalizedHaystack: string, needles: readonly string[]): number {
  return Math.max(-1, ...needles.map((needle) => normalizedHaystack.lastIndexOf(normalizeText(needle))));
}

export function judgeContext(
  normalizedContext: string,
  expect: readonly string[] | undefined,
  forbid: readonly string[],
): RecallVerdict {
  const recalled = expect ? containsAny(normalizedContext, expect) : undefined;
  const conflict = containsAny(normalizedContext, forbid);
  return {
    contextRecall: recalled,
    staleExposure: conflict && recalled !== true,
    conflictExposure: conflict,
    ...(conflict && recalled === true
      ? { currentAfterStale: lastMention(normalizedContext, expect!) > lastMention(normalizedContext, forbid) }
      : {}),
  };
}

/** Whether one normalised context message holds `word` (a term of `termSet`, or a CJK word the segmenter cut otherwise). */
function messageHolds(message: string, terms: ReadonlySet<string>, word: string): boolean {
  return terms.has(word) || (hasCjk(word) && message.includes(word));
}

/**
 * Answer recall, for free-form gold answers ("7 May 2023", "Adoption agencies"): the share of the
 * gold answer's content words found within one context message, the best message counting (and
 * the best of several `expect` strings). Null when no expect string has a content word ("yes",
 * "no"): such answers cannot be recalled from words.
 */
export function answerRecall(
  expect: readonly string[] | undefined,
  normalizedMessages: readonly string[],
): number | null {
  let best: number | null = null;
  for (const gold of expect ?? []) {
    const words = [...new Set(contentWords(gold))];
    if (words.length === 0) continue;
    let found = 0;
    for (const message of normalizedMessages) {
      const terms = termSet(message);
      found = Math.max(found, words.filter((word) => messageHolds(message, terms, word)).length);
      if (found === words.length) break;
    }
    best = Math.max(best ?? 0, found / words.length);
  }
  return best;
}

/**
 * A strategy that transforms what it keeps (a summary, entity notes, memory files) holds an
 * evidence message it does not quote when one context message or memory carries at least this
 * share of the message's rarity-weighted terms, or of one sentence of it that has at least
 * EVIDENCE_MIN_TERMS terms (a summary keeps the fact, not the whole message).
 */
export const EVIDENCE_COVERAGE_THRESHOLD = 0.5;
export const EVIDENCE_MIN_TERMS = 4;

/** How an evidence message was found in the context: quoted by a message, covered by one (transforming strategies only), or not there. */
export type EvidenceFinding = 'verbatim' | 'covered' | 'missing';

/** What a probe's evidence is judged with, prepared by the harness from the scenario (never shown to the strategy or the model). */
export interface ProbeEvidence {
  /** Per cited id, the messages it names: one for a message-level citation, a step's messages for a step id (any of them counts). */
  cited: string[][];
  /**
   * Weight of each term of the cited messages: its rarity among the scenario's own messages
   * (`termRarity`, an IDF); a term in half the messages or more weighs 0.
   */
  rarity: Record<string, number>;
}

/** Share of `terms`' rarity weight one normalised context message holds (0 when the terms weigh nothing). */
function rareShare(terms: readonly string[], rarity: Readonly<Record<string, number>>, message: string): number {
  let total = 0;
  let found = 0;
  const held = termSet(message);
  for (const term of terms) {
    const weight = rarity[term] ?? 0;
    total += weight;
    if (weight > 0 && (held.has(term) || (hasCjk(term) && message.includes(term)))) found += weight;
  }
  return total === 0 ? 0 : found / total;
}

/**
 * Evidence recall (DESIGN §5): the share of the cited messages the context holds. A message is
 * held when a context message quotes it (its whole normalised text is inside one). That is the
 * only rule for a strategy that keeps messages verbatim (`transforms` false): nothing else it
 * could show stands for the message. For a strategy that transforms what it keeps, a message is
 * also held when one context message or memory covers at least EVIDENCE_COVERAGE_THRESHOLD of
 * the rarity weight of the message's terms, or of one of its sentences of EVIDENCE_MIN_TERMS
 * terms or more: words common in the scenario weigh (almost) nothing, so chat and boilerplate
 * shared by many messages cannot make a message held. Terms scattered across unrelated messages
 * do not count, so a context without the evidence scores 0.
 */
export function evidenceRecall(
  evidence: ProbeEvidence,
  normalizedMessages: readonly string[],
  transforms: boolean,
): { value: number | null; findings: EvidenceFinding[] } {
  const findings = evidence.cited.map((messages): EvidenceFinding => {
    const wanted = messages.map(normalizeText).filter((text) => text.length > 0);
    if (wanted.some((text) => normalizedMessages.some((message) => message.includes(text)))) return 'verbatim';
    if (!transforms) return 'missing';
    const candidates = wanted.flatMap((text) => [
      [...termSet(text)],
      ...sentences(text)
        .map((sentence) => [...termSet(sentence)])
        .filter((terms) => terms.length >= EVIDENCE_MIN_TERMS),
    ]);
    for (const terms of candidates) {
      for (const message of normalizedMessages)
        if (rareShare(terms, evidence.rarity, message) >= EVIDENCE_COVERAGE_THRESHOLD) return 'covered';
    }
    return 'missing';
  });
  return {
    value: findings.length === 0 ? null : findings.filter((finding) => finding !== 'missing').length / findings.length,
    findings,
  };
}

const DECLINES =
  /(don't know|do not know|not sure|no information|not mentioned|never (said|told|mentioned)|不知道|不清楚|没有提到|没提过)/iu;

/** Answer accuracy: contains an `expect` string and no `forbid` string; abstention probes score a decline. */
export function judgeAnswer(answer: string, expect: readonly string[] | undefined, forbid: readonly string[]): boolean {
  const normalized = normalizeText(answer);
  if (!expect) return DECLINES.test(normalized) && !containsAny(normalized, forbid);
  return containsAny(normalized, expect) && !containsAny(normalized, forbid);
}

export interface Distribution {
  n: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { n: 0, mean: 0, p50: 0, p95: 0, p99: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((total, value) => total + value, 0);
  return {
    n: sorted.length,
    mean: sum / sorted.length,
    p50: quantileSorted(sorted, 0.5),
    p95: quantileSorted(sorted, 0.95),
    p99: quantileSorted(sorted, 0.99),
    max: sorted.at(-1)!,
  };
}

/** A share with the number of probes behind it. `value` is null when n is 0. */
export interface Rate {
  n: number;
  hits: number;
  value: number | null;
}

export function rate(flags: readonly boolean[]): Rate {
  const hits = flags.filter(Boolean).length;
  return { n: flags.length, hits, value: flags.length ? hits / flags.length : null };
}
