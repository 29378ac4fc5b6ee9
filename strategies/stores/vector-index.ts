/**
 * A cosine nearest-neighbour index over integer labels (the caller's record ids, not
 * necessarily dense or added in order): hnswlib-node's HNSW graph, plus exact brute-force search
 * while the store is small (faster than HNSW below a few hundred vectors, and exact). The index
 * file is a cache: the caller keeps the vectors durably elsewhere and hands back those the file
 * lacks on restore, so nothing is ever re-embedded.
 */
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type hnswlib from 'hnswlib-node';
import { deferFsync, inDurableBatch } from '../../harness/core/durable-batch.js';

type Hnsw = InstanceType<typeof hnswlib.HierarchicalNSW>;

/** hnswlib-node (a native addon) loads when the first index is built: processes of other strategies never load it. */
let hnswModule: typeof hnswlib | undefined;
/** Loads the addon (once): the vector strategy's `preload`. */
export function loadHnswlib(): typeof hnswlib {
  hnswModule ??= createRequire(import.meta.url)('hnswlib-node') as typeof hnswlib;
  return hnswModule;
}
/** Empty HNSW graphs this process initialized (initIndex): tests read it to prove an index makes one only when it needs it. */
export const hnswStats = { initialized: 0 };

function newHnsw(...args: ConstructorParameters<typeof hnswlib.HierarchicalNSW>): Hnsw {
  return new (loadHnswlib().HierarchicalNSW)(...args);
}

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
/** hnswlib-node passes labels as uint32. */
const MAX_LABEL = 2 ** 32 - 1;

/** Scales a copy to unit length (a zero vector stays zero), so a dot product is the cosine. */
export function normalized(vector: Float32Array | readonly number[]): Float32Array {
  const out = Float32Array.from(vector);
  let norm = 0;
  for (const value of out) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm;
  return out;
}

