/**
 * `window`: the last K exchanges and/or the most recent messages under `maxTokens`
 * (LangChain's BufferWindowMemory / trimMessages). It cuts only at exchange or tool-unit
 * boundaries, so a tool call is never separated from its result and the window never starts
 * on an orphan tool message.
 */
import { z } from 'zod';
import type { BaseMessage } from '@langchain/core/messages';
import { HistoryMemory } from './shared/history-memory.js';
import { trimToTokens, windowStart } from './shared/trimming.js';
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

const isHuman = (message: BaseMessage): boolean => message.getType() === 'human';

class WindowStrategy extends HistoryMemory {
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
    if (this.options.maxTokens !== undefined)
      start = trimToTokens(messages, start, this.options.maxTokens, this.context.tokens);
    return { messages: messages.slice(start) };
  }
}

export const window = defineStrategy({
  name: 'window',
  kind: 'window',
  description: 'last K exchanges and/or maxTokens; never splits a tool call from its result',
  options: windowOptions,
  defaultDurability: 'sync',
  keepsVerbatim: true,
  labelKnobs: ['k', 'maxTokens'],
  create: (context, options) => new WindowStrategy(context, options),
});
