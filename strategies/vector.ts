/**
 * `vector`: every exchange (a user message, the reply, and the tool calls and results of that
 * turn) is embedded once, when it is complete, and the top-k most relevant earlier exchanges are
 * retrieved for each model call (LangChain's VectorStoreRetrieverMemory).
 *
 * Storage: SQLite holds every exchange's text, messages and vector (the durable source of
 * truth) plus the messages of the exchange in progress; the hnswlib-node HNSW index is a cache
 * written on flush/close and whenever `persistEvery` exchanges and a quarter of the index are
 * unsaved, so per-turn work stays O(1) amortised. Reopening reads the index file and adds the
 * vectors stored since, straight from SQLite: nothing is ever embedded twice.
 *
 * Retrieved exchanges are chosen by score and listed oldest first in one SystemMessage, so a
 * correction reads after the fact it corrects; the last `recentExchanges` complete exchanges and
 * the exchange in progress follow verbatim.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, SystemMessage, type AIMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { MembenchError } from '../harness/errors.js';
import { openDatabase, type SqliteDatabase } from '../harness/sqlite.js';
import { messageText } from '../harness/tokens.js';
import { VectorIndex } from '../harness/vector-index.js';
import { defineStrategy, type DurabilityMode, type LoadInput, type LoadResult, type MemoryEvent, type MemoryStrategy, type StrategyContext } from './types.js';

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

const DB_FILE = 'vector.sqlite';
const INDEX_FILE = 'vector.hnsw';
const MEMORY_HEADER = 'Relevant memories from earlier in this conversation (the most relevant exchanges, oldest first):';
/** Beyond this many half-lives the recency bonus is under 1% of its weight: older exchanges compete on similarity alone. */
const RECENCY_HORIZON_HALF_LIVES = 7;
const MAX_RECENCY_CANDIDATES = 1024;

/** A message of the exchange in progress, with the sequence number of its SQLite row. */
interface PendingMessage {
  seq: number;
  message: BaseMessage;
  turn: number;
  timestamp?: string;
}

/** A complete, embedded exchange; its id is its label in the vector index. Text and messages load lazily after a reopen. */
interface ExchangeRecord {
  turn: number;
  timestamp?: string;
  text?: string;
  messages?: BaseMessage[];
}

const isHuman = (message: BaseMessage): boolean => message.getType() === 'human';
const serialize = (messages: BaseMessage[]): string => JSON.stringify(mapChatMessagesToStoredMessages(messages));
const deserialize = (json: string): BaseMessage[] => mapStoredMessagesToChatMessages(JSON.parse(json));

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

function prepareStatements(db: SqliteDatabase) {
  const insertExchange = db.prepare('INSERT INTO exchanges (id, turn, timestamp, text, messages, vector) VALUES (?, ?, ?, ?, ?, ?)');
  const deletePending = db.prepare('DELETE FROM pending WHERE seq <= ?');
  return {
    vectorsFrom: db.prepare('SELECT vector FROM exchanges WHERE id >= ? ORDER BY id'),
    readExchange: db.prepare('SELECT text, messages FROM exchanges WHERE id = ?'),
    insertPending: db.prepare('INSERT INTO pending (seq, turn, timestamp, message) VALUES (?, ?, ?, ?)'),
    commitExchange: db.transaction((id: number, turn: number, timestamp: string | null, text: string, messages: string, vector: Buffer, lastSeq: number) => {
      insertExchange.run(id, turn, timestamp, text, messages, vector);
      deletePending.run(lastSeq);
    }),
  };
}

/** The SQLite side: exchanges with their vectors, and the exchange in progress. Writes follow the durability mode. */
class ExchangeStore {
  private db: SqliteDatabase | undefined;
  private statements: ReturnType<typeof prepareStatements> | undefined;
  private queue: (() => void)[] = [];
  private drainScheduled = false;

  constructor(
    private readonly dir: string,
    private readonly durability: DurabilityMode,
  ) {}

