/**
 * `mem0`: mem0's open-source `Memory` (npm `mem0ai`, its `mem0ai/oss` entry; optional, pinned)
 * behind the membench contract, as a peer of the built-ins.
 *
 * How the contract maps onto mem0's:
 * - Its history database (`history.db`) and its vector store (provider `memory`: SQLite with a
 *   brute-force cosine scan, `vector_store.db`, and `vector_store_entities.db` for its entity
 *   links) live in the strategy's dir; mem0's own config file (`MEM0_DIR`) too.
 * - Its LLM and embedder are mem0's `openai` providers pointed at a local OpenAI-compatible
 *   endpoint (harness/models/server.ts) that this strategy starts on 127.0.0.1 and stops at close.
 *   The endpoint answers with the run's model and embedder (the offline stand-in by default, a
 *   live `openai:NAME` when asked), through the harness's meter and response cache: what mem0
 *   spends is counted as maintenance, like any strategy's. Offline, its facts are the stand-in's.
 * - `save`: an exchange (the user's message, then what the assistant said and did until the next
 *   user message) goes to `add(messages, {userId})` once answered, with its step ids as metadata.
 *   mem0 extracts facts from it (one LLM call) and stores them; the messages themselves it keeps
 *   only when no fact is found. `load`: `search(query)` top-k, then the recent messages within
 *   `recentTokens` (held by this process, as an application holds its chat: mem0 does not give
 *   them back), then the exchange in flight.
 * - `remember` is `add(content, {infer: false})` (stored as said); `forget` deletes the memories
 *   that hold the name or the text.
 * - Durability: mem0's SQLite files use SQLite's defaults (rollback journal, synchronous FULL),
 *   committed before `add` returns, and offer no other mode: `sync` only. Telemetry
 *   (`MEM0_TELEMETRY`) is off unless the environment sets it.
 */
