/**
 * What `vector`, `bm25` and `hybrid` share: every exchange (a user message, the reply, and the
 * tool calls and results of that turn) is indexed once, when it is complete, and for each model
 * call the top-k most relevant earlier exchanges are retrieved, listed oldest first in one
 * SystemMessage (so a correction reads after the fact it corrects); the last `recentExchanges`
 * stored exchanges (of any writer) and this writer's exchange in progress follow verbatim.
 *
 * `ExchangeMemory` owns the exchange lifecycle and its persistence (exchange-store.ts): pending
 * messages, complete exchanges, other writers' rows, mode `exit`'s held exchanges. What makes
 * an exchange findable is an `ExchangeRetriever`: the HNSW index of embeddings
 * (vector-retriever.ts), the FTS5 index of terms (lexical-retriever.ts), or both fused (hybrid).
 * Each load also returns the ranking itself (`retrieved`, with each exchange's step ids), on
 * which retrieval metrics are judged.
 *
 * With `unit: 'session'` the ranked documents are conversation sessions (MemoryEvent.session): a
 * session's exchanges' indexed texts joined into one document (LongMemEval's session granularity),
 * ranked by the retriever's `rankDocuments`; the top-k sessions go into the context whole. The
 * session documents are derived from the stored exchanges and kept in memory only. With
 * `unit: 'message'` each indexed message is a document of its own (LoCoMo's dialog unit).
 */
import { SystemMessage, type AIMessage, type BaseMessage, type ToolMessage } from '@langchain/core/messages';
import { messageText } from '../../harness/core/tokens.js';
import { undatedText } from '../../harness/core/text.js';
import { insertSorted, lowerBound } from '../stores/vector-index.js';
import {
  ExchangeStore,
  type ExchangeFeatures,
  type ExchangeStoreOptions,
  type PendingMessage,
  type StoreIdentity,
  type StoredExchange,
} from '../stores/exchange-store.js';
import { opaqueMessageId } from '../../harness/scenarios/step-ids.js';
import type { LoadInput, LoadResult, MemoryEvent, MemoryStrategy, RetrievedItem, StrategyContext } from '../types.js';

/** Keys of exchanges held in memory until flush (mode `exit`): above every SQLite id, so they sort last. */
export const HELD_BASE = 2 ** 31;

/** What one ranking call is asked: the best `n` of the searchable exchanges for the query. */
export interface RankRequest {
  query: string;
  turn: number;
  n: number;
  /** Only keys below this are searchable (the recent exchanges, included verbatim, are not). */
  below: number;
  /** Every key, ascending; the first `searchable` of them are the searchable ones. */
  keys: readonly number[];
  searchable: number;
  /** The turn an exchange happened in (for recency weighting). */
  turnOf: (key: number) => number;
}

/**
 * A document ranked as one (a session's exchanges joined): its key and its text. While a document
 * is unchanged it is the same object, its text the same string, on every load: a retriever finds
 * an unchanged document by identity, without reading its text.
 */
export interface RankedDocument {
  key: number;
  text: string;
  /**
   * The texts `text` joins, by a line break (a session's exchanges), each the same string while it
   * stays in the document: a retriever may compute features part by part and keep those of the
   * parts a grown document still holds.
   */
  parts?: readonly string[];
}

/** A ranked exchange: higher scores first. */
export interface RankedKey {
  key: number;
  score: number;
}

/**
 * Makes stored exchanges findable. Keys are SQLite ids (local ids in mode `none`; `HELD_BASE`
 * and above for exchanges mode `exit` holds until flush).
 */