  /** Opens the file and returns the stored exchanges' turns and the pending messages (empty in `none` mode). */
  open(embedderKey: string): { exchanges: ExchangeRecord[]; pending: PendingMessage[] } {
    if (this.durability === 'none') return { exchanges: [], pending: [] };
    mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, DB_FILE);
    const db = openDatabase(file, this.durability);
    db.exec(`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS exchanges (id INTEGER PRIMARY KEY, turn INTEGER NOT NULL, timestamp TEXT,
        text TEXT NOT NULL, messages TEXT NOT NULL, vector BLOB NOT NULL);
      CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY, turn INTEGER NOT NULL, timestamp TEXT, message TEXT NOT NULL);`);
    const stored = db.prepare(`SELECT value FROM meta WHERE key = 'embedder'`).get() as { value: string } | undefined;
    if (stored && stored.value !== embedderKey) {
      db.close();
      throw new MembenchError('INVALID_ARGUMENT', `${file}: its exchanges were embedded with ${stored.value}, not ${embedderKey}; use the same embedder or a fresh dir`);
    }
    if (!stored) db.prepare(`INSERT INTO meta (key, value) VALUES ('embedder', ?)`).run(embedderKey);
    this.db = db;
    this.statements = prepareStatements(db);
    const exchanges = (db.prepare('SELECT turn, timestamp FROM exchanges ORDER BY id').all() as { turn: number; timestamp: string | null }[]).map((row) => ({
      turn: row.turn,
      ...(row.timestamp !== null ? { timestamp: row.timestamp } : {}),
    }));
    const rows = db.prepare('SELECT seq, turn, timestamp, message FROM pending ORDER BY seq').all() as { seq: number; turn: number; timestamp: string | null; message: string }[];
    const pending = rows.map((row) => ({ seq: row.seq, turn: row.turn, message: deserialize(row.message)[0]!, ...(row.timestamp !== null ? { timestamp: row.timestamp } : {}) }));
    return { exchanges, pending };
  }

  /** Stored vectors from `label` on, in label order (read once on open, to top up the index). */
  *vectorsFrom(label: number): Generator<Float32Array> {
    if (!this.statements) return;
    for (const row of this.statements.vectorsFrom.iterate(label) as Iterable<{ vector: Buffer }>) {
      yield new Float32Array(row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength));
    }
  }

  /** Text and messages of a stored exchange (after a reopen they are not kept in memory). */
  readExchange(id: number): { text: string; messages: BaseMessage[] } {
    const row = this.statements?.readExchange.get(id) as { text: string; messages: string } | undefined;
    if (!row) throw new Error(`vector: exchange ${id} is not in ${DB_FILE}`);
    return { text: row.text, messages: deserialize(row.messages) };
  }

  appendPending(entry: PendingMessage): void {
    const data = serialize([entry.message]);
    this.write((statements) => statements.insertPending.run(entry.seq, entry.turn, entry.timestamp ?? null, data));
  }

  /** Stores a finished exchange and drops its pending messages, in one transaction. */
  commitExchange(id: number, record: ExchangeRecord & { text: string; messages: BaseMessage[] }, vector: Float32Array, lastSeq: number): void {
    const messages = serialize(record.messages);
    const blob = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    this.write((statements) => statements.commitExchange(id, record.turn, record.timestamp ?? null, record.text, messages, blob, lastSeq));
  }

  /** Commits queued writes (write-behind in `async`, held back in `exit`). */
  flush(): void {
    this.drainScheduled = false;
    if (!this.db || this.queue.length === 0) return;
    const db = this.db;
    const batch = this.queue;
    this.queue = [];
    db.transaction(() => batch.forEach((write) => write()))();
  }

  close(): void {
    this.flush();
    this.db?.close();
    this.db = undefined;
    this.statements = undefined;
  }

  private write(operation: (statements: ReturnType<typeof prepareStatements>) => void): void {
    const statements = this.statements;
    if (!statements) return; // `none`: memory only
    if (this.durability === 'sync') return operation(statements);
    this.queue.push(() => operation(statements));
    if (this.durability === 'async' && !this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => this.flush());
    }
  }
}

