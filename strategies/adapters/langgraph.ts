/**
 * `langgraph`: LangGraph's memory as its docs lay it out (npm `@langchain/langgraph` and
 * `@langchain/langgraph-checkpoint-sqlite`; optional, pinned), behind the membench contract.
 *
 * - Short-term memory, the thread: a one-node `StateGraph` over `MessagesAnnotation`, compiled
 *   with the SQLite checkpointer (`SqliteSaver`, better-sqlite3, WAL; `checkpoints.db` in the
 *   strategy's dir). Every saved message is one `invoke` on the thread, which LangGraph
 *   checkpoints before it returns. `load` reads the thread's state and cuts it to `maxTokens`
 *   with `trimMessages` (strategy `last`, starting on a user message), as LangGraph's docs show.
 * - Long-term memory, the store: each completed exchange (and each `remember`) is `put` into
 *   LangGraph's `InMemoryStore` with a semantic index over the run's embedder, and `load` puts
 *   the top-k `search` hits for the query before the thread. LangGraph.js ships no SQLite store
 *   (only in-memory, Postgres and Redis ones): this store lives in process memory, so a restart
 *   or a crash loses it, which the durability rows measure.
 * - Durability: the checkpointer commits each message before `invoke` returns (SQLite's default
 *   synchronous FULL in WAL): `sync` only. LangGraph calls no model here; the embedder is metered.
 */
