/**
 * `vector`: every exchange (a user message, the reply, and the tool calls and results of that
 * turn) is embedded once, when it is complete, and the top-k most relevant earlier exchanges are
 * retrieved for each model call (LangChain's VectorStoreRetrieverMemory).
 *
 * Storage (harness/vector-store.ts): SQLite holds every exchange's text, messages and vector (the
 * durable source of truth) plus the messages of exchanges in progress, per writer; the
 * hnswlib-node HNSW index is a cache written on flush/close and whenever `persistEvery` exchanges
 * and a quarter of the index are unsaved, so per-turn work stays O(1) amortised. Reopening reads
 * the index file and adds the stored vectors it lacks, straight from SQLite: nothing is ever
 * embedded twice.
 *
 * Several processes may write one dir at once: exchange ids come from SQLite and label the index;
 * before each load one O(1) query (`max(id)`) tells whether other writers stored exchanges, which
 * are then added from their stored vectors. When two processes write the index file, the last
 * rename wins and the next opener adds what that file lacks from SQLite.
 *
 * Retrieved exchanges are chosen by score and listed oldest first in one SystemMessage, so a
 * correction reads after the fact it corrects; the last `recentExchanges` stored exchanges (of any
 * writer) and this writer's exchange in progress follow verbatim.
 */
