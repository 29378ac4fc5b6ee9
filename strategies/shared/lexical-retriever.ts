/**
 * BM25 over segmented terms as a retriever of exchanges (`bm25`, and half of `hybrid`). Each
 * exchange's text is segmented once per process (segmenters.ts) and its terms stored with it; in modes
 * `sync` and `async` they are indexed in the store file's FTS5 table, in the exchange's own
 * transaction, so the index is as durable as the exchange and every writer of the file searches
 * the same index. Modes `exit` (nothing on disk until close) and `none` rank from an in-memory
 * FTS5 table holding every exchange this writer knows, so all candidates are scored with one
 * set of term statistics.
 */
import { boundedMemo, MEMO_CHARS } from '../../harness/core/memo.js';
import {
  byScore,
  recentKeys,
  withRecency,
  type ExchangeRetriever,
  type RankRequest,
  type RankedDocument,
  type RankedKey,
} from './exchange-memory.js';
import type { ExchangeFeatures, ExchangeStore, StoreIdentity } from '../stores/exchange-store.js';
import { LexicalIndex } from '../stores/lexical-index.js';
import { joinedSegmenterFor, segmenterFor, type LexicalTokenizer, type Segmenter } from './segmenters.js';

/** The knobs of lexical retrieval. */
export interface LexicalRetrieverOptions {
  tokenizer: LexicalTokenizer;
  recencyWeight: number;
  halfLife: number;
}

/**
 * Characters this process has handed to a segmenter, and each text's terms (joined by spaces) by
 * tokenizer, for the whole process: the cells a process runs over the same conversation (a
 * question's units, rankers and other settings) segment each message once, not once per cell.
 * Segmenting is a pure function of the text, so sharing changes no term; it is a message's
 * dearest cost in a ranking-only cell (jieba takes about 1 ms of CPU per 1,000 Han characters).
 */
let charsSegmented = 0;
const processTerms = new Map<LexicalTokenizer, (text: string) => string>();

function termsMemo(tokenizer: LexicalTokenizer): (text: string) => string {
  let memo = processTerms.get(tokenizer);
  if (!memo) {
    const segment = joinedSegmenterFor(tokenizer);
    memo = boundedMemo(MEMO_CHARS.messages, (text) => {
      charsSegmented += text.length;
      return segment(text);
    });
    processTerms.set(tokenizer, memo);
  }
  return memo;
}

/** Ranked documents' own in-memory index, and the text each one was indexed with. */
interface DocumentIndex {
  index: LexicalIndex;
  texts: Map<number, string>;
}

/** Ranks exchanges by FTS5's bm25() over the terms of the query. */
export class LexicalRetriever implements ExchangeRetriever {
  readonly needs = { vectors: false, terms: true };
  private readonly segment: Segmenter;
  /** The index searched: the store file's (sync, async) or an in-memory one (exit, none). */
  private index: LexicalIndex | undefined;
  /** Keys in the in-memory index (undefined when the file's index is searched). */
  private inMemory: Set<number> | undefined;
  /** Ranked documents (`unit: 'session'`): their own in-memory index, and the text each one was indexed with. */
  private documents: DocumentIndex | undefined;
  /**
   * The index terms of a text, joined by spaces: an exchange is segmented once, when it is saved,
   * and a session's document reuses its exchanges' terms (segmenting a text by its lines gives the
   * whole text's terms: no segmenter joins across a line break).
   */
  private readonly termsOf: (text: string) => string;
  /** `charsSegmented` when this retriever was made. */
  private readonly segmentedBefore = charsSegmented;
  /** Exchanges of the in-memory index not inserted yet (key, terms), in the order they came. */
  private unindexed: [number, string][] = [];

  constructor(private readonly options: LexicalRetrieverOptions) {
    const segment = segmenterFor(options.tokenizer);
    this.segment = (text) => {
      charsSegmented += text.length;
      return segment(text);
    };
    this.termsOf = termsMemo(options.tokenizer);
  }

  /** Characters handed to a segmenter in this process since this retriever was made: tests use it to prove a grown document costs only its new parts, and a message seen before costs nothing. */
  get segmentedChars(): number {
    return charsSegmented - this.segmentedBefore;
  }

  identity(): StoreIdentity {
    return { tokenizer: this.options.tokenizer };
  }