export interface ExchangeRetriever {
  /** The columns the store must keep for it. */
  readonly needs: Pick<ExchangeStoreOptions, 'vectors' | 'terms'>;
  /**
   * Ranks a paper's corpus (`bm25` with `ranker: okapi-paper`): every unit (`turn` too) goes to
   * rankDocuments as documents, each message as the dataset gives it (MemoryEvent.indexText, or its
   * text without the harness's date note), a document's messages joined by single spaces.
   */
  readonly paperCorpus?: boolean;
  /** What produced its features: checked against what the store recorded. */
  identity(): StoreIdentity;
  /** Restores its index for the stored exchanges (`keys` ascending) of a freshly opened store. */
  open(store: ExchangeStore, keys: readonly number[], dimensions: number | undefined): void;
  /** After the first catch-up on open: a last chance to rebuild what disagrees with the store. */
  afterOpen?(keys: readonly number[]): void;
  /** Features of complete exchanges' texts; `query` (the next load's) may be prepared in the same call. */
  features(texts: readonly string[], query?: string): Promise<ExchangeFeatures[]>;
  /** An exchange now has a key (stored, local or held); a no-op for one it already has. */
  add(key: number, features: ExchangeFeatures): void;
  /** Mode `exit`: a held exchange was written and got its id (undefined: another writer stored it). */
  settle(heldKey: number, id: number | undefined, features: ExchangeFeatures): void;
  rank(request: RankRequest): Promise<RankedKey[]>;
  /**
   * Ranks documents that are not stored exchanges (`unit: 'session'`): the best `n` for the query,
   * by relevance alone. Features of an unchanged document (same key, same text) are reused.
   */
  rankDocuments(query: string, documents: readonly RankedDocument[], n: number): Promise<RankedKey[]>;
  /** After exchanges were stored (the vector index file is rewritten now and then). */
  afterStore?(): void;
  /** Persists its cache (flush and close). */
  flush(): void;
  close(): void;
}

/** The knobs every exchange-retrieving strategy has. */
export interface ExchangeMemoryOptions {
  /** Earlier exchanges retrieved per model call. */
  k: number;
  /** Most recent complete exchanges always included verbatim (not counted in k). */
  recentExchanges: number;
  /** `user`: an exchange is indexed by its user message alone (default `exchange`: all of it). */
  index?: 'exchange' | 'user';
  /** `session`: the ranked documents are sessions, each its exchanges joined (default `turn`: one exchange). */
  unit?: 'turn' | 'session' | 'message';
}

/** 0 keeps the relevance alone; w > 0 blends it with a bonus that halves every `halfLife` turns. */
export function withRecency(relevance: number, age: number, weight: number, halfLife: number): number {
  return weight === 0 ? relevance : (1 - weight) * relevance + weight * 2 ** (-Math.max(0, age) / halfLife);
}

/** Beyond this many half-lives the recency bonus is under 1% of its weight: older exchanges compete on relevance alone. */
const RECENCY_HORIZON_HALF_LIVES = 7;
const MAX_RECENCY_CANDIDATES = 1024;

/** The searchable keys recent enough for their recency bonus to matter, newest first (at most 1,024). */
export function recentKeys(request: RankRequest, halfLife: number): number[] {
  const horizon = halfLife * RECENCY_HORIZON_HALF_LIVES;
  const out: number[] = [];
  for (let i = request.searchable - 1; i >= 0 && out.length < MAX_RECENCY_CANDIDATES; i--) {
    const key = request.keys[i]!;
    if (request.turn - request.turnOf(key) > horizon) break;
    out.push(key);
  }
  return out;
}

/** Best first; on equal scores the newer (higher) key first. */
export const byScore = (a: RankedKey, b: RankedKey): number => b.score - a.score || b.key - a.key;

const MEMORY_HEADER =
  'Relevant memories from earlier in this conversation (the most relevant exchanges, oldest first):';

/** A complete exchange, keyed by its id. Text and messages load lazily after a reopen. */
interface ExchangeRecord {
  turn: number;
  timestamp?: string;
  stepIds: string[];
  /** The conversation session of its first message, when the agent gave one. */
  session?: number;
  text?: string;
  messages?: BaseMessage[];
  /** What a session document holds of it (`unit: 'session'`), computed on first use. */
  indexText?: string;
  /** Each message as the dataset gives it (paper corpora), when the messages were saved with one. */
  paperTexts?: (string | undefined)[];
  /** Mode `exit`: the features of an exchange not written yet. */
  features?: ExchangeFeatures;
}

const isHuman = (message: BaseMessage): boolean => message.getType() === 'human';

function toolCallsOf(message: BaseMessage): NonNullable<AIMessage['tool_calls']> {
  return message.getType() === 'ai' ? ((message as AIMessage).tool_calls ?? []) : [];
}

