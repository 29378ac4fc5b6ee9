/** Recall checks on a context (DESIGN §5) and the statistics every figure is reported with. */
import { quantileSorted } from 'simple-statistics';
import type { BaseMessage } from '@langchain/core/messages';
import { messageText } from './tokens.js';
import { normalizeText } from './text.js';

/** Everything a model call would see, as one normalised string (tool call arguments included). */
export function contextText(messages: readonly BaseMessage[]): string {
  const parts: string[] = [];
  for (const message of messages) {
    parts.push(messageText(message));
    const calls = 'tool_calls' in message ? (message.tool_calls as { name: string; args: unknown }[] | undefined) : undefined;
    for (const call of calls ?? []) parts.push(call.name, JSON.stringify(call.args));
  }
  return normalizeText(parts.join('\n'));
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
}

export function judgeContext(normalizedContext: string, expect: readonly string[] | undefined, forbid: readonly string[]): RecallVerdict {
  const recalled = expect ? containsAny(normalizedContext, expect) : undefined;
  return { contextRecall: recalled, staleExposure: containsAny(normalizedContext, forbid) && recalled !== true };
}

const DECLINES = /(don't know|do not know|not sure|no information|never (said|told|mentioned)|不知道|不清楚|没有提到|没提过)/iu;

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
