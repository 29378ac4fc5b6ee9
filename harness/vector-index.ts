/**
 * A cosine nearest-neighbour index over labels 0..n-1: hnswlib-node's HNSW graph, plus exact
 * brute-force search while the store is small (faster than HNSW below a few hundred vectors,
 * and exact). The index file is a cache: the caller keeps the vectors durably elsewhere and
 * hands back those newer than the file on restore, so nothing is ever re-embedded.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import hnswlib from 'hnswlib-node';

const { HierarchicalNSW } = hnswlib;
type Hnsw = InstanceType<typeof HierarchicalNSW>;

/** How the index is built and searched. */
export interface VectorIndexOptions {
  dimensions: number;
  /** Below this many vectors, search is exact brute force over vectors kept in memory. */
  exactBelow: number;
  /** HNSW search breadth (`ef`); raised to the number of neighbours asked for when that is larger. */
  efSearch: number;
  /** Seeds HNSW level assignment, so runs are repeatable. */
  seed: number;
}

/** A search hit: the label and its cosine similarity to the query (1 = same direction). */
export interface VectorHit {
  label: number;
  similarity: number;
}

const INITIAL_CAPACITY = 1024;
const HNSW_M = 16;
const HNSW_EF_CONSTRUCTION = 200;

/** Scales a copy to unit length (a zero vector stays zero), so a dot product is the cosine. */
export function normalized(vector: Float32Array | readonly number[]): Float32Array {
  const out = Float32Array.from(vector);
  let norm = 0;
  for (const value of out) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Best first; on equal similarity the newer (higher) label first. */
const byHit = (a: VectorHit, b: VectorHit): number => b.similarity - a.similarity || b.label - a.label;

/** An HNSW index with an exact fast path for small stores; labels are added in order 0, 1, 2... */
export class VectorIndex {
  private hnsw: Hnsw;
  /** Unit vectors by label, kept only while the store is below `exactBelow`. */
  private exactVectors: Float32Array[] | undefined;
  private count = 0;
  private savedCount = 0;

  constructor(private readonly options: VectorIndexOptions) {
    this.hnsw = this.emptyHnsw(INITIAL_CAPACITY);
    this.exactVectors = options.exactBelow > 0 ? [] : undefined;
  }

  /** Number of vectors in the index. */
  get size(): number {
    return this.count;
  }

  /** Vectors added since the index file was last written (or read). */
  get unsaved(): number {
    return this.count - this.savedCount;
  }

  /** True while searches are exact brute force. */
  get exact(): boolean {
    return this.exactVectors !== undefined;
  }

  /**
   * Reads the index file (when present, readable and not ahead of the `total` stored vectors),
   * then adds the stored vectors it lacks. `vectorsFrom(label)` yields stored vectors from that
   * label on, in order. Returns how many vectors were added to the HNSW graph.
   */
  restore(file: string | undefined, total: number, vectorsFrom: (label: number) => Iterable<Float32Array>): number {
    if (file) removeStaleTemps(file);
    let persisted = 0;
    if (file && total > 0) persisted = this.readFile(file, total);
    this.count = persisted;
    this.savedCount = persisted;
    this.exactVectors = total < this.options.exactBelow ? [] : undefined;
    const from = this.exactVectors ? 0 : persisted;
    let label = from;
    let added = 0;
    for (const vector of vectorsFrom(from)) {
      if (label >= total) break;
      if (label >= persisted) {
        this.addToHnsw(vector, label);
        added++;
      }
      this.exactVectors?.push(normalized(vector));
      label++;
    }
    this.count = Math.max(persisted, label);
    if (this.count !== total) throw new Error(`vector index: expected ${total} stored vectors, got ${this.count}`);
    return added;
  }

  /** Adds the next vector; its label is the current size. */
  add(vector: Float32Array): number {
    if (vector.length !== this.options.dimensions) {
      throw new Error(`vector index: expected ${this.options.dimensions} dimensions, got ${vector.length}`);
    }
    const label = this.count;
    this.addToHnsw(vector, label);
    this.count++;
    if (this.exactVectors && this.count >= this.options.exactBelow) this.exactVectors = undefined;
    else this.exactVectors?.push(normalized(vector));
    return label;
  }

  /** The `n` labels below `limit` most similar to the query, best first (exact while small, else HNSW). */
  search(query: Float32Array, n: number, limit = this.count): VectorHit[] {
    return this.exact ? this.searchExact(query, n, limit) : this.searchHnsw(query, n, limit);
  }

  /** Brute-force search over the in-memory vectors (only while `exact`). */
  searchExact(query: Float32Array, n: number, limit = this.count): VectorHit[] {
    if (!this.exactVectors) throw new Error('vector index: exact vectors were dropped once the store grew past exactBelow');
    const unit = normalized(query);
    const hits: VectorHit[] = [];
    for (let label = 0; label < Math.min(limit, this.count); label++) hits.push({ label, similarity: dot(unit, this.exactVectors[label]!) });
    return hits.sort(byHit).slice(0, n);
  }

  /** Approximate search on the HNSW graph; labels at or above `limit` are skipped. */
  searchHnsw(query: Float32Array, n: number, limit = this.count): VectorHit[] {
    const wanted = Math.min(n + (this.count - Math.min(limit, this.count)), this.count);
    if (wanted <= 0 || n <= 0) return [];
    this.hnsw.setEf(Math.max(wanted, this.options.efSearch));
    const { neighbors, distances } = this.hnsw.searchKnn(Array.from(query), wanted);
    const hits: VectorHit[] = [];
    neighbors.forEach((label, i) => {
      if (label < limit) hits.push({ label, similarity: 1 - distances[i]! });
    });
    return hits.sort(byHit).slice(0, n);
  }

  /** Cosine similarity of the query to one stored vector. */
  similarity(query: Float32Array, label: number): number {
    const stored = this.exactVectors?.[label] ?? normalized(this.hnsw.getPoint(label));
    return dot(normalized(query), stored);
  }

  /**
   * Writes the HNSW graph atomically (temp file, fsync, rename, fsync of the directory), so a
   * crash leaves the previous file or the new one. Synchronous: the graph must not change mid-write.
   */
  save(file: string): void {
    const dir = path.dirname(file);
    const temp = path.join(dir, `${tempPrefix(file)}${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    try {
      this.hnsw.writeIndexSync(temp);
      fsyncPath(temp, 'r+');
      renameSync(temp, file);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    fsyncPath(dir, 'r');
    this.savedCount = this.count;
  }

  private emptyHnsw(capacity: number): Hnsw {
    const hnsw = new HierarchicalNSW('cosine', this.options.dimensions);
    hnsw.initIndex({ maxElements: capacity, m: HNSW_M, efConstruction: HNSW_EF_CONSTRUCTION, randomSeed: this.options.seed });
    return hnsw;
  }

  /** Loads the file into a fresh graph; returns its count, or 0 (and an empty graph) when unusable. */
  private readFile(file: string, total: number): number {
    const hnsw = new HierarchicalNSW('cosine', this.options.dimensions);
    try {
      hnsw.readIndexSync(file);
    } catch {
      this.hnsw = this.emptyHnsw(Math.max(INITIAL_CAPACITY, total));
      return 0; // missing or unreadable: rebuild from the stored vectors
    }
    const count = hnsw.getCurrentCount();
    if (hnsw.getNumDimensions() !== this.options.dimensions || count > total) {
      this.hnsw = this.emptyHnsw(Math.max(INITIAL_CAPACITY, total));
      return 0; // written for other data: rebuild
    }
    this.hnsw = hnsw;
    return count;
  }

  private addToHnsw(vector: Float32Array, label: number): void {
    const capacity = this.hnsw.getMaxElements();
    if (label >= capacity) this.hnsw.resizeIndex(Math.max(capacity * 2, label + 1));
    this.hnsw.addPoint(Array.from(vector), label);
  }
}

const tempPrefix = (file: string): string => `.${path.basename(file)}.`;

/** Removes temp files a crash between write and rename left behind. */
function removeStaleTemps(file: string): void {
  const dir = path.dirname(file);
  const prefix = tempPrefix(file);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith(prefix) && name.endsWith('.tmp')) rmSync(path.join(dir, name), { force: true });
}

function fsyncPath(target: string, flags: string): void {
  const fd = openSync(target, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