/** What gets indexed: the words of the exchange, without role labels (they would make every exchange look alike). */
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
        for (const call of toolCallsOf(message))
          lines.push(`Assistant called ${call.name}(${JSON.stringify(call.args)})`);
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

/** The step ids of an exchange's messages, each once, in order (an exchange holds a few: a loop, not a Set). */
function stepIdsOf(group: readonly PendingMessage[]): string[] {
  const ids: string[] = [];
  for (const { stepId } of group) if (stepId !== undefined && !ids.includes(stepId)) ids.push(stepId);
  return ids;
}
const recordOf = (row: StoredExchange): ExchangeRecord => ({
  turn: row.turn,
  stepIds: row.stepIds,
  ...(row.timestamp !== undefined ? { timestamp: row.timestamp } : {}),
  ...(row.session !== undefined ? { session: row.session } : {}),
});

/** A ranked document of `unit` session or message: what it says, the exchanges it is part of and the step ids it reports. */
interface UnitDocument extends RankedDocument {
  exchanges: number[];
  stepIds: string[];
}

const sameKeys = (a: readonly number[], b: readonly number[]): boolean =>
  a.length === b.length && a.every((key, i) => key === b[i]);

/** `unit: 'message'` documents of one exchange: at most this many (the rest of a longer exchange is not ranked alone). */
const MESSAGES_PER_EXCHANGE = 1024;

/** Whether the messages end in a finished reply: an assistant message that calls no tool. */
const endsInReply = (messages: readonly PendingMessage[]): boolean => {
  const last = messages.at(-1)?.message;
  return (
    last !== undefined &&
    last.getType() === 'ai' &&
    toolCallsOf(last).length === 0 &&
    messages.some((entry) => isHuman(entry.message))
  );
};

/** The exchange lifecycle of a retrieving strategy, with the retriever that ranks its exchanges. */
export class ExchangeMemory implements MemoryStrategy {
  readonly capabilities = { persistent: true, explicitMemory: false, backgroundWork: false };
  private readonly store: ExchangeStore;
  private records = new Map<number, ExchangeRecord>();
  /** Keys of `records`, ascending: the order exchanges are listed in, and the recent ones last. */
  private keys: number[] = [];
  /** Every stored id up to this one is in `records`; later ones may be other writers' rows. */
  private seenUpTo = 0;
  private nextLocal = 1;
  private pending: PendingMessage[] = [];
  /** Pending messages adopted on open (a crashed predecessor's): a replayed save of the last one is not saved twice. */
  private adopted = new Set<PendingMessage>();
  private memoryCache: { key: string; message: SystemMessage } | undefined;
  /** `unit: 'session'`: each session's document, kept while its exchanges are the same. */
  private sessionCache = new Map<number, UnitDocument>();
  /** `unit: 'turn'` (a paper's corpus) or `'message'`: each exchange's documents, by its key. */
  private documentCache = new Map<number, UnitDocument[]>();
  private opened = false;

  constructor(
    private readonly context: StrategyContext,
    private readonly options: ExchangeMemoryOptions,
    private readonly retriever: ExchangeRetriever,
    file: string,
  ) {
    this.store = new ExchangeStore(context.dir, context.durability, {
      file,
      ...retriever.needs,
      midWrite: () => context.checkpoint?.('mid_memory_write'),
    });
  }

  /** Rows read from SQLite on the hot path (catch-up checks, lazy reads), for complexity tests. */
  get rowsRead(): number {
    return this.store.rowsRead;
  }

  private get persistent(): boolean {
    return this.context.durability !== 'none';
  }

  async open(): Promise<void> {
    if (this.opened) return;
    const { exchanges, pending, dimensions } = this.store.open({
      ...this.retriever.identity(),
      index: this.options.index ?? 'exchange',
    });
    this.records = new Map(exchanges.map((row) => [row.id, recordOf(row)]));
    this.keys = exchanges.map(({ id }) => id);
    this.seenUpTo = this.keys.at(-1) ?? 0;
    this.pending = pending;
    this.adopted = new Set(pending);
    this.memoryCache = undefined;
    this.sessionCache.clear();
    this.documentCache.clear();
    this.retriever.open(this.store, this.keys, dimensions);
    this.opened = true;
    this.catchUp(); // rows stored since the listing above; the index may already hold them
    this.retriever.afterOpen?.(this.keys);
    // Exchanges completed before a crash (this writer's predecessor or another gone writer), never indexed: indexed now, once.
    await this.indexCompleteExchanges();
  }

