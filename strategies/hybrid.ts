/**
 * `hybrid`: bm25 and vector retrieval fused by reciprocal rank fusion (Cormack et al., 2009): an
 * exchange's score is the sum over retrievers of weight / (fusionK + rank), rank counted from 1
 * in that retriever's own list, so neither retriever's raw scores need to be comparable. Each
 * retriever ranks its best candidates (at least 64, or 4 × k); an exchange found by one only
 * scores from that one. One store (`hybrid.sqlite`) keeps each exchange once, with its vector and
 * its terms; the retrievers are the same classes `vector` and `bm25` use.
 */
import { z } from 'zod';
import {
  byScore,
  ExchangeMemory,
  type ExchangeRetriever,
  type RankRequest,
  type RankedDocument,
  type RankedKey,
} from './shared/exchange-memory.js';
import type { ExchangeFeatures, ExchangeStore, StoreIdentity } from './stores/exchange-store.js';
import { LexicalRetriever } from './shared/lexical-retriever.js';
import { jiebaCutsOf, preloadJieba } from './shared/segmenters.js';
import { loadHnswlib } from './stores/vector-index.js';
import { VectorRetriever } from './shared/vector-retriever.js';
import { embeddingKnobs, retrievalKnobs, tokenizerKnob } from './shared/knobs.js';
import { defineStrategy } from './types.js';

/** The knobs: vector's and bm25's, the fusion constant and each retriever's weight. */
export const hybridOptions = z
  .object({
    ...retrievalKnobs,
    /** The RRF constant: larger values flatten the difference between ranks (60 in the RRF paper). */
    fusionK: z.coerce.number().min(0).default(60),
    /** Weight of the bm25 ranking in the fused score. */
    bm25Weight: z.coerce.number().min(0).default(1),
    /** Weight of the vector ranking in the fused score. */
    vectorWeight: z.coerce.number().min(0).default(1),
    tokenizer: tokenizerKnob,
    ...embeddingKnobs,
  })
  .strict()
  .refine((options) => options.bm25Weight + options.vectorWeight > 0, {
    message: 'bm25Weight and vectorWeight cannot both be 0',
  });
export type HybridOptions = z.output<typeof hybridOptions>;

const MIN_POOL = 64;

/** Several retrievers over one store, their rankings fused by weighted reciprocal rank. */
export class FusedRetriever implements ExchangeRetriever {
  readonly needs: ExchangeRetriever['needs'];

  constructor(
    private readonly parts: readonly { retriever: ExchangeRetriever; weight: number }[],
    private readonly fusionK: number,
  ) {
    this.needs = {
      vectors: parts.some(({ retriever }) => retriever.needs.vectors),
      terms: parts.some(({ retriever }) => retriever.needs.terms),
    };
  }

  identity(): StoreIdentity {
    return Object.assign({}, ...this.parts.map(({ retriever }) => retriever.identity())) as StoreIdentity;
  }

  open(store: ExchangeStore, keys: readonly number[], dimensions: number | undefined): void {
    for (const { retriever } of this.parts) retriever.open(store, keys, dimensions);
  }

  afterOpen(keys: readonly number[]): void {
    for (const { retriever } of this.parts) retriever.afterOpen?.(keys);
  }

  async features(texts: readonly string[], query?: string): Promise<ExchangeFeatures[]> {
    const each = await Promise.all(this.parts.map(({ retriever }) => retriever.features(texts, query)));
    return texts.map((_, i) => Object.assign({}, ...each.map((features) => features[i])) as ExchangeFeatures);
  }

  add(key: number, features: ExchangeFeatures): void {
    for (const { retriever } of this.parts) retriever.add(key, features);
  }

  settle(heldKey: number, id: number | undefined, features: ExchangeFeatures): void {
    for (const { retriever } of this.parts) retriever.settle(heldKey, id, features);
  }

  async rank(request: RankRequest): Promise<RankedKey[]> {
    const pool = { ...request, n: Math.max(4 * request.n, MIN_POOL) };
    return this.fuse((retriever) => retriever.rank(pool), request.n);
  }

  async rankDocuments(query: string, documents: readonly RankedDocument[], n: number): Promise<RankedKey[]> {
    const pool = Math.max(4 * n, MIN_POOL);
    return this.fuse((retriever) => retriever.rankDocuments(query, documents, pool), n);
  }

  /** Each weighted retriever's ranking, fused by reciprocal rank; the best `n`. */
  private async fuse(rank: (retriever: ExchangeRetriever) => Promise<RankedKey[]>, n: number): Promise<RankedKey[]> {
    const fused = new Map<number, number>();
    const active = this.parts.filter(({ weight }) => weight > 0);
    const rankings = await Promise.all(active.map(({ retriever }) => rank(retriever)));
    rankings.forEach((ranking, part) => {
      ranking.forEach(({ key }, position) =>
        fused.set(key, (fused.get(key) ?? 0) + active[part]!.weight / (this.fusionK + position + 1)),
      );
    });
    return [...fused]
      .map(([key, score]) => ({ key, score }))
      .sort(byScore)
      .slice(0, n);
  }

  afterStore(): void {
    for (const { retriever } of this.parts) retriever.afterStore?.();
  }

  flush(): void {
    for (const { retriever } of this.parts) retriever.flush();
  }

  close(): void {
    for (const { retriever } of this.parts) retriever.close();
  }
}

/** The registry entry for `hybrid`. */
export const hybrid = defineStrategy({
  name: 'hybrid',
  kind: 'retrieval',
  ranks: 'fused',
  description:
    'bm25 (FTS5) and vector (HNSW) rankings of every exchange fused by reciprocal rank fusion; top-k retrieved',
  options: hybridOptions,
  defaultDurability: 'sync',
  keepsVerbatim: true,
  crashPoints: ['mid_memory_write'],
  preload: (hint) => {
    loadHnswlib();
    preloadJieba(hint);
  },
  preloadShared: jiebaCutsOf,
  create: (context, options) =>
    new ExchangeMemory(
      context,
      options,
      new FusedRetriever(
        [
          { retriever: new LexicalRetriever(options), weight: options.bm25Weight },
          { retriever: new VectorRetriever(context, options), weight: options.vectorWeight },
        ],
        options.fusionK,
      ),
      'hybrid.sqlite',
    ),
});
