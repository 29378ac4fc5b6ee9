/**
 * `summary`: a running summary of the conversation, updated by the model after each exchange
 * (LangChain's ConversationSummaryMemory). Unlike the anchor, whose summary lives in a variable
 * and is gone after a restart, the summary is a versioned row in SQLite and survives close,
 * reopen and crashes as the durability mode promises.
 *
 * The context is the summary (as a system message) plus the messages not folded into it yet:
 * with the defaults that is just the current user message, so the model sees the question.
 */
import { z } from 'zod';
import type { BaseMessage } from '@langchain/core/messages';
import type { Job } from './shared/jobs.js';
import { foldSummary, SummaryBackedStrategy, type FoldPayload, type StoredMessage } from './shared/summarizer.js';
import {
  defineStrategy,
  type LoadResult,
  type MemoryEvent,
  type MemoryStrategy,
  type StrategyContext,
} from './types.js';

/** Knobs of `summary`, with their defaults (validated at the CLI / config edge). */
export const summaryOptions = z
  .object({
    /** Upper bound on the summary's tokens (passed to the model and enforced on its answer). */
    maxSummaryTokens: z.coerce.number().int().min(8).default(256),
    /** Summarise after every N finished exchanges (a reply without tool calls ends an exchange). */
    every: z.coerce.number().int().min(1).default(1),
    /**
     * `sync`: save() of a reply resolves after the summary is written. `async`: the fold is
     * queued durably and runs off the hot path. Default: `async` in durability mode `async`,
     * `sync` otherwise.
     */
    summarize: z.enum(['sync', 'async']).optional(),
  })
  .strict();
/** `summary` knobs after defaults are filled in. */
export type SummaryOptions = z.output<typeof summaryOptions>;

/** A reply ends an exchange; an assistant message that calls tools does not. */
function isReply(message: BaseMessage): boolean {
  if (message.getType() !== 'ai') return false;
  const calls = 'tool_calls' in message ? (message.tool_calls as unknown[] | undefined) : undefined;
  return !calls || calls.length === 0;
}

class SummaryStrategy extends SummaryBackedStrategy implements MemoryStrategy {
  /** Messages not folded into the summary yet, including those whose fold is queued. */
  private unfolded: StoredMessage[] = [];
  /** Last seq covered by a queued fold. */
  private queuedThrough = 0;
  /** Finished exchanges after `queuedThrough`. */
  private exchanges = 0;

  constructor(
    context: StrategyContext,
    private readonly options: SummaryOptions,
  ) {
    super(context, options.summarize);
  }

  async open(): Promise<void> {
    const memory = this.openMemory();
    if (!memory) return;
    this.unfolded = memory.store.readMessages();
    this.queuedThrough = memory.store.pendingFolds().at(-1)?.payload.throughSeq ?? 0;
    this.exchanges = this.unfolded.filter(
      (stored) => stored.seq > this.queuedThrough && isReply(stored.message),
    ).length;
    memory.resume();
  }

  async save(event: MemoryEvent): Promise<void> {
    const { store } = this.ready();
    const endsBatch = isReply(event.message) && this.exchanges + 1 >= this.options.every;
    const seq = store.transaction(() => {
      const appended = store.append(event.message);
      if (endsBatch) store.enqueueFold(this.queuedThrough + 1, appended);
      return appended;
    });
    this.unfolded.push({ seq, message: event.message });
    if (!endsBatch) {
      if (isReply(event.message)) this.exchanges++;
      return;
    }
    this.queuedThrough = seq;
    this.exchanges = 0;
    await this.ready().runFolds();
  }

  async load(): Promise<LoadResult> {
    const summary = this.ready().summaryMessage();
    const messages: BaseMessage[] = summary ? [summary] : [];
    for (const stored of this.unfolded) messages.push(stored.message);
    return { messages };
  }

  protected async fold(job: Job<FoldPayload>): Promise<void> {
    const { model, tokens } = this.context;
    await this.ready().store.runFold(
      job,
      (previous, messages, stale) =>
        foldSummary(model, tokens, previous, messages, this.options.maxSummaryTokens, stale),
      this.context.checkpoint,
    );
    const through = job.payload.throughSeq;
    const kept = this.unfolded.findIndex((stored) => stored.seq > through);
    this.unfolded.splice(0, kept < 0 ? this.unfolded.length : kept);
  }
}

/** Registry entry for `summary`. */
export const summary = defineStrategy({
  name: 'summary',
  kind: 'summary',
  callsModelEveryTurn: true,
  description:
    'a running summary updated by the model after each exchange, persisted with versions (ConversationSummaryMemory)',
  options: summaryOptions,
  defaultDurability: 'sync',
  keepsVerbatim: false,
  crashPoints: ['mid_summary'],
  create: (context, options) => new SummaryStrategy(context, options),
});