  async save(event: MemoryEvent): Promise<void> {
    const last = this.pending.at(-1);
    if (
      last &&
      this.adopted.has(last) &&
      isHuman(event.message) &&
      isHuman(last.message) &&
      last.turn === event.turn &&
      messageText(last.message) === messageText(event.message)
    ) {
      return; // the agent re-saves the message whose save a crash interrupted: it is already stored
    }
    const entry: PendingMessage = {
      origin: this.store.writer,
      message: event.message,
      turn: event.turn,
      ...(event.timestamp !== undefined ? { timestamp: event.timestamp } : {}),
      ...(event.stepId !== undefined ? { stepId: event.stepId } : {}),
      ...(event.session !== undefined ? { session: event.session } : {}),
      ...(event.indexText !== undefined ? { indexText: event.indexText } : {}),
    };
    this.pending.push(entry);
    if (!isHuman(event.message)) return this.store.appendPending(entry);
    // A new user message completes the exchange before it: index that, and prepare the message
    // itself (the query of the next load), in one call; then the message and the exchange it
    // completes are committed together, so a turn costs one durable commit per message.
    await this.indexCompleteExchanges(messageText(event.message), entry);
  }

  async load(input: LoadInput): Promise<LoadResult> {
    // A question asked with no user message of its turn before it (a probe) finds everything said
    // before it: the exchange before it is finished, replied to or not (a replayed conversation's
    // last message, which no later message completes), and is indexed now, like the others.
    if (endsInReply(this.pending) || this.pending.every((entry) => entry.turn < input.turn))
      await this.indexCompleteExchanges(undefined, undefined, true);
    this.catchUp();
    if (this.options.unit === 'session' || this.options.unit === 'message' || this.retriever.paperCorpus)
      return this.loadDocuments(input);
    const recent = Math.min(this.options.recentExchanges, this.keys.length);
    const searchable = this.keys.length - recent;
    const messages: BaseMessage[] = [];
    let retrieved: RetrievedItem[] = [];
    if (this.keys.length > 0 && input.query.trim()) {
      const request: RankRequest = {
        query: input.query,
        turn: input.turn,
        n: this.options.k,
        below: recent > 0 ? this.keys[searchable]! : Infinity,
        keys: this.keys,
        searchable,
        turnOf: (key) => this.records.get(key)!.turn,
      };
      const ranked = searchable > 0 ? await this.rank(request) : [];
      const chosen = ranked.map(({ key }) => key).sort((a, b) => a - b);
      if (chosen.length > 0) messages.push(this.memoryMessage(chosen));
      // Asked for a deeper ranking (a probe): every stored exchange competes, the recent ones too, as retrieval benchmarks rank the whole history.
      const deep =
        input.rankDepth === undefined
          ? ranked
          : await this.rank({
              ...request,
              n: Math.max(this.options.k, input.rankDepth),
              below: Infinity,
              searchable: this.keys.length,
            });
      retrieved = deep.map(({ key, score }) => ({ stepIds: this.records.get(key)!.stepIds, score }));
    }
    for (let i = searchable; i < this.keys.length; i++) messages.push(...this.exchange(this.keys[i]!).messages);
    for (const entry of this.pending) messages.push(entry.message);
    return { messages: withoutOrphanTools(messages), retrieved };
  }

  async flush(): Promise<void> {
    this.store.flush();
    this.retriever.flush();
  }

  /** Every exchange and pending message in the store, every writer's (read from SQLite: durability checks only). */
  async snapshot(): Promise<string[]> {
    const stored = this.store.storedTexts();
    const unwritten = this.persistent ? this.keys.filter((key) => key >= HELD_BASE) : this.keys;
    return [
      ...stored.exchanges,
      ...stored.pending.map((message) => exchangeText([message])),
      ...unwritten.map((key) => this.exchange(key).text),
      ...this.pending
        .filter((entry) => !this.persistent || entry.seq === undefined)
        .map((entry) => exchangeText([entry.message])),
    ];
  }

