/**
 * `summary-buffer`: the most recent messages verbatim plus a summary of older ones
 * (LangChain's ConversationSummaryBufferMemory). The anchor's JS version does not bound its
 * context (72 tokens sent against a limit of 20 after a few turns); here the assembled context,
 * counted as the model is billed (summary system message, every message, reply priming), is
 * never above `maxTokenLimit`:
 *
 * - When summary + buffer exceed the limit, the oldest whole units (a message and the tool
 *   results that answer it) leave the buffer until it fits beside a full-size summary, and one
 *   fold job moves them into the summary. The newest unit is never moved out.
 * - The summary is capped at `maxSummaryTokens` (default: half the limit).
 * - If the newest unit is too large to fit with the summary, the summary is shown cut to what is
 *   left (its end, the most recent facts). If the newest unit alone is above the limit, its text
 *   is cut to its end (the latest words, where a question usually is), tool results share what is
 *   left after the tool call; a unit that cannot fit even with empty text is left out.
 *
 * Folds run through the durable queue: `summarize: 'sync'` waits for them in save(), `async`
 * runs them off the hot path. Messages waiting for a fold are out of the context (they are safe
 * in the queue's database) and a pending fold found on open is resumed.
 */
import { z } from 'zod';
import {
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type BaseMessage,
  type SystemMessage,
} from '@langchain/core/messages';
import type { Job } from './shared/jobs.js';
import {
  foldSummary,
  summaryMessage,
  SummaryBackedStrategy,
  truncateText,
  type FoldPayload,
  type StoredMessage,
} from './shared/summarizer.js';
import { messageText, TOKENS_PER_REPLY } from '../harness/core/tokens.js';
import {
  defineStrategy,
  type LoadResult,
  type MemoryEvent,
  type MemoryStrategy,
  type StrategyContext,
} from './types.js';

/** Knobs of `summary-buffer`, with their defaults (validated at the CLI / config edge). */
export const summaryBufferOptions = z
  .object({
    /** Absolute upper bound on the context's tokens. */
    maxTokenLimit: z.coerce.number().int().min(1).default(1000),
    /** Cap on the summary message's tokens; default half of `maxTokenLimit`. */
    maxSummaryTokens: z.coerce.number().int().min(1).optional(),
    /** `sync`: save() waits for folds. `async`: folds run off the hot path. Default: `async` in durability mode `async`, `sync` otherwise. */
    summarize: z.enum(['sync', 'async']).optional(),
  })
  .strict();
/** `summary-buffer` knobs after defaults are filled in. */
export type SummaryBufferOptions = z.output<typeof summaryBufferOptions>;

const isTool = (message: BaseMessage): boolean => message.getType() === 'tool';
const hasToolCalls = (message: BaseMessage): boolean =>
  'tool_calls' in message && ((message.tool_calls as unknown[] | undefined)?.length ?? 0) > 0;

/** A copy of `message` with other text, keeping its type, tool calls and tool-call id. */
function withContent(message: BaseMessage, content: string): BaseMessage {
  const [stored] = mapChatMessagesToStoredMessages([message]);
  return mapStoredMessagesToChatMessages([{ ...stored!, data: { ...stored!.data, content } }])[0]!;
}

class SummaryBufferStrategy extends SummaryBackedStrategy implements MemoryStrategy {
  /** The buffer: messages in the context verbatim, oldest first; never starts on a tool result. */
  private recent: StoredMessage[] = [];
  private recentTokens = 0;
  /** Last seq covered by a queued fold. */
  private queuedThrough = 0;
  private summaryOverhead: number | undefined;
  private readonly limit: number;
  private readonly summaryCap: number;

  constructor(context: StrategyContext, options: SummaryBufferOptions) {
    super(context, options.summarize);
    this.limit = options.maxTokenLimit;
    this.summaryCap = Math.min(options.maxSummaryTokens ?? Math.floor(this.limit / 2), this.limit - TOKENS_PER_REPLY);
  }