class VectorStrategy implements MemoryStrategy {
  readonly capabilities = { persistent: true, explicitMemory: false, backgroundWork: false };
  private readonly store: ExchangeStore;
  private index: VectorIndex | undefined;
  private records: ExchangeRecord[] = [];
  private pending: PendingMessage[] = [];
  private nextSeq = 0;
  private queryCache: { text: string; vector: Float32Array } | undefined;
  private memoryCache: { key: string; message: SystemMessage } | undefined;

  constructor(
    private readonly context: StrategyContext,
    private readonly options: VectorOptions,
  ) {
    this.store = new ExchangeStore(context.dir, context.durability);
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
    this.records = exchanges;
    this.pending = pending;
    this.nextSeq = (pending.at(-1)?.seq ?? -1) + 1;
    this.queryCache = undefined;
    this.memoryCache = undefined;
    this.index = new VectorIndex({
      dimensions: embedder.dimensions,
      exactBelow: this.options.exactBelow,
      efSearch: Math.max(this.options.k * 4, 64),
      seed: this.context.seed,
    });
    const indexFile = this.persistent ? path.join(this.context.dir, INDEX_FILE) : undefined;
    this.index.restore(indexFile, this.records.length, (label) => this.store.vectorsFrom(label));
    // Exchanges completed before a crash, whose embedding never happened: embedded now, for the first time.
    await this.embedCompleteExchanges();
  }

  async save(event: MemoryEvent): Promise<void> {
    const entry: PendingMessage = { seq: this.nextSeq++, message: event.message, turn: event.turn, ...(event.timestamp !== undefined ? { timestamp: event.timestamp } : {}) };
    this.pending.push(entry);
    this.store.appendPending(entry); // the user's input is durable before the (slower) embedding
    // A new user message completes the exchange before it: embed that, and the message itself (the query of the next load), in one call.
    if (isHuman(event.message)) await this.embedCompleteExchanges(messageText(event.message));
  }

  async load(input: LoadInput): Promise<LoadResult> {
    const recent = Math.min(this.options.recentExchanges, this.records.length);
    const searchable = this.records.length - recent;
    const messages: BaseMessage[] = [];
    if (searchable > 0 && input.query.trim()) {
      const chosen = await this.retrieve(input, searchable);
      if (chosen.length > 0) messages.push(this.memoryMessage(chosen));
    }
    for (let id = searchable; id < this.records.length; id++) messages.push(...this.exchange(id).messages);
    for (const entry of this.pending) messages.push(entry.message);
    return { messages: withoutOrphanTools(messages) };
  }

  async flush(): Promise<void> {
    this.store.flush();
    if (this.persistent && this.index && this.vectors.unsaved > 0) this.vectors.save(path.join(this.context.dir, INDEX_FILE));
  }
  async snapshot(): Promise<string[]> {
    return [...this.records.map((_, id) => this.exchange(id).text), ...this.pending.map((item) => exchangeText([item.message]))];
  }


  async close(): Promise<void> {
    if (this.index) await this.flush();
    this.store.close();
    this.index = undefined;
  }

  /** Embeds and stores every complete exchange in `pending` (normally the one before the new user message). */
  private async embedCompleteExchanges(query?: string): Promise<void> {
    let lastHuman = -1;
    for (let i = this.pending.length - 1; i >= 0 && lastHuman < 0; i--) if (isHuman(this.pending[i]!.message)) lastHuman = i;
    const groups = lastHuman > 0 ? splitExchanges(this.pending.slice(0, lastHuman)) : [];
    const queryText = query?.trim() ? query : undefined;
    if (groups.length === 0 && queryText === undefined) return;
    const texts = groups.map((group) => exchangeText(group.map((entry) => entry.message)) || '(empty exchange)');
    const vectors = await this.context.embedder.embed(queryText === undefined ? texts : [...texts, queryText]);
    if (queryText !== undefined) this.queryCache = { text: queryText, vector: vectors[texts.length]! };
    for (const [i, group] of groups.entries()) {
      const vector = vectors[i];
      if (vector?.length !== this.context.embedder.dimensions) throw new Error(`vector: embedder ${this.context.embedder.id} returned a vector of the wrong size`);
      const messages = group.map((entry) => entry.message);
      const timestamp = group.find((entry) => entry.timestamp !== undefined)?.timestamp;
      const record = { turn: group[0]!.turn, ...(timestamp !== undefined ? { timestamp } : {}), text: renderExchange(messages), messages };
      this.store.commitExchange(this.records.length, record, vector, group.at(-1)!.seq);
      this.vectors.add(vector);
      this.records.push(record);
    }
    if (groups.length > 0) this.pending = this.pending.slice(lastHuman);
    this.maybeSaveIndex();
  }

