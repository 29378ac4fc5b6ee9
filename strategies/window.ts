/**
 * `window`: the last K exchanges and/or the most recent messages under `maxTokens`
 * (LangChain's BufferWindowMemory / trimMessages). It cuts only at exchange or tool-unit
 * boundaries, so a tool call is never separated from its result and the window never starts
 * on an orphan tool message.
 */
import { z } from 'zod';
import type { BaseMessage } from '@langchain/core/messages';
import { BufferStrategy } from './buffer.js';
import { TOKENS_PER_REPLY, type TokenCounter } from '../harness/core/tokens.js';
import { defineStrategy, type LoadResult, type MemoryEvent, type StrategyContext } from './types.js';

export const windowOptions = z
  .object({
    /** Exchanges kept (an exchange starts at a user message). */
    k: z.coerce.number().int().min(1).default(2),
    /** Upper bound on context tokens; oldest whole units are dropped first. */
    maxTokens: z.coerce.number().int().min(1).optional(),
  })
  .strict();
export type WindowOptions = z.output<typeof windowOptions>;

const isTool = (message: BaseMessage): boolean => message.getType() === 'tool';
const isHuman = (message: BaseMessage): boolean => message.getType() === 'human';

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
export function trimToTokens(messages: readonly BaseMessage[], start: number, maxTokens: number, tokens: TokenCounter): number {
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

class WindowStrategy extends BufferStrategy {
  private readonly humanAt: number[] = [];

  constructor(
    context: StrategyContext,
    private readonly options: WindowOptions,
  ) {
    super(context);
  }

  override async open(): Promise<void> {
    await super.open();
    this.humanAt.length = 0;
    this.history.messages.forEach((message, index) => {
      if (isHuman(message)) this.humanAt.push(index);
    });
  }

  override async save(event: MemoryEvent): Promise<void> {
    if (isHuman(event.message)) this.humanAt.push(this.history.messages.length);
    await super.save(event);
  }

  override async load(): Promise<LoadResult> {
    const messages = this.history.messages;
    let start = windowStart(messages, this.humanAt, this.options.k);
    if (this.options.maxTokens !== undefined) start = trimToTokens(messages, start, this.options.maxTokens, this.context.tokens);
    return { messages: messages.slice(start) };
  }
}

export const window = defineStrategy({
  name: 'window',
  description: 'last K exchanges and/or maxTokens; never splits a tool call from its result',
  options: windowOptions,
  defaultDurability: 'sync',
  keepsVerbatim: true,
  labelKnobs: ['k', 'maxTokens'],
  create: (context, options) => new WindowStrategy(context, options),
});
