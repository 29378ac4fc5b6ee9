/**
 * The BM25 the LongMemEval paper's retrieval code ranks with (xiaowu0162/LongMemEval
 * src/retrieval/run_retrieval.py, `flat-bm25`): rank_bm25 0.2.2's `BM25Okapi` built afresh over
 * the question's corpus, each document and the query tokenized by Python's `str.split(" ")`, the
 * scores ordered by `np.argsort(scores)[::-1]`. Written here from the published algorithm:
 *
 * - tokens: the text split at every single space; consecutive spaces give empty tokens, newlines
 *   and tabs are no separators, an empty text is one empty token; no case folding, punctuation
 *   kept, no stemming, no stop words;
 * - idf(t) = ln(N − n(t) + 0.5) − ln(n(t) + 0.5), n(t) the documents holding t; an idf below 0
 *   (t in more than half the documents) is replaced by ε × the mean idf of every corpus term,
 *   summed in the order the terms first appear;
 * - score(d) = Σ over the query's tokens, repeated ones as often as they occur, of
 *   idf(t) × tf × (k1 + 1) / (tf + k1 × (1 − b + b × |d| / avgdl)), |d| the document's token
 *   count, avgdl the corpus's tokens over N; a query token outside the corpus adds 0;
 * - k1 1.5, b 0.75, ε 0.25 (BM25Okapi's defaults, which the paper's code keeps);
 * - order: every document, highest score first; equal scores latest document first, which is
 *   an ascending stable sort reversed. numpy's default argsort is introsort: it keeps ties in
 *   order (insertion sort) on runs of at most 16 elements, but may reorder them in a larger
 *   partition, and on CPUs with AVX-512 numpy hands argsort to a vectorised sort; the stable rule
 *   is the one deterministic reading, and only tied scores (in practice, zero-score documents)
 *   can be placed differently from a given numpy build.
 */
import type { ExchangeFeatures, StoreIdentity } from '../stores/exchange-store.js';
import type { ExchangeRetriever, RankedDocument, RankedKey } from './exchange-memory.js';

/** BM25Okapi's parameters as rank_bm25 0.2.2 defaults them. */
export const OKAPI_PAPER = { k1: 1.5, b: 0.75, epsilon: 0.25 } as const;

/** Python's `text.split(" ")`: every single space separates, so "a  b" is ["a", "", "b"] and "" is [""]. */
export function paperTokens(text: string): string[] {
  return text.split(' ');
}

/** One document as BM25Okapi counts it: its token count and each token's frequency, in first-occurrence order. */
export interface OkapiDocument {
  length: number;
  frequencies: ReadonlyMap<string, number>;
}

/** Counts a tokenized document. */
export function okapiDocument(tokens: readonly string[]): OkapiDocument {
  const frequencies = new Map<string, number>();
  for (const token of tokens) frequencies.set(token, (frequencies.get(token) ?? 0) + 1);
  return { length: tokens.length, frequencies };
}

/** Each term's idf over the corpus, the negative ones floored at ε × the mean idf. */
export function okapiIdf(corpus: readonly OkapiDocument[]): Map<string, number> {
  const documentFrequency = new Map<string, number>();
  for (const document of corpus)
    for (const term of document.frequencies.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const idf = new Map<string, number>();
  const negative: string[] = [];
  let idfSum = 0;
  for (const [term, count] of documentFrequency) {
    const value = Math.log(corpus.length - count + 0.5) - Math.log(count + 0.5);
    idf.set(term, value);
    idfSum += value;
    if (value < 0) negative.push(term);
  }
  const floor = OKAPI_PAPER.epsilon * (idfSum / idf.size);
  for (const term of negative) idf.set(term, floor);
  return idf;
}

/** BM25Okapi's `get_scores(query)`: one score per document, in corpus order (an empty corpus: none). */
export function okapiScores(corpus: readonly OkapiDocument[], query: readonly string[]): number[] {
  const scores = corpus.map(() => 0);
  if (corpus.length === 0) return scores;
  const { k1, b } = OKAPI_PAPER;
  const idf = okapiIdf(corpus);
  const averageLength = corpus.reduce((sum, document) => sum + document.length, 0) / corpus.length;
  for (const token of query) {
    const weight = idf.get(token) ?? 0;
    corpus.forEach((document, index) => {
      const tf = document.frequencies.get(token) ?? 0;
      // tf 0 adds a (signed) zero, which leaves every score as it is.
      if (tf === 0) return;
      scores[index]! += weight * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * document.length) / averageLength)));
    });
  }
  return scores;
}

/** `np.argsort(scores)[::-1]` with ties kept in order by the ascending sort: highest first, equal scores latest index first. */
export function descendingOrder(scores: readonly number[]): number[] {
  return scores.map((_, index) => index).sort((a, b) => scores[b]! - scores[a]! || b - a);
}

/**
 * The paper's ranker as an exchange retriever (`bm25` with `ranker: okapi-paper`): it keeps no
 * index of its own; ExchangeMemory hands it every document of the store (`paperCorpus`), each
 * message as the dataset gives it, and each ranking builds BM25Okapi afresh over them and ranks
 * them all. A document's counts are kept while its text is unchanged.
 */
export class OkapiPaperRetriever implements ExchangeRetriever {
  readonly needs = { vectors: false, terms: false };
  readonly paperCorpus = true;
  private counted = new Map<number, { text: string; document: OkapiDocument }>();

  identity(): StoreIdentity {
    return { tokenizer: 'okapi-paper' };
  }

  open(): void {
    this.counted.clear();
  }

  async features(texts: readonly string[]): Promise<ExchangeFeatures[]> {
    return texts.map(() => ({}));
  }

  add(): void {
    // Documents arrive whole at each ranking.
  }

  settle(): void {
    // Nothing is keyed by a held exchange.
  }

  async rank(): Promise<RankedKey[]> {
    return []; // never asked: with `paperCorpus`, ExchangeMemory ranks documents
  }

  async rankDocuments(query: string, documents: readonly RankedDocument[]): Promise<RankedKey[]> {
    if (this.counted.size > 2 * documents.length) this.counted.clear();
    const corpus = documents.map(({ key, text }) => {
      // An unchanged document is the same string: compared by identity, not read.
      let entry = this.counted.get(key);
      if (entry?.text !== text) {
        entry = { text, document: okapiDocument(paperTokens(text)) };
        this.counted.set(key, entry);
      }
      return entry.document;
    });
    const scores = okapiScores(corpus, paperTokens(query));
    return descendingOrder(scores).map((index) => ({ key: documents[index]!.key, score: scores[index]! }));
  }

  flush(): void {
    // Nothing persisted.
  }

  close(): void {
    this.counted.clear();
  }
}