/** The dot product (the cosine of two unit vectors). */
export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** Position of the first element >= value in an ascending array. */
export function lowerBound(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Inserts into an ascending array: a push when the value is the largest (the usual case). */
export function insertSorted(sorted: number[], value: number): void {
  if (sorted.length === 0 || sorted.at(-1)! < value) sorted.push(value);
  else sorted.splice(lowerBound(sorted, value), 0, value);
}

/** Best first; on equal similarity the newer (higher) label first. */
const byHit = (a: VectorHit, b: VectorHit): number => b.similarity - a.similarity || b.label - a.label;

/** An HNSW index with an exact fast path for small stores. */
export class VectorIndex {
  /** The graph, made on first use: hnswlib's initIndex costs ~6.5 ms of CPU whatever the capacity (65,536 label locks), and an index opened to be loaded or searched exactly never needs an empty one. */
  private graph: Hnsw | undefined;
  /** Every label, ascending. */
  private labels: number[] = [];
  /** Unit vectors by label, kept only while the store is below `exactBelow`. */
  private exactVectors: Map<number, Float32Array> | undefined;
  /** Labels restored from a file or the store whose exact vectors are not in `exactVectors` yet (read on the first exact search). */
  private unloadedExact: number[] = [];
  private savedCount = 0;

  constructor(private readonly options: VectorIndexOptions) {
    this.exactVectors = options.exactBelow > 0 ? new Map() : undefined;
  }

  /** Number of vectors in the index. */
  get size(): number {
    return this.labels.length;
  }

  /** Vectors added since the index file was last written (or read). */
  get unsaved(): number {
    return this.labels.length - this.savedCount;
  }

  /** True while searches are exact brute force. */
  get exact(): boolean {
    return this.exactVectors !== undefined;
  }

  /** Whether the label is in the index. */
  has(label: number): boolean {
    const at = lowerBound(this.labels, label);
    return this.labels[at] === label;
  }

  /**
   * Reads the index file (when present, readable and consistent with `stored`), then adds the
   * stored vectors it lacks. `stored` lists every stored label, ascending; labels in the file
   * above the last of them are kept (another process stored and indexed them after the caller
   * listed `stored`), any other label the file has and `stored` lacks makes it unusable.
   * `vectorsOf(labels)` yields [label, vector] for the labels asked for. Returns how many vectors
   * were added to the HNSW graph (the rest came from the file).
   */
  restore(
    file: string | undefined,
    stored: readonly number[],
    vectorsOf: (labels: number[]) => Iterable<[number, Float32Array]>,
  ): number {
    if (file) removeStaleTemps(file);
    const fromFile = file && stored.length > 0 ? this.readFile(file, stored) : new Set<number>();
    if (fromFile.size === 0)
      this.graph = stored.length > 0 ? this.emptyHnsw(Math.max(INITIAL_CAPACITY, stored.length)) : undefined;
    const missing = stored.filter((label) => !fromFile.has(label));
    let added = 0;
    for (const [label, vector] of vectorsOf(missing)) {
      this.addToHnsw(vector, label);
      added++;
    }
    if (added !== missing.length)
      throw new Error(`vector index: expected ${missing.length} stored vectors, got ${added}`);
    this.labels = [...stored, ...[...fromFile].filter((label) => label > (stored.at(-1) ?? -1)).sort((a, b) => a - b)];
    this.savedCount = fromFile.size;
    // The restored vectors are read back from the graph on the first exact search, not here: a
    // store reopened at every session boundary of a replay is searched at few of them.
    this.exactVectors = this.labels.length < this.options.exactBelow ? new Map() : undefined;
    this.unloadedExact = this.exactVectors ? [...this.labels] : [];
    return added;
  }

  /** Adds a vector under a label not in the index yet. */
  add(vector: Float32Array, label: number): void {
    if (vector.length !== this.options.dimensions) {
      throw new Error(`vector index: expected ${this.options.dimensions} dimensions, got ${vector.length}`);
    }
    if (!Number.isInteger(label) || label < 0 || label > MAX_LABEL)
      throw new Error(`vector index: label ${label} is not a uint32`);
    if (this.has(label)) throw new Error(`vector index: label ${label} is already in the index`);
    this.addToHnsw(vector, label);
    insertSorted(this.labels, label);
    if (this.exactVectors && this.labels.length >= this.options.exactBelow) {
      this.exactVectors = undefined;
      this.unloadedExact = [];
    } else this.exactVectors?.set(label, normalized(vector));
  }

  /** The `n` labels below `limit` most similar to the query, best first (exact while small, else HNSW). */
  search(query: Float32Array, n: number, limit = Infinity): VectorHit[] {
    return this.exact ? this.searchExact(query, n, limit) : this.searchHnsw(query, n, limit);
  }

  /** Brute-force search over the in-memory vectors (only while `exact`). */
  searchExact(query: Float32Array, n: number, limit = Infinity): VectorHit[] {
    const exactVectors = this.loadedExactVectors();
    if (!exactVectors) throw new Error('vector index: exact vectors were dropped once the store grew past exactBelow');
    const unit = normalized(query);
    const hits: VectorHit[] = [];
    // Hits are sorted by similarity, then label: the map's insertion order does not matter.
    for (const [label, vector] of exactVectors) if (label < limit) hits.push({ label, similarity: dot(unit, vector) });
    return hits.sort(byHit).slice(0, n);
  }

  /** Approximate search on the HNSW graph; labels at or above `limit` are skipped. */
  searchHnsw(query: Float32Array, n: number, limit = Infinity): VectorHit[] {
    const skipped = this.labels.length - lowerBound(this.labels, limit);
    const wanted = Math.min(n + skipped, this.labels.length);
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
    const stored = this.exactVectors?.get(label) ?? normalized(this.hnsw.getPoint(label));
    return dot(normalized(query), stored);
  }

  /**
   * Writes the HNSW graph atomically (temp file, fsync, rename, fsync of the directory), so a
   * crash leaves the previous file or the new one. Synchronous: the graph must not change
   * mid-write. Several processes may save the same file: the last rename wins, and what that
   * file lacks is added from the stored vectors on the next restore.
   */
  save(file: string): void {
    const dir = path.dirname(file);
    const temp = path.join(dir, `${tempPrefix(file)}${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    // Inside a durable batch (a replayed dataset's saved turns) the fsyncs wait for the batch's end,
    // as atomic file writes' do: a process crash still leaves the old file or the new one.
    const batched = inDurableBatch();
    try {
      this.hnsw.writeIndexSync(temp);
      if (!batched) fsyncPath(temp, 'r+');
      renameSync(temp, file);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    if (batched) {
      deferFsync(file);
      deferFsync(dir);
    } else fsyncPath(dir, 'r');
    this.savedCount = this.labels.length;
  }

  /** The exact vectors, the restored ones read from the graph now if they were not yet. */
  private loadedExactVectors(): Map<number, Float32Array> | undefined {
    const exactVectors = this.exactVectors;
    if (exactVectors && this.unloadedExact.length > 0) {
      for (const label of this.unloadedExact) exactVectors.set(label, normalized(this.hnsw.getPoint(label)));
      this.unloadedExact = [];
    }
    return exactVectors;
  }

  private emptyHnsw(capacity: number): Hnsw {
    hnswStats.initialized++;
    const hnsw = newHnsw('cosine', this.options.dimensions);
    hnsw.initIndex({
      maxElements: capacity,
      m: HNSW_M,
      efConstruction: HNSW_EF_CONSTRUCTION,
      randomSeed: this.options.seed,
    });
    return hnsw;
  }

  /** Loads the file; returns its labels, or none when it is missing, unreadable or holds a label `stored` should have. */
  private readFile(file: string, stored: readonly number[]): Set<number> {
    const hnsw = newHnsw('cosine', this.options.dimensions);
    try {
      hnsw.readIndexSync(file);
    } catch {
      return new Set(); // missing or unreadable: rebuild from the stored vectors
    }
    if (hnsw.getNumDimensions() !== this.options.dimensions) return new Set();
    const labels = new Set(hnsw.getIdsList());
    const storedLabels = new Set(stored);
    const newest = stored.at(-1) ?? -1;
    for (const label of labels) if (label <= newest && !storedLabels.has(label)) return new Set(); // written for other data: rebuild
    this.graph = hnsw;
    return labels;
  }

  private get hnsw(): Hnsw {
    this.graph ??= this.emptyHnsw(INITIAL_CAPACITY);
    return this.graph;
  }

  private addToHnsw(vector: Float32Array, label: number): void {
    const capacity = this.hnsw.getMaxElements();
    if (this.hnsw.getCurrentCount() >= capacity) this.hnsw.resizeIndex(Math.max(capacity * 2, INITIAL_CAPACITY));
    this.hnsw.addPoint(Array.from(vector), label);
  }
}

const tempPrefix = (file: string): string => `.${path.basename(file)}.`;

/** Whether a process with this id exists (EPERM: it does, owned by someone else); our own pid counts as alive. */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes temp files a crash between write and rename left behind; a live writer's temp files are left alone. */
function removeStaleTemps(file: string): void {
  const dir = path.dirname(file);
  const prefix = tempPrefix(file);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
    const pid = Number(name.slice(prefix.length).split('.')[0]);
    if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) continue;
    rmSync(path.join(dir, name), { force: true });
  }
}

function fsyncPath(target: string, flags: string): void {
  const fd = openSync(target, flags);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