  open(store: ExchangeStore): void {
    this.close();
    if (store.lexical && !store.deferred) {
      this.index = store.lexical;
      return;
    }
    this.index = LexicalIndex.inMemory();
    this.inMemory = new Set();
    for (const [id, terms] of store.storedTerms()) this.add(id, { terms });
  }

  /** Terms of each text, joined by spaces (the query needs no preparing: segmenting it is cheap). */
  async features(texts: readonly string[]): Promise<ExchangeFeatures[]> {
    return texts.map((text) => ({ terms: this.termsOf(text) }));
  }

  add(key: number, features: ExchangeFeatures): void {
    if (!this.inMemory || this.inMemory.has(key)) return; // the file's index got it in the exchange's transaction
    this.unindexed.push([key, features.terms ?? '']);
    this.inMemory.add(key);
  }

  /**
   * The in-memory index gets its exchanges when it is first searched: a store whose loads rank
   * documents instead (`unit: 'session'` or `'message'`) never fills it.
   */
  private indexAdded(): void {
    const index = this.index!;
    const unindexed = this.unindexed;
    this.unindexed = [];
    if (unindexed.length === 0) return;
    try {
      index.batch(() => unindexed.forEach(([key, terms]) => index.add(key, terms)));
    } catch (error) {
      // The transaction rolled back: every one of them is unindexed still.
      this.unindexed = [...unindexed, ...this.unindexed];
      throw error;
    }
  }

  settle(heldKey: number, id: number | undefined): void {
    if (!this.inMemory) return;
    this.indexAdded();
    this.inMemory.delete(heldKey);
    if (id === undefined || this.inMemory.has(id)) return this.index!.remove(heldKey);
    this.index!.rekey(heldKey, id);
    this.inMemory.add(id);
  }

  async rank(request: RankRequest): Promise<RankedKey[]> {
    const index = this.index;
    if (!index) return [];
    if (this.inMemory) this.indexAdded();
    const { recencyWeight: weight, halfLife } = this.options;
    const terms = this.segment(request.query);
    if (weight === 0) return index.search(terms, request.n, request.below);
    // Recency may lift a weaker match: score the best matches and every match recent enough to matter.
    const hits = new Map<number, number>();
    for (const hit of index.search(terms, Math.max(4 * request.n, 64), request.below)) hits.set(hit.key, hit.score);
    const recent = recentKeys(request, halfLife);
    if (recent.length > 0)
      for (const hit of index.search(terms, recent.length, request.below, recent.at(-1)!)) hits.set(hit.key, hit.score);
    const best = Math.max(0, ...hits.values());
    const scored = [...hits].map(([key, score]) => ({
      key,
      score: withRecency(best > 0 ? score / best : 0, request.turn - request.turnOf(key), weight, halfLife),
    }));
    return scored.sort(byScore).slice(0, request.n);
  }

  async rankDocuments(query: string, documents: readonly RankedDocument[], n: number): Promise<RankedKey[]> {
    const own = (this.documents ??= { index: LexicalIndex.inMemory(), texts: new Map() });
    try {
      own.index.batch(() => this.syncDocuments(own, documents));
    } catch (error) {
      // The transaction rolled back, and `texts` no longer says what the index holds: start over next time.
      own.index.close();
      this.documents = undefined;
      throw error;
    }
    return own.index.search(this.segment(query), n);
  }

  /** Makes the documents' index hold exactly `documents` (inside a transaction). */
  private syncDocuments(own: DocumentIndex, documents: readonly RankedDocument[]): void {
    const wanted = new Set(documents.map(({ key }) => key));
    for (const key of own.texts.keys()) {
      if (wanted.has(key)) continue;
      own.index.remove(key);
      own.texts.delete(key);
    }
    for (const { key, text, parts } of documents) {
      // An unchanged document is the same string: compared by identity, not read.
      if (own.texts.get(key) === text) continue;
      if (own.texts.has(key)) own.index.remove(key);
      own.index.add(key, parts ? parts.map(this.termsOf).join(' ') : this.termsOf(text));
      own.texts.set(key, text);
    }
  }

  flush(): void {
    // Nothing cached: the file's index is written with each exchange, the in-memory one lives until close.
  }

  close(): void {
    if (this.inMemory) this.index?.close();
    this.index = undefined;
    this.inMemory = undefined;
    this.unindexed = [];
    this.documents?.index.close();
    this.documents = undefined;
  }
}