  /**
   * Mode `sync`: every finished exchange and pending message is in the store as this instance
   * holds it, so a new session keeps the store, the index and the session documents' features
   * open (a reopen listed every stored exchange and re-embedded the documents).
   */
  async newSession(): Promise<boolean> {
    return this.opened && this.context.durability === 'sync';
  }

  async close(): Promise<void> {
    if (this.opened) await this.flush();
    this.retriever.close();
    this.store.close();
    this.opened = false;
  }

  /**
   * `unit: 'session'` or `'message'`: documents that are not one exchange each, ranked once by
   * the retriever's rankDocuments; the context gets the exchanges of the top-k documents (the
   * recent ones verbatim after them), `retrieved` one item per document with its step ids.
   */
  private async loadDocuments(input: LoadInput): Promise<LoadResult> {
    const recent = Math.min(this.options.recentExchanges, this.keys.length);
    const searchable = this.keys.length - recent;
    const messages: BaseMessage[] = [];
    let retrieved: RetrievedItem[] = [];
    if (this.keys.length > 0 && input.query.trim()) {
      const documents =
        this.options.unit === 'session'
          ? this.sessionDocuments()
          : this.options.unit === 'message'
            ? this.messageDocuments()
            : this.turnDocuments();
      const byKey = new Map(documents.map((document) => [document.key, document]));
      const ranked = await this.retriever.rankDocuments(
        input.query,
        documents,
        Math.max(this.options.k, input.rankDepth ?? 0),
      );
      const below = this.keys[searchable] ?? Infinity;
      const chosen = [
        ...new Set(
          ranked
            .slice(0, this.options.k)
            .flatMap(({ key }) => byKey.get(key)!.exchanges.filter((member) => member < below)),
        ),
      ].sort((a, b) => a - b);
      if (chosen.length > 0) messages.push(this.memoryMessage(chosen));
      const depth = input.rankDepth === undefined ? this.options.k : Math.max(this.options.k, input.rankDepth);
      retrieved = ranked.slice(0, depth).map(({ key, score }) => ({ stepIds: byKey.get(key)!.stepIds, score }));
    }
    for (let i = searchable; i < this.keys.length; i++) messages.push(...this.exchange(this.keys[i]!).messages);
    for (const entry of this.pending) messages.push(entry.message);
    return { messages: withoutOrphanTools(messages), retrieved };
  }

  /**
   * One document per conversation session: its exchanges' indexed texts joined, keyed by the
   * session number. A session's document is built again only when its exchanges changed (the
   * session in progress grew): a load costs the number of exchanges, not the length of their texts.
   */
  private sessionDocuments(): UnitDocument[] {
    const members = new Map<number, number[]>();
    for (const key of this.keys) {
      const session = this.records.get(key)!.session ?? 0;
      const list = members.get(session);
      if (list) list.push(key);
      else members.set(session, [key]);
    }
    for (const session of this.sessionCache.keys()) if (!members.has(session)) this.sessionCache.delete(session);
    return [...members].map(([key, exchanges]) => {
      const kept = this.sessionCache.get(key);
      if (kept && sameKeys(kept.exchanges, exchanges)) return kept;
      const parts = this.retriever.paperCorpus ? undefined : exchanges.map((member) => this.indexedText(member));
      const document: UnitDocument = {
        key,
        text: parts ? parts.join('\n') : exchanges.flatMap((member) => this.paperTexts(member)).join(' '),
        ...(parts ? { parts } : {}),
        exchanges,
        stepIds: [...new Set(exchanges.flatMap((member) => this.records.get(member)!.stepIds))],
      };
      this.sessionCache.set(key, document);
      return document;
    });
  }

  /**
   * One document per indexed message (LoCoMo's dialog unit: one utterance), keyed by its
   * exchange's key and position; its step id names the message (opaqueMessageId) when the
   * exchange is one step's.
   */
  private messageDocuments(): UnitDocument[] {
    return this.keys.flatMap((key) => this.exchangeDocuments(key, () => this.messageDocumentsOf(key)));
  }

