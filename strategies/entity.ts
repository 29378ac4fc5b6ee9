/**
 * `entity`: per-entity summaries (LangChain's EntityMemory). After each exchange the model
 * extracts the entities named in the new lines and folds those lines into each entity's summary;
 * `load` injects the summaries of the entities the query names or matches best, plus a short
 * window of recent messages. Unlike the anchor, it asks the model nothing at load time, keeps
 * the summaries across restarts, and versions every row: a write is a compare-and-set on the
 * version it read, and a job never overwrites a newer writer (docs/design.md §6, invariant 4).
 */
import path from 'node:path';
import { z } from 'zod';
import { HumanMessage, SystemMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { EntityStore, entityKey, type EntityDraft, type EntityJob, type EntityRecord } from './stores/entity-store.js';
import { SqliteChatMessageHistory } from './stores/history.js';
import { summarizePrompt } from '../harness/core/prompts.js';
import { messageText } from '../harness/core/tokens.js';
import { collapseWhitespace } from '../harness/core/text.js';
import { windowStart } from './shared/trimming.js';
import {
  defineStrategy,
  type LoadInput,
  type LoadResult,
  type MemoryEvent,
  type MemoryStrategy,
  type StrategyContext,
} from './types.js';

/** Default extraction instruction: a live model reads it; the offline model finds the lines in the user message. */
export const ENTITY_EXTRACTION_INSTRUCTION =
  'Extract the entities mentioned in the conversation lines below: people, pets, places, organisations, ' +
  'products, dishes and other things the user owns, uses or cares about. Use the names as written. ' +
  'Return only a JSON array of strings, or [] when there are none.';

/** Default entity summary instruction; `{entity}` is replaced by the entity's name. */
export const ENTITY_SUMMARY_INSTRUCTION =
  'Update the summary of the entity "{entity}" with the new lines of conversation. Keep only facts about ' +
  '"{entity}"; keep names, numbers and preferences; when a fact is corrected keep only the latest value. ' +
  'If the new lines add nothing about it, return the current summary unchanged. Return only the summary.';

/** The knobs users tune with `--param entity.KEY=V`. */
export const entityOptions = z
  .object({
    /** Entity summaries injected per load. */
    k: z.coerce.number().int().min(0).default(3),
    /** Complete exchanges kept verbatim, besides the one in progress. */
    recentExchanges: z.coerce.number().int().min(0).default(1),
    /** Upper bound on entities updated per exchange (each costs a model call). */
    maxEntitiesPerExchange: z.coerce.number().int().min(1).default(8),
    /** Output budget of one entity summary. */
    summaryTokens: z.coerce.number().int().min(16).default(200),
    extractInstruction: z.string().min(1).default(ENTITY_EXTRACTION_INSTRUCTION),
    summaryInstruction: z.string().min(1).default(ENTITY_SUMMARY_INSTRUCTION),
  })
  .strict();
export type EntityOptions = z.output<typeof entityOptions>;

const MAX_ATTEMPTS = 3;
const EXTRACTION_TOKENS = 200;
const SPEAKERS = new Set(['human', 'ai', 'tool', 'user', 'assistant', 'system']);

/** Reads the extraction answer: a JSON array, possibly wrapped in prose or a code fence, or a plain list. */
export function parseEntityNames(text: string): string[] {
  let items: unknown;
  try {
    items = JSON.parse(text.slice(text.indexOf('['), text.lastIndexOf(']') + 1));
  } catch {
    items = undefined;
  }
  const raw = Array.isArray(items)
    ? items.filter((item): item is string => typeof item === 'string')
    : text.split(/[\n,，、;；]/u);
  return raw
    .map((item) => item.trim().replace(/^[-*•"'“”‘`\s]+|["'“”’`\s.。]+$/gu, ''))
    .filter((item) => item.length > 0 && item.length <= 60 && !/^none$/iu.test(item));
}

const isHuman = (message: BaseMessage): boolean => message.getType() === 'human';
const toolCallsOf = (message: BaseMessage) =>
  message.getType() === 'ai' ? ((message as AIMessage).tool_calls ?? []) : [];
const isFinalReply = (message: BaseMessage): boolean => message.getType() === 'ai' && toolCallsOf(message).length === 0;

/** One transcript line per message, as the extraction and summary prompts show them ('' for an empty message). */
function transcriptLine(message: BaseMessage): string {
  const text = collapseWhitespace(messageText(message));
  const calls = toolCallsOf(message).map((call) => `[calls ${call.name} ${JSON.stringify(call.args ?? {})}]`);
  const body = [message.getType() === 'tool' && text ? `${message.name ?? 'tool'} returned ${text}` : text, ...calls]
    .filter(Boolean)
    .join(' ');
  const speaker = { human: 'Human', ai: 'AI', tool: 'Tool' }[message.getType() as string] ?? 'System';
  return body ? `${speaker}: ${body}` : '';
}

/** The entity strategy; exported so tests can reach its store and stats. */
export class EntityStrategy implements MemoryStrategy {
  readonly capabilities: MemoryStrategy['capabilities'];
  readonly store: EntityStore;
  /** The last failure of background extraction (`async`); flush() retries the queue and rethrows. */
  backgroundError: unknown;
  /** Made on open: it keeps its messages in the store's database, so a reply and its extraction job are one commit. */
  private history!: SqliteChatMessageHistory;
  private readonly humanAt: number[] = [];
  private lastReplyAt = -1;
  /** Step ids of the messages since the last reply (the exchange in progress; not persisted: a crash mid-exchange loses them). */
  private exchangeSteps: string[] = [];
  private readonly queue: EntityJob[] = [];
  private draining: Promise<void> | undefined;
  private closed = false;
  private lastContext: { key: string; message: SystemMessage } | undefined;

  constructor(
    private readonly context: StrategyContext,
    private readonly options: EntityOptions,
  ) {
    this.capabilities = {
      persistent: true,
      explicitMemory: false,
      backgroundWork: context.durability === 'async',
      lossy: true,
    };
    this.store = new EntityStore(path.join(context.dir, 'entities.sqlite'), context.durability, context.now);
  }

  async open(): Promise<void> {
    this.queue.push(...this.store.open());
    const { dir, durability } = this.context;
    const database = this.store.database;
    this.history = new SqliteChatMessageHistory({ dir, durability, ...(database ? { database } : {}) });
    this.history.open();
    this.humanAt.length = 0;
    this.history.messages.forEach((message, index) => {
      if (isHuman(message)) this.humanAt.push(index);
      if (isFinalReply(message)) this.lastReplyAt = index;
    });
    await this.process();
  }

  async save(event: MemoryEvent): Promise<void> {
    const { message } = event;
    const index = this.history.messages.length;
    if (isHuman(message)) this.humanAt.push(index);
    if (event.stepId !== undefined && !this.exchangeSteps.includes(event.stepId)) this.exchangeSteps.push(event.stepId);
    if (!isFinalReply(message)) return this.history.addMessage(message);
    const stepIds = this.exchangeSteps;
    this.exchangeSteps = [];
    // The lines since the previous reply: this exchange, with any tool calls that came in between.
    const lines = [...this.history.messages.slice(this.lastReplyAt + 1), message]
      .map(transcriptLine)
      .filter((line) => line.length > 0);
    this.lastReplyAt = index;
    // The reply and the extraction job it makes are committed together.
    const job = this.store.transaction(() => {
      this.history.append([message]);
      return lines.length > 0 ? this.store.enqueue(event.turn, lines, stepIds) : undefined;
    });
    if (!job) return;
    this.queue.push(job);
    await this.process();
  }

  async load(input: LoadInput): Promise<LoadResult> {
    const messages = this.history.messages;
    const inProgress = (this.humanAt.at(-1) ?? -1) > this.lastReplyAt;
    const exchanges = this.options.recentExchanges + (inProgress ? 1 : 0);
    const recent = messages.slice(exchanges === 0 ? messages.length : windowStart(messages, this.humanAt, exchanges));
    const ranked = this.store.relevant(input.query, Math.max(this.options.k, input.rankDepth ?? 0));
    const records = ranked.slice(0, this.options.k);
    // Best first; the score is the rank, counted down (the store ranks by name match, then shared terms, then recency).
    const retrieved = ranked.map((record, index) => ({ stepIds: record.sources, score: ranked.length - index }));
    return { messages: records.length > 0 ? [this.entityMessage(records), ...recent] : recent, retrieved };
  }

  /** What is persisted, for the durability checks: the messages and every entity summary. */
  async snapshot(): Promise<string[]> {
    return [
      ...this.history.messages.map(messageText),
      ...this.store.all().map((record) => `${record.display}: ${record.summary}`),
    ];
  }

  /** Exchanges still waiting for extraction (the durable queue in `sync` / `async`). */
  pendingJobs(): number {
    return this.queue.length;
  }

  async flush(): Promise<void> {
    await this.history.flush();
    this.backgroundError = undefined;
    await this.drain();
  }

  /**
   * Mode `sync`: the history, the entities and the job queue in process are what the store holds
   * once queued extraction is done; the exchange in progress's step ids are forgotten, as a
   * reopen forgets them (MemoryStrategy.newSession).
   */
  async newSession(): Promise<boolean> {
    if (this.context.durability !== 'sync') return false;
    await this.drain();
    this.exchangeSteps = [];
    return true;
  }

  /** Finishes queued extraction (its failure is rethrown after the files are released). */
  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.drain();
    } finally {
      // The history writes what `exit` kept back into the store's database before the store closes it.
      await this.history?.close();
      this.store.close();
    }
  }

  /**
   * Runs the queue now, or in `async` mode behind the caller's back: it starts once the current
   * call has returned and runs alongside the next steps. A microtask rather than setImmediate: an
   * in-process loop over an offline model never yields to the event loop, so the queue would wait for flush().
   */
  private async process(): Promise<void> {
    if (this.context.durability !== 'async') return this.drain();
    queueMicrotask(() => {
      if (this.closed) return;
      this.drain().catch((error: unknown) => {
        this.backgroundError = error;
      });
    });
  }

  /** Runs queued jobs in order; a failed job stays at the head (and in the durable queue) for the next attempt. */
  private drain(): Promise<void> {
    if (!this.draining && this.queue.length > 0)
      this.draining = this.runQueue().finally(() => (this.draining = undefined));
    return this.draining ?? Promise.resolve();
  }

  private async runQueue(): Promise<void> {
    for (let job = this.queue[0]; job; job = this.queue[0]) {
      await this.runJob(job);
      this.queue.shift();
    }
  }

  private async runJob(job: EntityJob): Promise<void> {
    let pending = await this.extract(job.lines);
    // Each line's key once per job, not once per entity drafted from it (long replies, many entities).
    const lineKeys = job.lines.map(entityKey);
    for (let attempt = 1; ; attempt++) {
      pending = pending.filter((name) => this.store.admits(name, job.id));
      const drafts = (await Promise.all(pending.map((name) => this.draft(name, job, lineKeys)))).filter(
        (draft) => draft !== undefined,
      );
      const last = attempt >= MAX_ATTEMPTS;
      this.context.checkpoint?.('mid_summary');
      const refused = this.store.commit(drafts, job.id, last);
      if (refused.length === 0 || last) return;
      pending = refused;
    }
  }

  private async extract(lines: readonly string[]): Promise<string[]> {
    if (lines.length === 0) return [];
    const { text } = await this.context.model.chat({
      task: 'extract-entities',
      messages: [new SystemMessage(this.options.extractInstruction), new HumanMessage(lines.join('\n'))],
      maxOutputTokens: EXTRACTION_TOKENS,
    });
    const byKey = new Map<string, string>();
    for (const name of parseEntityNames(text)) {
      const key = entityKey(name);
      if (key.length > 0 && !SPEAKERS.has(key) && !byKey.has(key)) byKey.set(key, name);
    }
    return [...byKey.values()].slice(0, this.options.maxEntitiesPerExchange);
  }

  /** The entity's summary folded with the lines that mention it (all lines when none does, e.g. "she" for Mochi). */
  private async draft(name: string, job: EntityJob, lineKeys: readonly string[]): Promise<EntityDraft | undefined> {
    const current = this.store.get(name);
    const key = entityKey(name);
    const mentioning = job.lines.filter((_, index) => lineKeys[index]!.includes(key));
    const display = current?.display ?? name;
    const instruction = this.options.summaryInstruction.replaceAll('{entity}', display);
    const { text } = await this.context.model.chat({
      task: 'summarize-entity',
      messages: [
        new SystemMessage(instruction),
        ...summarizePrompt(current?.summary ?? '', (mentioning.length > 0 ? mentioning : job.lines).join('\n')).slice(
          1,
        ),
      ],
      maxOutputTokens: this.options.summaryTokens,
    });
    const summary = text.trim();
    if (summary.length === 0 || summary === current?.summary) return undefined;
    return {
      write: { name: display, summary, turn: job.turn, job: job.id, stepIds: job.stepIds },
      expectedVersion: current?.version ?? 0,
    };
  }

  /** One system message with the chosen summaries; the same object while they are unchanged, so it is tokenised once. */
  private entityMessage(records: readonly EntityRecord[]): SystemMessage {
    const key = records.map((record) => `${record.name}@${record.version}`).join('|');
    if (this.lastContext?.key !== key) {
      const lines = records.map((record) => `- ${record.display}: ${record.summary}`);
      this.lastContext = {
        key,
        message: new SystemMessage(`What you know about entities in this conversation:\n${lines.join('\n')}`),
      };
    }
    return this.lastContext.message;
  }
}

export const entity = defineStrategy({
  name: 'entity',
  kind: 'extraction',
  description:
    'per-entity summaries in SQLite, updated from extracted entities; k most relevant + recent messages (EntityMemory)',
  options: entityOptions,
  defaultDurability: 'sync',
  keepsVerbatim: false,
  crashPoints: ['mid_summary'],
  create: (context, options) => new EntityStrategy(context, options),
});