import path from 'node:path';
import { SystemMessage, type BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import { MembenchError } from '../../harness/core/errors.js';
import { messageText } from '../../harness/core/tokens.js';
import { startModelServer, type ModelServer } from '../../harness/models/server.js';
import { exchangeText } from '../shared/exchange-memory.js';
import { ExchangeInFlight, importOptional, stepIdsOf } from '../shared/peer-support.js';
import { trimToTokens } from '../shared/trimming.js';
import {
  defineStrategy,
  type LoadInput,
  type LoadResult,
  type MemoryEvent,
  type MemoryItem,
  type MemoryStrategy,
  type RememberAck,
  type StrategyContext,
} from '../types.js';

/** The package and the version membench is measured against (package.json pins it exactly). */
export const MEM0_PACKAGE = 'mem0ai';
const MEM0_ENTRY = `${MEM0_PACKAGE}/oss`;
/** The one user a scenario has: mem0 scopes every memory to a user, agent or run id. */
export const MEM0_USER_ID = 'membench-user';

/** What the adapter calls of mem0's `Memory` (typed here: the package is optional). */
interface Mem0SearchHit {
  id: string;
  memory: string;
  score?: number;
  metadata?: Record<string, unknown>;
}
export interface Mem0Memory {
  add(
    messages: string | { role: string; content: string }[],
    config: { userId: string; metadata?: Record<string, unknown>; infer?: boolean },
  ): Promise<unknown>;
  search(query: string, config: { filters: { user_id: string }; topK?: number }): Promise<{ results: Mem0SearchHit[] }>;
  getAll(config: { filters: { user_id: string }; topK?: number }): Promise<{ results: Mem0SearchHit[] }>;
  delete(memoryId: string): Promise<unknown>;
  /**
   * mem0 2.x's own initialization, started by its constructor and not awaited there: it creates the
   * vector store and writes an anonymous id to `MEM0_DIR/config.json` (an internal field, read only
   * to wait on it).
   */
  _initPromise?: Promise<unknown>;
}
type Mem0Constructor = new (config: Record<string, unknown>) => Mem0Memory;

/** Imports mem0, with its telemetry off unless the environment says otherwise (mem0 reads the variable at import). */
export async function importMem0(): Promise<Mem0Constructor> {
  process.env.MEM0_TELEMETRY ??= 'false';
  const [module] = await importOptional('mem0', [MEM0_ENTRY], [`${MEM0_PACKAGE}@3.3.1`]);
  return (module as { Memory: Mem0Constructor }).Memory;
}

export const mem0Options = z
  .object({
    /** Memories `search` returns into the context. */
    k: z.coerce.number().int().min(1).default(5),
    /** Budget of the recent messages that follow the memories (0: none). */
    recentTokens: z.coerce.number().int().min(0).default(1000),
  })
  .strict();
export type Mem0Options = z.output<typeof mem0Options>;

/** mem0's SQLite handles: the OSS `Memory` has no close, so the adapter closes the stores it opened. */
function closeStores(memory: Mem0Memory): void {
  const internals = memory as unknown as Record<
    string,
    { close?: () => void; db?: { open?: boolean; close?: () => void } } | undefined
  >;
  for (const key of ['db', 'vectorStore', '_entityStore']) {
    const store = internals[key];
    if (typeof store?.close === 'function') store.close();
    else if (store?.db?.open && typeof store.db.close === 'function') store.db.close();
  }
}

export class Mem0Strategy implements MemoryStrategy {
  readonly capabilities = { persistent: true, explicitMemory: true, backgroundWork: false, lossy: true };
  private server: ModelServer | undefined;
  private memory: Mem0Memory | undefined;
  private pending = new ExchangeInFlight();
  /** Completed exchanges' messages, newest last, trimmed to the budget as they come. */
  private recent: BaseMessage[] = [];
  /** The memories' system message, reused while its text is the same (the token counter caches per object). */
  private shown: SystemMessage | undefined;

  constructor(
    private readonly context: StrategyContext,
    private readonly options: Mem0Options,
    private readonly importModule = importMem0,
  ) {}

  async open(): Promise<void> {
    const Memory = await this.importModule();
    const { dir, model, embedder, tokens } = this.context;
    this.server = await startModelServer({ model, embedder, tokens });
    process.env.MEM0_DIR = dir; // mem0's own config.json (an anonymous id) goes in the cell, not the user's home
    const endpoint = { apiKey: 'membench-local', baseURL: this.server.baseUrl };
    this.memory = new Memory({
      version: 'v1.1',
      llm: { provider: 'openai', config: { ...endpoint, model: model.id } },
      embedder: { provider: 'openai', config: { ...endpoint, model: embedder.id } },
      vectorStore: {
        provider: 'memory',
        config: {
          collectionName: 'membench',
          dbPath: path.join(dir, 'vector_store.db'),
          ...(embedder.dimensions > 0 ? { dimension: embedder.dimensions } : {}),
        },
      },
      historyStore: { provider: 'sqlite', config: { historyDbPath: path.join(dir, 'history.db') } },
    });
    // Opened means ready: left running, mem0's initialization would write its files after a close
    // (a store closed at once, its dir removed: they would recreate the dir).
    await this.memory._initPromise;
    this.pending = new ExchangeInFlight();
    this.recent = [];
  }

  async save(event: MemoryEvent): Promise<void> {
    if (this.pending.endsBy(event.message)) await this.commit();
    this.pending.add(event);
  }

  async load(input: LoadInput): Promise<LoadResult> {
    if (this.pending.complete()) await this.commit();
    const depth = Math.max(this.options.k, input.rankDepth ?? 0);
    const { results } = await this.mem0().search(input.query, { filters: { user_id: MEM0_USER_ID }, topK: depth });
    const memories = results.slice(0, this.options.k).map((hit) => hit.memory);
    const messages: BaseMessage[] = [];
    if (memories.length > 0) {
      const text = `Memories about the user (mem0):\n${memories.map((memory) => `- ${memory}`).join('\n')}`;
      if (messageText(this.shown ?? new SystemMessage('')) !== text) this.shown = new SystemMessage(text);
      messages.push(this.shown!);
    }
    messages.push(...this.recent, ...this.pending.messages());
    const retrieved = results.map((hit) => ({ stepIds: hitStepIds(hit), score: hit.score ?? 0 }));
    return { messages, retrieved };
  }

  async remember(item: MemoryItem): Promise<RememberAck> {
    const name = item.name ?? item.content.slice(0, 60);
    await this.mem0().add(item.content, {
      userId: MEM0_USER_ID,
      infer: false,
      metadata: { name, ...(item.stepId !== undefined ? { stepIds: [item.stepId] } : {}) },
    });
    return { name };
  }

  async forget(nameOrContent: string): Promise<boolean> {
    const { results } = await this.mem0().getAll({ filters: { user_id: MEM0_USER_ID }, topK: Number.MAX_SAFE_INTEGER });
    const matching = results.filter(
      (hit) => hit.metadata?.name === nameOrContent || hit.memory.includes(nameOrContent),
    );
    for (const hit of matching) await this.mem0().delete(hit.id);
    return matching.length > 0;
  }

  async flush(): Promise<void> {
    if (this.pending.hasReply()) await this.commit();
  }

  async snapshot(): Promise<string[]> {
    const { results } = await this.mem0().getAll({ filters: { user_id: MEM0_USER_ID }, topK: Number.MAX_SAFE_INTEGER });
    return results.map((hit) => hit.memory);
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      if (this.memory) closeStores(this.memory);
      this.memory = undefined;
      await this.server?.close();
      this.server = undefined;
    }
  }

  private mem0(): Mem0Memory {
    if (!this.memory) throw new Error('mem0: the strategy is not open');
    return this.memory;
  }

  /** Hands the exchange to mem0's `add` and keeps its messages among the recent ones. */
  private async commit(): Promise<void> {
    const entries = this.pending.take();
    if (entries.length === 0) return;
    const isHuman = (entry: MemoryEvent): boolean => entry.message.getType() === 'human';
    const user = entries
      .filter(isHuman)
      .map((entry) => messageText(entry.message))
      .join('\n');
    const assistant = exchangeText(entries.filter((entry) => !isHuman(entry)).map((entry) => entry.message));
    const messages = [
      ...(user.trim() ? [{ role: 'user', content: user }] : []),
      ...(assistant.trim() ? [{ role: 'assistant', content: assistant }] : []),
    ];
    const stepIds = stepIdsOf(entries);
    if (messages.length > 0)
      await this.mem0().add(messages, { userId: MEM0_USER_ID, metadata: { stepIds, turn: entries[0]!.turn } });
    this.recent.push(...entries.map((entry) => entry.message));
    this.recent = this.trimRecent(this.recent);
  }

  /** The newest whole messages (a tool call with its result) within `recentTokens`, cut as `window` cuts. */
  private trimRecent(messages: BaseMessage[]): BaseMessage[] {
    if (this.options.recentTokens === 0 || messages.length === 0) return [];
    return messages.slice(trimToTokens(messages, 0, this.options.recentTokens, this.context.tokens));
  }
}

function hitStepIds(hit: Mem0SearchHit): string[] {
  const ids = hit.metadata?.stepIds;
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
}

export const mem0 = defineStrategy({
  name: 'mem0',
  description:
    "mem0's OSS Memory (mem0ai, SQLite history + vectors): facts extracted per exchange, search top-k + recent messages",
  options: mem0Options,
  defaultDurability: 'sync',
  durabilityModes: ['sync'],
  kind: 'extraction',
  keepsVerbatim: false,
  storage: 'sqlite',
  callsModelEveryTurn: true,
  labelKnobs: ['k'],
  create: (context, options) => {
    if (context.durability !== 'sync') {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `mem0 offers durability "sync" only (its SQLite files commit before add returns), not "${context.durability}"`,
      );
    }
    return new Mem0Strategy(context, options);
  },
});