  /** `unit: 'message'` documents of one exchange. */
  private messageDocumentsOf(key: number): UnitDocument[] {
    const documents: UnitDocument[] = [];
    const { stepIds } = this.records.get(key)!;
    const paper = this.retriever.paperCorpus ? this.paperTexts(key) : undefined;
    this.indexedMessages(this.exchange(key).messages)
      .slice(0, MESSAGES_PER_EXCHANGE)
      .forEach((message, position) => {
        // A paper's corpus holds every message, an empty one too (one empty token).
        const text = paper ? paper[position]! : exchangeText([message]);
        if (!text && !paper) return;
        const [only] = stepIds;
        const ids = stepIds.length === 1 && only !== undefined ? [opaqueMessageId(only, !isHuman(message))] : stepIds;
        documents.push({ key: key * MESSAGES_PER_EXCHANGE + position, text, exchanges: [key], stepIds: ids });
      });
    return documents;
  }

  /** One document per exchange holding an indexed message (`unit: 'turn'` of a paper's corpus): its messages' texts joined by a space. */
  private turnDocuments(): UnitDocument[] {
    return this.keys.flatMap((key) =>
      this.exchangeDocuments(key, () => {
        const texts = this.paperTexts(key);
        return texts.length === 0
          ? []
          : [{ key, text: texts.join(' '), exchanges: [key], stepIds: this.records.get(key)!.stepIds }];
      }),
    );
  }

  /**
   * The documents of one stored exchange (`unit: 'turn'` or `'message'`), built once: an exchange
   * never changes under its key, so a load costs the number of exchanges, not their texts' length.
   */
  private exchangeDocuments(key: number, build: () => UnitDocument[]): UnitDocument[] {
    let documents = this.documentCache.get(key);
    if (!documents) {
      // Keys that moved (mode `exit`'s held exchanges) leave their entries: dropped when they outnumber the live ones.
      if (this.documentCache.size > 2 * this.keys.length) this.documentCache.clear();
      documents = build();
      this.documentCache.set(key, documents);
    }
    return documents;
  }

  /**
   * The indexed messages of an exchange as the dataset gives them: the text it was saved with
   * (MemoryEvent.indexText), else the message's text without the date note the harness puts before it.
   */
  private paperTexts(key: number): string[] {
    const record = this.records.get(key)!;
    const messages = this.exchange(key).messages;
    const texts: string[] = [];
    messages.forEach((message, position) => {
      if (this.options.index === 'user' && !isHuman(message)) return;
      texts.push(record.paperTexts?.[position] ?? undatedText(messageText(message), record.timestamp));
    });
    return texts;
  }

  /** What an exchange is found by: its words, or its user messages' alone with `index: 'user'`. */
  private indexedMessages(messages: readonly BaseMessage[]): BaseMessage[] {
    return messages.filter((message) => this.options.index !== 'user' || isHuman(message));
  }

  /** The indexed text of a stored exchange (a session document's part). */
  private indexedText(key: number): string {
    const record = this.records.get(key)!;
    record.indexText ??= exchangeText(this.indexedMessages(this.exchange(key).messages));
    return record.indexText;
  }

  /** The retriever's ranking, without keys this writer does not know yet. */
  private async rank(request: RankRequest): Promise<RankedKey[]> {
    return (await this.retriever.rank(request)).filter(({ key }) => this.records.has(key));
  }

  /** Adds the exchanges other writers stored since the last look: one O(1) query when there are none. */
  private catchUp(): void {
    if (!this.persistent || this.store.latestId() <= this.seenUpTo) return;
    for (const row of this.store.exchangesAfter(this.seenUpTo)) {
      if (!this.records.has(row.id)) this.addExchange(row.id, recordOf(row), row);
      this.seenUpTo = row.id;
    }
  }

  private addExchange(id: number, record: ExchangeRecord, features: ExchangeFeatures): void {
    this.retriever.add(id, features);
    this.records.set(id, record);
    insertSorted(this.keys, id);
    if (id === this.seenUpTo + 1) this.seenUpTo = id;
  }

