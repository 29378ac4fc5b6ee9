/** The hashed embedder (docs/design.md §4): the offline stand-in for an embedding model. */
import { checkNumber } from '../core/numbers.js';
import { fnv1a } from '../core/hash.js';
import { matchTerms, normalizeText } from '../core/text.js';
import type { Embedder } from './types.js';

/** Dimensions a hashed embedding may have (`hashed:DIM`, `new HashedEmbedder(DIM)`): 0 holds nothing, and past 65536 a vector costs more than the text it encodes. */
export const HASHED_DIMENSIONS = { whole: true, min: 1, max: 65_536 } as const;

/** Hashes words and CJK bigrams into a fixed-size, L2-normalised vector (the feature-hashing trick). */
export class HashedEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;

  constructor(dimensions = 256) {
    this.dimensions = checkNumber('HashedEmbedder dimensions', dimensions, HASHED_DIMENSIONS);
    this.id = `hashed-${dimensions}`;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => this.embedOne(text));
  }

  /**
   * A text whose terms leave every slot at 0 (it has none: "", "!!!", "it is"; or they cancel out)
   * hashes its normalised self as its one term: an all-zero vector has no direction, and a
   * client's cosine of it is 0/0 (NaN). Such a text is then unlike the others, and like itself.
   */
  embedOne(text: string): Float32Array {
    return this.hashed(matchTerms(text)) ?? this.hashed([normalizeText(text)])!;
  }

  /** The terms hashed into a unit vector; undefined when every slot is 0. */
  private hashed(terms: readonly string[]): Float32Array | undefined {
    const vector = new Float32Array(this.dimensions);
    for (const term of terms) {
      const hash = fnv1a(term, 0);
      const sign = fnv1a(term, 0x9e3779b9) & 1 ? 1 : -1;
      vector[hash % this.dimensions]! += sign;
    }
    let norm = 0;
    for (const value of vector) norm += value * value;
    if (norm === 0) return undefined;
    norm = Math.sqrt(norm);
    for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
    return vector;
  }
}
