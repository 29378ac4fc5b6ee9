/** The hashed embedder (docs/design.md §4): the offline stand-in for an embedding model. */
import { checkNumber } from '../core/numbers.js';
import { fnv1a } from '../core/hash.js';
import { matchTerms } from '../core/text.js';
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

  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    for (const term of matchTerms(text)) {
      const hash = fnv1a(term, 0);
      const sign = fnv1a(term, 0x9e3779b9) & 1 ? 1 : -1;
      vector[hash % this.dimensions]! += sign;
    }
    let norm = 0;
    for (const value of vector) norm += value * value;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
    return vector;
  }
}