  async open(): Promise<void> {
    const memory = this.openMemory();
    if (!memory) return;
    this.queuedThrough = memory.store.pendingFolds().at(-1)?.payload.throughSeq ?? 0;
    this.recent = memory.store.readMessages().filter((stored) => stored.seq > this.queuedThrough);
    this.recentTokens = this.recent.reduce((sum, stored) => sum + this.context.tokens.countMessage(stored.message), 0);
    const orphans = this.recent.findIndex((stored) => !isTool(stored.message));
    if (orphans !== 0 && this.recent.length > 0) this.evictOrphans(orphans < 0 ? this.recent.length : orphans);
    this.evictIfOver();
    memory.resume();
  }

  async save(event: MemoryEvent): Promise<void> {
    const memory = this.ready();
    const { store } = memory;
    const { message } = event;
    if (isTool(message) && this.recent.length === 0) {
      // Its tool call was already folded: the result follows it into the summary.
      store.transaction(() => this.queueFold(store.append(message)));
      return memory.runFolds();
    }
    // One commit for the message and, if it overflows the buffer, the fold it causes.
    const evicted = store.transaction(() => {
      this.recent.push({ seq: store.append(message), message });
      this.recentTokens += this.context.tokens.countMessage(message);
      return this.evictIfOver();
    });
    if (evicted) await memory.runFolds();
  }

  async load(): Promise<LoadResult> {
    const budget = this.limit - TOKENS_PER_REPLY;
    const summary = this.ready().summaryMessage();
    const summaryTokens = summary ? this.context.tokens.countMessage(summary) : 0;
    if (summaryTokens + this.recentTokens <= budget) {
      const messages = this.recent.map((stored) => stored.message);
      return { messages: summary ? [summary, ...messages] : messages };
    }
    const kept = this.newestUnitsWithin(budget);
    const used = kept.reduce((sum, message) => sum + this.context.tokens.countMessage(message), 0);
    const cutSummary = summary ? this.fitSummary(summary, budget - used) : undefined;
    return { messages: cutSummary ? [cutSummary, ...kept] : kept };
  }

  /** Tokens left for the buffer beside a summary at its cap. */
  private get bufferBudget(): number {
    return this.limit - TOKENS_PER_REPLY - this.summaryCap;
  }

  /**
   * If summary + buffer are over the limit, moves the oldest whole units out of the buffer (never
   * the newest unit) until the buffer fits beside a full summary, and queues their fold: one fold
   * per overflow, however many messages it moves.
   */
  private evictIfOver(): boolean {
    const summary = this.ready().summaryMessage();
    const summaryTokens = summary ? this.context.tokens.countMessage(summary) : 0;
    if (summaryTokens + this.recentTokens + TOKENS_PER_REPLY <= this.limit) return false;
    let newestStart = this.recent.length - 1;
    while (newestStart > 0 && isTool(this.recent[newestStart]!.message)) newestStart--;
    let cut = 0;
    let left = this.recentTokens;
    while (cut < newestStart && left > this.bufferBudget) {
      do left -= this.context.tokens.countMessage(this.recent[cut++]!.message);
      while (cut < this.recent.length && isTool(this.recent[cut]!.message));
    }
    if (cut === 0) return false;
    this.queueFold(this.recent[cut - 1]!.seq);
    this.recent.splice(0, cut);
    this.recentTokens = left;
    return true;
  }

  /** Tool results at the buffer's start whose call is gone (only after a crash in between): they join the summary. */
  private evictOrphans(count: number): void {
    for (const stored of this.recent.slice(0, count))
      this.recentTokens -= this.context.tokens.countMessage(stored.message);
    this.queueFold(this.recent[count - 1]!.seq);
    this.recent.splice(0, count);
  }

  private queueFold(throughSeq: number): void {
    this.ready().store.enqueueFold(this.queuedThrough + 1, throughSeq);
    this.queuedThrough = throughSeq;
  }

  protected async fold(job: Job<FoldPayload>): Promise<void> {
    const { model, tokens } = this.context;
    const textBudget = this.summaryCap - this.overhead();
    await this.ready().store.runFold(
      job,
      async (previous, messages, stale) =>
        textBudget > 0 ? foldSummary(model, tokens, previous, messages, textBudget, stale) : '',
      this.context.checkpoint,
    );
    // A longer summary may push the buffer over the limit: the next fold is queued (the worker runs it next).
    this.evictIfOver();
  }