import path from 'node:path';
import { SystemMessage, trimMessages, type BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import { MembenchError } from '../../harness/core/errors.js';
import { messageText } from '../../harness/core/tokens.js';
import { exchangeText } from '../shared/exchange-memory.js';
import { ExchangeInFlight, importOptional, stepIdsOf } from '../shared/peer-support.js';
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

export const LANGGRAPH_PACKAGES = ['@langchain/langgraph', '@langchain/langgraph-checkpoint-sqlite'] as const;
/** The one thread a scenario's conversation is, and the store namespace of its user. */
const THREAD = { configurable: { thread_id: 'membench' } };
const NAMESPACE = ['memories', 'membench-user'];

/** What the adapter calls of LangGraph (typed here: the packages are optional). */
interface StoreItem {
  key: string;
  value: Record<string, unknown>;
  score?: number;
}
interface Store {
  put(namespace: string[], key: string, value: Record<string, unknown>): Promise<void>;
  delete(namespace: string[], key: string): Promise<void>;
  search(namespace: string[], options: { query?: string; limit?: number }): Promise<StoreItem[]>;
}
interface CompiledGraph {
  invoke(input: { messages: BaseMessage[] }, config: typeof THREAD): Promise<unknown>;
  getState(config: typeof THREAD): Promise<{ values: { messages?: BaseMessage[] } }>;
}
interface Saver {
  db: { close(): void; open: boolean };
}
export interface LangGraphModules {
  StateGraph: new (
    annotation: unknown,
  ) => {
    addNode(
      name: string,
      node: () => Record<string, never>,
    ): {
      addEdge(
        from: string,
        to: string,
      ): { addEdge(from: string, to: string): { compile(options: { checkpointer: Saver }): CompiledGraph } };
    };
  };
  MessagesAnnotation: unknown;
  START: string;
  END: string;
  InMemoryStore: new (options: {
    index: {
      dims: number;
      embeddings: { embedDocuments(texts: string[]): Promise<number[][]>; embedQuery(text: string): Promise<number[]> };
      fields: string[];
    };
  }) => Store;
  SqliteSaver: { fromConnString(file: string): Saver };
}

/** Imports LangGraph and its SQLite checkpointer. */
export async function importLangGraph(): Promise<LangGraphModules> {
  const [graph, saver] = await importOptional('langgraph', LANGGRAPH_PACKAGES, [
    '@langchain/langgraph@1.7.3',
    '@langchain/langgraph-checkpoint-sqlite@1.0.4',
  ]);
  return {
    ...(graph as Omit<LangGraphModules, 'SqliteSaver'>),
    SqliteSaver: (saver as Pick<LangGraphModules, 'SqliteSaver'>).SqliteSaver,
  };
}

export const langgraphOptions = z
  .object({
    /** Store hits put before the thread. */
    k: z.coerce.number().int().min(1).default(4),
    /** What `trimMessages` keeps of the thread. */
    maxTokens: z.coerce.number().int().min(1).default(1000),
  })
  .strict();
export type LangGraphOptions = z.output<typeof langgraphOptions>;

export class LangGraphStrategy implements MemoryStrategy {
  readonly capabilities = { persistent: true, explicitMemory: true, backgroundWork: false, volatileMemories: true };
  private saver: Saver | undefined;
  private graph: CompiledGraph | undefined;
  private store: Store | undefined;
  /** The exchange not yet in the store. */
  private pending = new ExchangeInFlight();
  private shown: SystemMessage | undefined;

  constructor(
    private readonly context: StrategyContext,
    private readonly options: LangGraphOptions,
    private readonly importModule = importLangGraph,
  ) {}

  async open(): Promise<void> {
    const modules = await this.importModule();
    const { embedder } = this.context;
    this.saver = modules.SqliteSaver.fromConnString(path.join(this.context.dir, 'checkpoints.db'));
    this.graph = new modules.StateGraph(modules.MessagesAnnotation)
      .addNode('record', () => ({}))
      .addEdge(modules.START, 'record')
      .addEdge('record', modules.END)
      .compile({ checkpointer: this.saver });
    const embeddings = {
      embedDocuments: async (texts: string[]) => (await embedder.embed(texts)).map((vector) => Array.from(vector)),
      embedQuery: async (text: string) => Array.from((await embedder.embed([text]))[0] ?? []),
    };
    // A live embedder of unknown size (openai:NAME) learns it from its first response.
    const dims =
      embedder.dimensions > 0 ? embedder.dimensions : (await embeddings.embedQuery('dimension probe')).length;
    this.store = new modules.InMemoryStore({ index: { dims, embeddings, fields: ['text'] } });
    this.pending = new ExchangeInFlight();
  }

  async save(event: MemoryEvent): Promise<void> {
    if (this.pending.endsBy(event.message)) await this.commit();
    await this.thread().invoke({ messages: [event.message] }, THREAD);
    this.pending.add(event);
  }

  async load(input: LoadInput): Promise<LoadResult> {
    if (this.pending.complete()) await this.commit();
    const all = await this.threadMessages();
    const tokens = this.context.tokens;
    const recent = await trimMessages(all, {
      maxTokens: this.options.maxTokens,
      strategy: 'last',
      startOn: 'human',
      includeSystem: true,
      allowPartial: false,
      tokenCounter: (list) => tokens.countMessages(list),
    });
    const depth = Math.max(this.options.k, input.rankDepth ?? 0);
    const hits = await this.memories().search(NAMESPACE, { query: input.query, limit: depth });
    const texts = hits.slice(0, this.options.k).map((hit) => String(hit.value.text ?? ''));
    const messages: BaseMessage[] = [];
    if (texts.length > 0) {
      const text = `Memories (LangGraph store):\n${texts.map((memory) => `- ${memory.replace(/\n/gu, ' / ')}`).join('\n')}`;
      if (messageText(this.shown ?? new SystemMessage('')) !== text) this.shown = new SystemMessage(text);
      messages.push(this.shown!);
    }
    messages.push(...recent);
    const retrieved = hits.map((hit) => ({
      stepIds: Array.isArray(hit.value.stepIds) ? (hit.value.stepIds as string[]) : [],
      score: hit.score ?? 0,
    }));
    return { messages, retrieved };
  }

  async remember(item: MemoryItem): Promise<RememberAck> {
    const name = item.name ?? item.content.slice(0, 60);
    await this.memories().put(NAMESPACE, `memory:${name}`, {
      text: item.content,
      name,
      stepIds: item.stepId !== undefined ? [item.stepId] : [],
    });
    return { name };
  }

  async forget(nameOrContent: string): Promise<boolean> {
    const items = await this.memories().search(NAMESPACE, { limit: Number.MAX_SAFE_INTEGER });
    const matching = items.filter(
      (item) => item.value.name === nameOrContent || String(item.value.text ?? '').includes(nameOrContent),
    );
    for (const item of matching) await this.memories().delete(NAMESPACE, item.key);
    return matching.length > 0;
  }

  async flush(): Promise<void> {
    if (this.pending.hasReply()) await this.commit();
  }

  async snapshot(): Promise<string[]> {
    const items = await this.memories().search(NAMESPACE, { limit: Number.MAX_SAFE_INTEGER });
    return [...(await this.threadMessages()).map(messageText), ...items.map((item) => String(item.value.text ?? ''))];
  }

  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      if (this.saver?.db.open) this.saver.db.close();
      this.saver = undefined;
      this.graph = undefined;
      this.store = undefined; // LangGraph's in-memory store ends with the process's hold on it
    }
  }

  private thread(): CompiledGraph {
    if (!this.graph) throw new Error('langgraph: the strategy is not open');
    return this.graph;
  }

  private memories(): Store {
    if (!this.store) throw new Error('langgraph: the strategy is not open');
    return this.store;
  }

  private async threadMessages(): Promise<BaseMessage[]> {
    return (await this.thread().getState(THREAD)).values.messages ?? [];
  }

  /** Puts the completed exchange into the store, keyed by its first turn. */
  private async commit(): Promise<void> {
    const events = this.pending.take();
    if (events.length === 0) return;
    await this.memories().put(NAMESPACE, `exchange:${events[0]!.turn}`, {
      text: exchangeText(events.map((event) => event.message)),
      stepIds: stepIdsOf(events),
    });
  }
}

export const langgraph = defineStrategy({
  name: 'langgraph',
  description:
    "LangGraph: the thread in its SQLite checkpointer, trimmed to maxTokens, + its InMemoryStore's semantic search (lost on restart)",
  options: langgraphOptions,
  defaultDurability: 'sync',
  durabilityModes: ['sync'],
  kind: 'retrieval',
  ranks: 'embeddings',
  keepsVerbatim: true,
  storage: 'sqlite',
  labelKnobs: ['k'],
  create: (context, options) => {
    if (context.durability !== 'sync') {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `langgraph offers durability "sync" only (its checkpointer commits each message before invoke returns), not "${context.durability}"`,
      );
    }
    return new LangGraphStrategy(context, options);
  },
});