  /** Rewrites the index file once the unsaved part is big enough: amortised O(1) per exchange. */
  private maybeSaveIndex(): void {
    if (this.context.durability !== 'sync' && this.context.durability !== 'async') return;
    const index = this.vectors;
    const saved = index.size - index.unsaved;
    if (index.unsaved < Math.max(this.options.persistEvery, Math.ceil(saved / 4))) return;
    this.store.flush(); // rows first: the index file never holds a vector SQLite lacks
    index.save(path.join(this.context.dir, INDEX_FILE));
  }

  /** The top-k exchanges below `searchable`, chosen by score and returned oldest first. */
  private async retrieve(input: LoadInput, searchable: number): Promise<{ id: number; record: ExchangeRecord }[]> {
    const { k, recencyWeight: weight, halfLife, minSimilarity } = this.options;
    const index = this.vectors;
    const query = await this.queryVector(input.query);
    const similarity = new Map<number, number>();
    const pool = weight === 0 ? k : index.exact ? searchable : Math.max(4 * k, 64);
    for (const hit of index.search(query, pool, searchable)) similarity.set(hit.label, hit.similarity);
    if (weight > 0 && !index.exact) {
      // HNSW only returns the most similar: score the recent exchanges too, whose recency bonus may outrank them.
      const horizon = halfLife * RECENCY_HORIZON_HALF_LIVES;
      for (let id = searchable - 1; id >= 0 && searchable - id <= MAX_RECENCY_CANDIDATES && input.turn - this.records[id]!.turn <= horizon; id--) {
        if (!similarity.has(id)) similarity.set(id, index.similarity(query, id));
      }
    }
    const scored: { id: number; score: number }[] = [];
    for (const [id, sim] of similarity) {
      if (sim <= minSimilarity) continue;
      const age = Math.max(0, input.turn - this.records[id]!.turn);
      scored.push({ id, score: weight === 0 ? sim : (1 - weight) * sim + weight * 2 ** (-age / halfLife) });
    }
    scored.sort((a, b) => b.score - a.score || b.id - a.id);
    return scored
      .slice(0, k)
      .sort((a, b) => a.id - b.id)
      .map(({ id }) => ({ id, record: this.records[id]! }));
  }

  private async queryVector(text: string): Promise<Float32Array> {
    if (this.queryCache?.text !== text) this.queryCache = { text, vector: (await this.context.embedder.embed([text]))[0]! };
    return this.queryCache.vector;
  }

  /** The same SystemMessage object while the retrieved set is unchanged, so its tokens are counted once. */
  private memoryMessage(chosen: readonly { id: number; record: ExchangeRecord }[]): SystemMessage {
    const key = chosen.map(({ id }) => id).join(',');
    if (this.memoryCache?.key !== key) {
      const blocks = chosen.map(({ id, record }) => `[turn ${record.turn}${record.timestamp ? `, ${record.timestamp}` : ''}]\n${this.exchange(id).text}`);
      this.memoryCache = { key, message: new SystemMessage(`${MEMORY_HEADER}\n\n${blocks.join('\n\n')}`) };
    }
    return this.memoryCache.message;
  }

  private exchange(id: number): { text: string; messages: BaseMessage[] } {
    const record = this.records[id]!;
    if (record.text === undefined || record.messages === undefined) Object.assign(record, this.store.readExchange(id));
    return { text: record.text!, messages: record.messages! };
  }
}

/** The registry entry for `vector`. */
export const vector = defineStrategy({
  name: 'vector',
  description: 'every exchange embedded once into an HNSW index; top-k relevant exchanges retrieved (VectorStoreRetrieverMemory)',
  options: vectorOptions,
  defaultDurability: 'sync',
  create: (context, options) => new VectorStrategy(context, options),
});