  /** Tokens of an empty summary message (its prefix and chat overhead). */
  private overhead(): number {
    this.summaryOverhead ??= this.context.tokens.countMessage(summaryMessage(''));
    return this.summaryOverhead;
  }

  /** The summary cut to its end so that it fits `budget`; undefined if nothing useful fits. */
  private fitSummary(summary: SystemMessage, budget: number): SystemMessage | undefined {
    if (this.context.tokens.countMessage(summary) <= budget) return summary;
    const text = this.ready().store.summary.text;
    let textBudget = budget - this.overhead();
    // Prefix and text are tokenised together, so the sum can be off by a token or two: retry smaller.
    for (let attempt = 0; attempt < 3 && textBudget > 0; attempt++) {
      const cut = truncateText(text, textBudget, this.context.tokens, 'end');
      if (!cut) return undefined;
      const message = summaryMessage(cut);
      const excess = this.context.tokens.countMessage(message) - budget;
      if (excess <= 0) return message;
      textBudget -= excess;
    }
    return undefined;
  }

  /** The newest whole units that fit `budget`; the newest unit cut down if it alone does not. */
  private newestUnitsWithin(budget: number): BaseMessage[] {
    const { tokens } = this.context;
    let start = this.recent.length;
    let used = 0;
    let unitTokens = 0;
    for (let i = this.recent.length - 1; i >= 0; i--) {
      unitTokens += tokens.countMessage(this.recent[i]!.message);
      if (isTool(this.recent[i]!.message)) continue;
      if (used + unitTokens > budget) break;
      used += unitTokens;
      unitTokens = 0;
      start = i;
    }
    if (start < this.recent.length) return this.recent.slice(start).map((stored) => stored.message);
    let newestStart = this.recent.length - 1;
    while (newestStart > 0 && isTool(this.recent[newestStart]!.message)) newestStart--;
    return newestStart < 0
      ? []
      : this.cutUnit(
          this.recent.slice(newestStart).map((stored) => stored.message),
          budget,
        );
  }

  /**
   * Cuts the text of a unit's messages (keeping each text's end) so the unit fits `budget`:
   * texts share the budget fairly, short ones keep all of theirs. [] if even empty texts do not fit.
   */
  private cutUnit(unit: readonly BaseMessage[], budget: number): BaseMessage[] {
    const { tokens } = this.context;
    const texts = unit.map((message) => messageText(message));
    const needs = texts.map((text) => tokens.countText(text));
    const fixed = unit.reduce((sum, message, index) => sum + tokens.countMessage(message) - needs[index]!, 0);
    let left = budget - fixed;
    if (left < 0) return [];
    const shares = new Array<number>(unit.length).fill(0);
    const order = needs.map((_, index) => index).sort((a, b) => needs[a]! - needs[b]!);
    order.forEach((index, rank) => {
      shares[index] = Math.min(needs[index]!, Math.floor(left / (order.length - rank)));
      left -= shares[index]!;
    });
    const cut = unit.map((message, index) =>
      shares[index]! >= needs[index]!
        ? message
        : withContent(message, truncateText(texts[index]!, shares[index]!, tokens, 'end')),
    );
    const total = cut.reduce((sum, message) => sum + tokens.countMessage(message), 0);
    if (total > budget) return [];
    // A lone message cut to nothing says nothing; a tool call with its (empty) results is still a valid pair.
    if (cut.length === 1 && !messageText(cut[0]!) && !hasToolCalls(cut[0]!)) return [];
    return cut;
  }
}

/** Registry entry for `summary-buffer`. */
export const summaryBuffer = defineStrategy({
  name: 'summary-buffer',
  kind: 'summary',
  description:
    'recent messages plus a summary of older ones; the context never exceeds maxTokenLimit (ConversationSummaryBufferMemory)',
  options: summaryBufferOptions,
  defaultDurability: 'sync',
  keepsVerbatim: false,
  crashPoints: ['mid_summary'],
  labelKnobs: ['maxTokenLimit'],
  create: (context, options) => new SummaryBufferStrategy(context, options),
});
