/** Recall checks on a context (docs/design.md §5) and the statistics every figure is reported with. */
import { quantileSorted } from 'simple-statistics';
import type { BaseMessage } from '@langchain/core/messages';
import { messageText } from './tokens.js';
import { boundedMemo, MEMO_CHARS } from './memo.js';
import { contentWords, holdsTerm, normalizeText } from './text.js';

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
      const held = words.filter((word) => holdsTerm(message, word));
      found = Math.max(found, held.length);
      if (found === words.length) break;
    }
    best = Math.max(best ?? 0, found / words.length);
  }
  return best;
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
