/**
 * Where a window of recent messages starts: the last K exchanges, then trimmed under a token
 * budget, cutting only at exchange or tool-unit boundaries (a tool call never loses its result,
 * a window never opens on an orphan tool message). `window` loads such a window; `entity` and
 * `file-index` keep one beside what they extract.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { TOKENS_PER_REPLY, type TokenCounter } from '../../harness/core/tokens.js';

const isTool = (message: BaseMessage): boolean => message.getType() === 'tool';

/**
 * Index where the last `k` exchanges begin. `humanAt` lists the positions of user messages.
 * Never returns the index of a tool message.
 */
export function windowStart(messages: readonly BaseMessage[], humanAt: readonly number[], k: number): number {
  let start = humanAt.length > k ? humanAt[humanAt.length - k]! : 0;
  while (start < messages.length && isTool(messages[start]!)) start++;
  return start;
}

/**
 * Moves `start` forward, at unit boundaries only, until the messages from it fit `maxTokens`.
 * Works backwards from the end, so its cost is the window's size, not the history's.
 * If even the last unit does not fit, that unit alone is kept.
 */
export function trimToTokens(
  messages: readonly BaseMessage[],
  start: number,
  maxTokens: number,
  tokens: TokenCounter,
): number {
  let used = TOKENS_PER_REPLY;
  let cut = messages.length;
  let pending = 0;
  for (let i = messages.length - 1; i >= start; i--) {
    pending += tokens.countMessage(messages[i]!);
    if (isTool(messages[i]!)) continue; // a tool result stays with the call before it
    if (used + pending > maxTokens && cut < messages.length) break;
    used += pending;
    pending = 0;
    cut = i;
  }
  return cut;
}
