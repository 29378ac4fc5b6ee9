/**
 * `vector`: every exchange (a user message, the reply, and the tool calls and results of that
 * turn) is embedded once, when it is complete, and the top-k most relevant earlier exchanges are
 * retrieved for each model call (LangChain's VectorStoreRetrieverMemory).
 *
 * The exchange lifecycle (pending messages, several writers on one dir, the durability modes)
 * is ExchangeMemory's (shared/exchange-memory.ts) over `vector.sqlite`; the HNSW index, its file
 * `vector.hnsw` and the embedder's dimension are VectorRetriever's (shared/vector-retriever.ts).
 */
import { z } from 'zod';
import { ExchangeMemory } from './shared/exchange-memory.js';
import { loadHnswlib } from './stores/vector-index.js';
import { VectorRetriever } from './shared/vector-retriever.js';
import { defineStrategy } from './types.js';

export { exchangeText, renderExchange, withoutOrphanTools } from './shared/exchange-memory.js';

/** The knobs every exchange-retrieving strategy shares (`vector`, `bm25`, `hybrid`). */
export const retrievalKnobs = {
  /** Earlier exchanges retrieved per model call. */
  k: z.coerce.number().int().min(1).default(4),
  /** 0 ranks by relevance alone; w > 0 ranks by (1 - w) * relevance + w * 2^(-age / halfLife). */
  recencyWeight: z.coerce.number().min(0).max(1).default(0),
  /** Turns after which the recency bonus has halved. */
  halfLife: z.coerce.number().positive().default(20),
  /** Most recent complete exchanges always included verbatim (not counted in k). */
  recentExchanges: z.coerce.number().int().min(0).default(1),
};

/** The knobs of embedding retrieval (`vector`, and `hybrid`'s vector half). */
export const embeddingKnobs = {
  /** Below this many stored exchanges search is exact brute force (faster than HNSW when small). */
  exactBelow: z.coerce.number().int().min(0).default(256),
  /** Retrieved exchanges must be more similar than this to the query (cosine). */
  minSimilarity: z.coerce.number().min(-1).max(1).default(0),
  /** The index file is rewritten once this many (and at least a quarter of the index) are unsaved. */
  persistEvery: z.coerce.number().int().min(1).default(256),
};

/** The knobs users tune (and `tune` sweeps), with LangChain-like defaults. */
export const vectorOptions = z
  .object({
    k: retrievalKnobs.k,
    recencyWeight: retrievalKnobs.recencyWeight,
    halfLife: retrievalKnobs.halfLife,
    exactBelow: embeddingKnobs.exactBelow,
    recentExchanges: retrievalKnobs.recentExchanges,
    minSimilarity: embeddingKnobs.minSimilarity,
    persistEvery: embeddingKnobs.persistEvery,
  })
  .strict();
/** Parsed options, defaults filled in. */
export type VectorOptions = z.output<typeof vectorOptions>;

/** The registry entry for `vector`. */
export const vector = defineStrategy({
  name: 'vector',
  description: 'every exchange embedded once into an HNSW index; top-k relevant exchanges retrieved (VectorStoreRetrieverMemory)',
  options: vectorOptions,
  defaultDurability: 'sync',
  crashPoints: ['mid_memory_write'],
  preload: () => void loadHnswlib(),
  create: (context, options) => new ExchangeMemory(context, options, new VectorRetriever(context, options), 'vector.sqlite'),
});
