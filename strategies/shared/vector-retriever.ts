/**
 * Embeddings as a retriever of exchanges (`vector`, and half of `hybrid`): each exchange is
 * embedded once; the vectors live in the store's SQLite rows (the durable source of truth) and
 * in an hnswlib-node HNSW index that is a cache, written on flush/close and whenever
 * `persistEvery` exchanges and a quarter of the index are unsaved, so per-turn work stays O(1)
 * amortised. Reopening reads the index file and adds the stored vectors it lacks, straight from
 * SQLite: nothing is ever embedded twice. When two processes write the index file, the last
 * rename wins and the next opener adds what that file lacks from SQLite.
 *
 * The embedder's dimension need not be known up front: an OpenAI-compatible model's is learned
 * from its first response (or given as `openai:NAME:DIM`), recorded in the store, and checked on
 * every later response and reopen; a mismatch is an error naming both dimensions.
 */
import path from 'node:path';
import { MembenchError } from '../../harness/core/errors.js';
import type { Embedder } from '../../harness/models/types.js';
import {
  HELD_BASE,
  byScore,
  recentKeys,
  withRecency,
  type ExchangeRetriever,
  type RankRequest,
  type RankedDocument,
  type RankedKey,
} from './exchange-memory.js';
import type { ExchangeFeatures, ExchangeStore, StoreIdentity } from '../stores/exchange-store.js';
import { dot, normalized, VectorIndex } from '../stores/vector-index.js';
import type { DurabilityMode } from '../types.js';

/** The knobs of embedding retrieval. */
export interface VectorRetrieverOptions {
  recencyWeight: number;
  halfLife: number;
  exactBelow: number;
  minSimilarity: number;
  persistEvery: number;
  /** Sizes the HNSW search breadth. */
  k: number;
}

/** Where it runs: the strategy's dir, mode, embedder and seed. */
export interface VectorRetrieverContext {
  dir: string;
  durability: DurabilityMode;
  embedder: Embedder;
  seed: number;
}

const INDEX_FILE = 'vector.hnsw';

/** The length of the first stored vector (a file written before dimensions were recorded); 0 when there is none. */
function storedDimensions(store: ExchangeStore, keys: readonly number[]): number {
  for (const [, vector] of store.vectorsOf(keys.slice(0, 1))) return vector.length;
  return 0;
}

/** An HNSW index (plus, in mode `exit`, one for held exchanges) over embedded exchanges. */
export class VectorRetriever implements ExchangeRetriever {
  readonly needs = { vectors: true, terms: false };
  /** Stored exchanges; labels are SQLite ids (local ids in mode `none`). Created once the dimension is known. */
  private index: VectorIndex | undefined;
  /** Mode `exit`: exchanges not written yet, labelled key - HELD_BASE until flush() gives them ids. */
  private held: VectorIndex | undefined;
  private store: ExchangeStore | undefined;
  /** The vectors' dimension: the embedder's, the store's, or (0) not known before the first response. */
  private dimensions = 0;
  private queryCache: { text: string; vector: Float32Array } | undefined;
  /** Ranked documents (`unit: 'session'`): each one's unit vector and the text it embeds. */
  private documentVectors = new Map<number, { text: string; vector: Float32Array }>();

  constructor(
    private readonly context: VectorRetrieverContext,
    private readonly options: VectorRetrieverOptions,
  ) {}

  private get persistent(): boolean {
    return this.context.durability !== 'none';
  }

  private get indexFile(): string | undefined {
    return this.persistent ? path.join(this.context.dir, INDEX_FILE) : undefined;
  }

  identity(): StoreIdentity {
    const { embedder } = this.context;
    return { embedder: { id: embedder.id, dimensions: embedder.dimensions } };
  }

  open(store: ExchangeStore, keys: readonly number[], dimensions: number | undefined): void {
    this.store = store;
    this.queryCache = undefined;
    this.dimensions = this.context.embedder.dimensions || dimensions || storedDimensions(store, keys);
    this.index = undefined;
    this.held = undefined;
    if (this.dimensions === 0) return; // learned from the first response
    if (dimensions === undefined) store.recordDimensions(this.context.embedder.id, this.dimensions);
    this.createIndexes(keys, true);
  }

  afterOpen(keys: readonly number[]): void {
    // The file holds an exchange SQLite lacks (a stale file from another store): rebuild from SQLite alone.
    if (this.index && this.index.size !== keys.length) this.createIndexes(keys, false);
  }

  async features(texts: readonly string[], query?: string): Promise<ExchangeFeatures[]> {
    const vectors = await this.embed(query === undefined ? texts : [...texts, query]);
    if (query !== undefined) this.queryCache = { text: query, vector: vectors[texts.length]! };
    return texts.map((_, i) => ({ vector: vectors[i]! }));
  }

  add(key: number, features: ExchangeFeatures): void {
    const vector = features.vector;
    if (!vector) throw new Error(`vector: exchange ${key} has no stored vector`);
    if (this.dimensions === 0) this.learnDimensions(vector.length);
    if (key >= HELD_BASE) this.held!.add(vector, key - HELD_BASE);
    else if (!this.index!.has(key)) this.index!.add(vector, key); // on open, the index file may hold rows newer than the listing
  }