import path from 'node:path';
import { z } from 'zod';
import { SystemMessage, type AIMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { messageText } from '../harness/core/tokens.js';
import { insertSorted, loadHnswlib, lowerBound, VectorIndex } from './stores/vector-index.js';
import { ExchangeStore, type PendingMessage } from './stores/vector-store.js';
import { defineStrategy, type LoadInput, type LoadResult, type MemoryEvent, type MemoryStrategy, type StrategyContext } from './types.js';

/** The knobs users tune (and `tune` sweeps), with LangChain-like defaults. */
export const vectorOptions = z
  .object({
    /** Earlier exchanges retrieved per model call. */
    k: z.coerce.number().int().min(1).default(4),
    /** 0 ranks by similarity alone; w > 0 ranks by (1 - w) * similarity + w * 2^(-age / halfLife). */
    recencyWeight: z.coerce.number().min(0).max(1).default(0),
    /** Turns after which the recency bonus has halved. */
    halfLife: z.coerce.number().positive().default(20),
    /** Below this many stored exchanges search is exact brute force (faster than HNSW when small). */
    exactBelow: z.coerce.number().int().min(0).default(256),
    /** Most recent complete exchanges always included verbatim (not counted in k). */
    recentExchanges: z.coerce.number().int().min(0).default(1),
    /** Retrieved exchanges must be more similar than this to the query (cosine). */
    minSimilarity: z.coerce.number().min(-1).max(1).default(0),
    /** The index file is rewritten once this many (and at least a quarter of the index) are unsaved. */
    persistEvery: z.coerce.number().int().min(1).default(256),
  })
  .strict();
/** Parsed options, defaults filled in. */
export type VectorOptions = z.output<typeof vectorOptions>;

const INDEX_FILE = 'vector.hnsw';
const MEMORY_HEADER = 'Relevant memories from earlier in this conversation (the most relevant exchanges, oldest first):';
/** Beyond this many half-lives the recency bonus is under 1% of its weight: older exchanges compete on similarity alone. */
const RECENCY_HORIZON_HALF_LIVES = 7;
const MAX_RECENCY_CANDIDATES = 1024;

/** Keys of exchanges held in memory until flush (mode `exit`): above every SQLite id, so they sort last. */
const HELD_BASE = 2 ** 31;

/** A complete, embedded exchange, keyed by its id (its index label). Text and messages load lazily after a reopen. */
interface ExchangeRecord {
  turn: number;
  timestamp?: string;
  text?: string;
  messages?: BaseMessage[];
  /** Mode `exit`: the vector of an exchange not written yet. */
  vector?: Float32Array;
}

const isHuman = (message: BaseMessage): boolean => message.getType() === 'human';

function toolCallsOf(message: BaseMessage): NonNullable<AIMessage['tool_calls']> {
  return message.getType() === 'ai' ? ((message as AIMessage).tool_calls ?? []) : [];
}

/** What gets embedded: the words of the exchange, without role labels (they would make every exchange look alike). */
export function exchangeText(messages: readonly BaseMessage[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    const content = messageText(message).trim();
    if (content) lines.push(content);
    for (const call of toolCallsOf(message)) lines.push(`${call.name} ${JSON.stringify(call.args)}`);
  }
  return lines.join('\n');
}

/** How a retrieved exchange reads in the memory message: one line per message, with its speaker. */
export function renderExchange(messages: readonly BaseMessage[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    const content = messageText(message).trim();
    switch (message.getType()) {
      case 'human':
        lines.push(`User: ${content}`);
        break;
      case 'tool':
        lines.push(`Tool result (${(message as ToolMessage).name ?? 'tool'}): ${content}`);
        break;
      default:
        if (content) lines.push(`Assistant: ${content}`);
        for (const call of toolCallsOf(message)) lines.push(`Assistant called ${call.name}(${JSON.stringify(call.args)})`);
    }
  }
  return lines.join('\n');
}

/** Drops tool results whose call is not in the context, so the context never holds an orphan tool message. */
export function withoutOrphanTools(messages: readonly BaseMessage[]): BaseMessage[] {
  const calls = new Set<string>();
  return messages.filter((message) => {
    for (const call of toolCallsOf(message)) if (call.id) calls.add(call.id);
    return message.getType() !== 'tool' || calls.has((message as ToolMessage).tool_call_id);
  });
}

/** Splits messages into exchanges, each starting at a user message (the first may start without one). */
function splitExchanges(messages: readonly PendingMessage[]): PendingMessage[][] {
  const groups: PendingMessage[][] = [];
  for (const entry of messages) {
    if (groups.length === 0 || isHuman(entry.message)) groups.push([entry]);
    else groups.at(-1)!.push(entry);
  }
  return groups;
}

class VectorStrategy implements MemoryStrategy {
  readonly capabilities = { persistent: true, explicitMemory: false, backgroundWork: false };
  private readonly store: ExchangeStore;
  /** Stored exchanges; labels are SQLite ids (local ids in mode `none`). */
  private index: VectorIndex | undefined;
  /** Mode `exit`: exchanges not written yet, labelled key - HELD_BASE until flush() gives them ids. */
  private held: VectorIndex | undefined;
  private records = new Map<number, ExchangeRecord>();
  /** Keys of `records`, ascending: the order exchanges are listed in, and the recent ones last. */
  private keys: number[] = [];
  /** Every stored id up to this one is in `records`; later ones may be other writers' rows. */
  private seenUpTo = 0;
  private nextLocal = 1;
  private pending: PendingMessage[] = [];
  private queryCache: { text: string; vector: Float32Array } | undefined;
  private memoryCache: { key: string; message: SystemMessage } | undefined;

  constructor(
    private readonly context: StrategyContext,
    private readonly options: VectorOptions,
  ) {
    this.store = new ExchangeStore(context.dir, context.durability);
  }

  /** Rows read from SQLite on the hot path (catch-up checks, lazy reads), for complexity tests. */
  get rowsRead(): number {
    return this.store.rowsRead;
  }

  private get persistent(): boolean {
    return this.context.durability !== 'none';
  }

  private get vectors(): VectorIndex {
    if (!this.index) throw new Error('vector: open() was not called');
    return this.index;
  }

  async open(): Promise<void> {
    if (this.index) return;
    const { embedder } = this.context;
    const { exchanges, pending } = this.store.open(`${embedder.id} (${embedder.dimensions} dimensions)`);
    this.records = new Map(exchanges.map(({ id, turn, timestamp }) => [id, { turn, ...(timestamp !== undefined ? { timestamp } : {}) }]));
    this.keys = exchanges.map(({ id }) => id);
    this.seenUpTo = this.keys.at(-1) ?? 0;
    this.pending = pending;
    this.queryCache = undefined;
    this.memoryCache = undefined;
    this.index = this.newIndex();
    this.held = this.store.deferred ? this.newIndex() : undefined;
    const indexFile = this.persistent ? path.join(this.context.dir, INDEX_FILE) : undefined;
    this.index.restore(indexFile, this.keys, (ids) => this.store.vectorsOf(ids));
    this.catchUp(); // rows stored since the listing above; the file may already hold them
    if (this.index.size !== this.keys.length) {
      // The file holds an exchange SQLite lacks (a stale file from another store): rebuild from SQLite alone.
      this.index = this.newIndex();
      this.index.restore(undefined, this.keys, (ids) => this.store.vectorsOf(ids));
    }
    // Exchanges completed before a crash (this writer's predecessor or another gone writer), never embedded: embedded now, once.
    await this.embedCompleteExchanges();
  }

  async save(event: MemoryEvent): Promise<void> {
    const entry: PendingMessage = { origin: this.store.writer, message: event.message, turn: event.turn, ...(event.timestamp !== undefined ? { timestamp: event.timestamp } : {}) };
    this.pending.push(entry);
    if (!isHuman(event.message)) return this.store.appendPending(entry);
    // A new user message completes the exchange before it: embed that, and the message itself (the
    // query of the next load), in one call; then the message and the exchange it completes are
    // committed together, so a turn costs one durable commit per message.
    await this.embedCompleteExchanges(messageText(event.message), entry);
  }

  async load(input: LoadInput): Promise<LoadResult> {
    this.catchUp();
    const recent = Math.min(this.options.recentExchanges, this.keys.length);
    const searchable = this.keys.length - recent;
    const messages: BaseMessage[] = [];
    if (searchable > 0 && input.query.trim()) {
      const chosen = await this.retrieve(input, searchable, recent > 0 ? this.keys[searchable]! : Infinity);
      if (chosen.length > 0) messages.push(this.memoryMessage(chosen));
    }
    for (let i = searchable; i < this.keys.length; i++) messages.push(...this.exchange(this.keys[i]!).messages);
    for (const entry of this.pending) messages.push(entry.message);
    return { messages: withoutOrphanTools(messages) };
  }

  async flush(): Promise<void> {
    this.store.flush();
    if (this.held && this.held.size > 0) this.held = this.newIndex(); // every held exchange now has its id
    if (this.persistent && this.index && this.vectors.unsaved > 0) this.vectors.save(path.join(this.context.dir, INDEX_FILE));
  }

  /** Every exchange and pending message in the store, every writer's (read from SQLite: durability checks only). */
  async snapshot(): Promise<string[]> {
    const stored = this.store.storedTexts();
    const unwritten = this.persistent ? this.keys.filter((key) => key >= HELD_BASE) : this.keys;
    return [
      ...stored.exchanges,
      ...stored.pending.map((message) => exchangeText([message])),
      ...unwritten.map((key) => this.exchange(key).text),
      ...this.pending.filter((entry) => !this.persistent || entry.seq === undefined).map((entry) => exchangeText([entry.message])),
    ];
  }

  async close(): Promise<void> {
    if (this.index) await this.flush();
    this.store.close();
    this.index = undefined;
    this.held = undefined;
  }

  private newIndex(): VectorIndex {
    return new VectorIndex({ dimensions: this.context.embedder.dimensions, exactBelow: this.options.exactBelow, efSearch: Math.max(this.options.k * 4, 64), seed: this.context.seed });
  }

  /** Adds the exchanges other writers stored since the last look: one O(1) query when there are none. */
  private catchUp(): void {
    if (!this.persistent || this.store.latestId() <= this.seenUpTo) return;
    for (const row of this.store.exchangesAfter(this.seenUpTo)) {
      if (!this.records.has(row.id)) this.addExchange(row.id, { turn: row.turn, ...(row.timestamp !== undefined ? { timestamp: row.timestamp } : {}) }, row.vector);
      this.seenUpTo = row.id;
    }
  }

  private addExchange(id: number, record: ExchangeRecord, vector: Float32Array): void {
    if (!this.vectors.has(id)) this.vectors.add(vector, id); // on open, the index file may hold rows newer than the listing
    this.records.set(id, record);
    insertSorted(this.keys, id);
    if (id === this.seenUpTo + 1) this.seenUpTo = id;
  }

  /** Mode `exit`: a held exchange was written at flush; it moves to its SQLite id (none: another writer stored it). */
  private settle(key: number, id: number | undefined): void {
    const record = this.records.get(key)!;
    this.records.delete(key);
    this.keys.splice(lowerBound(this.keys, key), 1);
    const { vector } = record;
    delete record.vector;
    if (id !== undefined) this.addExchange(id, record, vector!);
  }

  /**
   * Embeds and stores every complete exchange in `pending` (normally the one before the new user
   * message); `message`, the new user message, is written in the same commit.
   */
  private async embedCompleteExchanges(query?: string, message?: PendingMessage): Promise<void> {
    let lastHuman = -1;
    for (let i = this.pending.length - 1; i >= 0 && lastHuman < 0; i--) if (isHuman(this.pending[i]!.message)) lastHuman = i;
    const groups = lastHuman > 0 ? splitExchanges(this.pending.slice(0, lastHuman)) : [];
    const queryText = query?.trim() ? query : undefined;
    if (groups.length === 0 && queryText === undefined) {
      if (message) this.store.appendPending(message);
      return;
    }
    const texts = groups.map((group) => exchangeText(group.map((entry) => entry.message)) || '(empty exchange)');
    let vectors: Float32Array[];
    try {
      vectors = await this.context.embedder.embed(queryText === undefined ? texts : [...texts, queryText]);
    } catch (error) {
      // The embedder failed (an endpoint down): the user's input is kept all the same; the next opener embeds the exchange.
      if (message) this.store.appendPending(message);
      throw error;
    }
    if (queryText !== undefined) this.queryCache = { text: queryText, vector: vectors[texts.length]! };
    this.store.together(() => {
      if (message) this.store.appendPending(message);
      this.storeExchanges(groups, vectors);
    });
    if (groups.length > 0) this.pending = this.pending.slice(lastHuman);
    this.maybeSaveIndex();
  }

  /** Stores embedded exchanges (inside the caller's commit). */
  private storeExchanges(groups: readonly PendingMessage[][], vectors: readonly Float32Array[]): void {
    for (const [i, group] of groups.entries()) {
      const vector = vectors[i];
      if (vector?.length !== this.context.embedder.dimensions) throw new Error(`vector: embedder ${this.context.embedder.id} returned a vector of the wrong size`);
      const messages = group.map((entry) => entry.message);
      const timestamp = group.find((entry) => entry.timestamp !== undefined)?.timestamp;
      const record = { turn: group[0]!.turn, ...(timestamp !== undefined ? { timestamp } : {}), text: renderExchange(messages), messages };
      if (!this.persistent) {
        this.addExchange(this.nextLocal++, record, vector);
      } else if (this.store.deferred) {
        const key = HELD_BASE + this.nextLocal++;
        this.held!.add(vector, key - HELD_BASE);
        this.records.set(key, { ...record, vector });
        this.keys.push(key);
        this.store.commitExchange(record, group, vector, (id) => this.settle(key, id));
      } else {
        this.store.commitExchange(record, group, vector, (id) => id !== undefined && this.addExchange(id, record, vector));
      }
    }
  }

  /** Rewrites the index file once the unsaved part is big enough: amortised O(1) per exchange. */
  private maybeSaveIndex(): void {
    if (this.context.durability !== 'sync' && this.context.durability !== 'async') return;
    const index = this.vectors;
    const saved = index.size - index.unsaved;
    if (index.unsaved < Math.max(this.options.persistEvery, Math.ceil(saved / 4))) return;
    index.save(path.join(this.context.dir, INDEX_FILE)); // it holds stored exchanges only: SQLite has every vector in it
  }

  /** The top-k exchanges listed before `limit` (the `searchable` first keys), chosen by score and returned oldest first. */
  private async retrieve(input: LoadInput, searchable: number, limit: number): Promise<{ key: number; record: ExchangeRecord }[]> {
    const { k, recencyWeight: weight, halfLife, minSimilarity } = this.options;
    const query = await this.queryVector(input.query);
    const similarity = new Map<number, number>();
    const pool = (index: VectorIndex): number => (weight === 0 ? k : index.exact ? index.size : Math.max(4 * k, 64));
    for (const hit of this.vectors.search(query, pool(this.vectors), limit)) similarity.set(hit.label, hit.similarity);
    if (this.held && limit > HELD_BASE) for (const hit of this.held.search(query, pool(this.held), limit - HELD_BASE)) similarity.set(hit.label + HELD_BASE, hit.similarity);
    if (weight > 0 && !(this.vectors.exact && (this.held?.exact ?? true))) {
      // HNSW only returns the most similar: score the recent exchanges too, whose recency bonus may outrank them.
      const horizon = halfLife * RECENCY_HORIZON_HALF_LIVES;
      for (let i = searchable - 1; i >= 0 && searchable - i <= MAX_RECENCY_CANDIDATES; i--) {
        const key = this.keys[i]!;
        if (input.turn - this.records.get(key)!.turn > horizon) break;
        if (!similarity.has(key)) similarity.set(key, key >= HELD_BASE ? this.held!.similarity(query, key - HELD_BASE) : this.vectors.similarity(query, key));
      }
    }
    const scored: { key: number; score: number }[] = [];
    for (const [key, sim] of similarity) {
      if (sim <= minSimilarity) continue;
      const age = Math.max(0, input.turn - this.records.get(key)!.turn);
      scored.push({ key, score: weight === 0 ? sim : (1 - weight) * sim + weight * 2 ** (-age / halfLife) });
    }
    scored.sort((a, b) => b.score - a.score || b.key - a.key);
    return scored
      .slice(0, k)
      .sort((a, b) => a.key - b.key)
      .map(({ key }) => ({ key, record: this.records.get(key)! }));
  }

  private async queryVector(text: string): Promise<Float32Array> {
    if (this.queryCache?.text !== text) this.queryCache = { text, vector: (await this.context.embedder.embed([text]))[0]! };
    return this.queryCache.vector;
  }

  /** The same SystemMessage object while the retrieved set is unchanged, so its tokens are counted once. */
  private memoryMessage(chosen: readonly { key: number; record: ExchangeRecord }[]): SystemMessage {
    const cacheKey = chosen.map(({ key }) => key).join(',');
    if (this.memoryCache?.key !== cacheKey) {
      const blocks = chosen.map(({ key, record }) => `[turn ${record.turn}${record.timestamp ? `, ${record.timestamp}` : ''}]\n${this.exchange(key).text}`);
      this.memoryCache = { key: cacheKey, message: new SystemMessage(`${MEMORY_HEADER}\n\n${blocks.join('\n\n')}`) };
    }
    return this.memoryCache.message;
  }

  private exchange(key: number): { text: string; messages: BaseMessage[] } {
    const record = this.records.get(key)!;
    if (record.text === undefined || record.messages === undefined) Object.assign(record, this.store.readExchange(key));
    return { text: record.text!, messages: record.messages! };
  }
}

/** The registry entry for `vector`. */
export const vector = defineStrategy({
  name: 'vector',
  description: 'every exchange embedded once into an HNSW index; top-k relevant exchanges retrieved (VectorStoreRetrieverMemory)',
  options: vectorOptions,
  defaultDurability: 'sync',
  preload: () => void loadHnswlib(),
  create: (context, options) => new VectorStrategy(context, options),
});
