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
import { embeddingKnobs, retrievalKnobs } from './shared/knobs.js';
import { defineStrategy } from './types.js';

export { exchangeText, renderExchange, withoutOrphanTools } from './shared/exchange-memory.js';

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
    index: retrievalKnobs.index,
    unit: retrievalKnobs.unit,
  })
  .strict();
/** Parsed options, defaults filled in. */
export type VectorOptions = z.output<typeof vectorOptions>;

/** The registry entry for `vector`. */
export const vector = defineStrategy({
  name: 'vector',
  kind: 'retrieval',
  ranks: 'embeddings',
  description:
    'every exchange embedded once into an HNSW index; top-k relevant exchanges retrieved (VectorStoreRetrieverMemory)',
  options: vectorOptions,
  defaultDurability: 'sync',
  keepsVerbatim: true,
  crashPoints: ['mid_memory_write'],
  preload: () => void loadHnswlib(),
  create: (context, options) =>
    new ExchangeMemory(context, options, new VectorRetriever(context, options), 'vector.sqlite'),
});