  settle(): void {
    // The held index is dropped at flush; the settled exchange is added again under its id.
  }

  async rank(request: RankRequest): Promise<RankedKey[]> {
    const index = this.index;
    if (!index) return [];
    const { recencyWeight: weight, halfLife, minSimilarity } = this.options;
    const query = await this.queryVector(request.query);
    const similarity = new Map<number, number>();
    const pool = (vectors: VectorIndex): number =>
      weight === 0 ? request.n : vectors.exact ? vectors.size : Math.max(4 * request.n, 64);
    for (const hit of index.search(query, pool(index), request.below)) similarity.set(hit.label, hit.similarity);
    const held = this.held;
    if (held && request.below > HELD_BASE)
      for (const hit of held.search(query, pool(held), request.below - HELD_BASE))
        similarity.set(hit.label + HELD_BASE, hit.similarity);
    if (weight > 0 && !(index.exact && (held?.exact ?? true))) {
      // HNSW only returns the most similar: score the recent exchanges too, whose recency bonus may outrank them.
      for (const key of recentKeys(request, halfLife)) {
        if (!similarity.has(key))
          similarity.set(
            key,
            key >= HELD_BASE ? held!.similarity(query, key - HELD_BASE) : index.similarity(query, key),
          );
      }
    }
    const scored: RankedKey[] = [];
    for (const [key, sim] of similarity) {
      if (sim > minSimilarity)
        scored.push({ key, score: withRecency(sim, request.turn - request.turnOf(key), weight, halfLife) });
    }
    return scored.sort(byScore).slice(0, request.n);
  }

  async rankDocuments(query: string, documents: readonly RankedDocument[], n: number): Promise<RankedKey[]> {
    // An unchanged document is the same string: compared by identity, not read.
    const stale = documents.filter(({ key, text }) => this.documentVectors.get(key)?.text !== text);
    if (stale.length > 0) {
      const vectors = await this.embed(stale.map(({ text }) => text));
      stale.forEach(({ key, text }, i) => this.documentVectors.set(key, { text, vector: normalized(vectors[i]!) }));
    }
    const unitQuery = normalized(await this.queryVector(query));
    const scored = documents.map(({ key }) => ({ key, score: dot(unitQuery, this.documentVectors.get(key)!.vector) }));
    return scored
      .filter(({ score }) => score > this.options.minSimilarity)
      .sort(byScore)
      .slice(0, n);
  }

  /** Rewrites the index file once the unsaved part is big enough: amortised O(1) per exchange. */
  afterStore(): void {
    const index = this.index;
    if (!index || (this.context.durability !== 'sync' && this.context.durability !== 'async')) return;
    const saved = index.size - index.unsaved;
    if (index.unsaved < Math.max(this.options.persistEvery, Math.ceil(saved / 4))) return;
    index.save(this.indexFile!); // it holds stored exchanges only: SQLite has every vector in it
  }

  flush(): void {
    if (this.held && this.held.size > 0) this.held = this.newIndex(); // every held exchange now has its id
    if (this.persistent && this.index && this.index.unsaved > 0) this.index.save(this.indexFile!);
  }

  close(): void {
    this.index = undefined;
    this.held = undefined;
    this.documentVectors.clear();
  }

  private newIndex(): VectorIndex {
    return new VectorIndex({
      dimensions: this.dimensions,
      exactBelow: this.options.exactBelow,
      efSearch: Math.max(this.options.k * 4, 64),
      seed: this.context.seed,
    });
  }

  /** The index restored from the file (when `fromFile`) plus the stored vectors it lacks, and an empty held index in mode `exit`. */
  private createIndexes(keys: readonly number[], fromFile: boolean): void {
    this.index = this.newIndex();
    this.held = this.store?.deferred ? this.newIndex() : undefined;
    this.index.restore(fromFile ? this.indexFile : undefined, keys, (ids) => this.store!.vectorsOf(ids));
  }

  /** The first vectors of a model whose dimension was unknown: recorded in the store (which refuses another one) and the indexes made. */
  private learnDimensions(dimensions: number): void {
    this.store?.recordDimensions(this.context.embedder.id, dimensions);
    this.dimensions = dimensions;
    this.createIndexes([], false);
  }

  /** Embeds, checking every vector against the known dimension (learning it from the first response when unknown). */
  private async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const vectors = await this.context.embedder.embed(texts);
    for (const vector of vectors) {
      if (this.dimensions === 0) this.learnDimensions(vector.length);
      if (vector.length !== this.dimensions) {
        throw new MembenchError(
          'MODEL_ERROR',
          `vector: the embedder ${this.context.embedder.id} returned a ${vector.length}-dimension vector; this store's vectors have ${this.dimensions} dimensions`,
        );
      }
    }
    return vectors;
  }

  private async queryVector(text: string): Promise<Float32Array> {
    if (this.queryCache?.text !== text) this.queryCache = { text, vector: (await this.embed([text]))[0]! };
    return this.queryCache.vector;
  }
}