  /** Mode `exit`: a held exchange was written at flush; it moves to its SQLite id (none: another writer stored it). */
  private settle(key: number, id: number | undefined): void {
    const record = this.records.get(key)!;
    this.records.delete(key);
    this.keys.splice(lowerBound(this.keys, key), 1);
    const features = record.features!;
    delete record.features;
    this.retriever.settle(key, id, features);
    if (id !== undefined) this.addExchange(id, record, features);
  }

  /**
   * Indexes and stores every complete exchange in `pending` (normally the one before the new user
   * message); `message`, the new user message, is written in the same commit. With `all`, the
   * pending messages from the last user message on are a finished exchange too.
   */
  private async indexCompleteExchanges(query?: string, message?: PendingMessage, all = false): Promise<void> {
    let lastHuman = -1;
    for (let i = this.pending.length - 1; i >= 0 && lastHuman < 0; i--)
      if (isHuman(this.pending[i]!.message)) lastHuman = i;
    const cut = all ? this.pending.length : lastHuman;
    const groups = cut > 0 ? splitExchanges(this.pending.slice(0, cut)) : [];
    const queryText = query?.trim() ? query : undefined;
    if (groups.length === 0 && queryText === undefined) {
      if (message) this.store.appendPending(message);
      return;
    }
    const texts = groups.map(
      (group) => exchangeText(this.indexedMessages(group.map((entry) => entry.message))) || '(empty exchange)',
    );
    let features: ExchangeFeatures[];
    try {
      features = await this.retriever.features(texts, queryText);
    } catch (error) {
      // The embedder failed (an endpoint down): the user's input is kept all the same; the next opener indexes the exchange.
      if (message) this.store.appendPending(message);
      throw error;
    }
    // With no new message, the commit only moves pending messages (durable already) into their exchange.
    this.store.inOneCommit(
      () => {
        if (message) this.store.appendPending(message);
        this.storeExchanges(groups, features);
      },
      { derived: message === undefined },
    );
    if (groups.length > 0) this.pending = this.pending.slice(cut);
    this.retriever.afterStore?.();
  }

  /** Stores indexed exchanges (inside the caller's commit). */
  private storeExchanges(groups: readonly PendingMessage[][], features: readonly ExchangeFeatures[]): void {
    for (const [i, group] of groups.entries()) {
      const messages = group.map((entry) => entry.message);
      const timestamp = group.find((entry) => entry.timestamp !== undefined)?.timestamp;
      const session = group[0]!.session;
      const record: ExchangeRecord = {
        turn: group[0]!.turn,
        stepIds: stepIdsOf(group),
        ...(timestamp !== undefined ? { timestamp } : {}),
        ...(session !== undefined ? { session } : {}),
        text: renderExchange(messages),
        messages,
        ...(group.some((entry) => entry.indexText !== undefined)
          ? { paperTexts: group.map((entry) => entry.indexText) }
          : {}),
      };
      if (!this.persistent) {
        this.addExchange(this.nextLocal++, record, features[i]!);
        continue;
      }
      // The row a store writes: built only where there is a store to write it.
      const row = { ...record, text: record.text!, messages, ...features[i]! };
      if (this.store.deferred) {
        const key = HELD_BASE + this.nextLocal++;
        this.retriever.add(key, features[i]!);
        this.records.set(key, { ...record, features: features[i]! });
        this.keys.push(key);
        this.store.commitExchange(row, group, (id) => this.settle(key, id));
      } else {
        this.store.commitExchange(row, group, (id) => id !== undefined && this.addExchange(id, record, features[i]!));
      }
    }
  }

  /** The same SystemMessage object while the retrieved set is unchanged, so its tokens are counted once. */
  private memoryMessage(chosen: readonly number[]): SystemMessage {
    const cacheKey = chosen.join(',');
    if (this.memoryCache?.key !== cacheKey) {
      const blocks = chosen.map((key) => {
        const record = this.records.get(key)!;
        return `[turn ${record.turn}${record.timestamp ? `, ${record.timestamp}` : ''}]\n${this.exchange(key).text}`;
      });
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
