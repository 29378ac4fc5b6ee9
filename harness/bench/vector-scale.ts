/**
 * The vector store at scale: an hnswlib-node index (cosine, the vector strategy's M and
 * efConstruction) over seeded clustered unit vectors, its search breadth `ef` tuned until top-k
 * recall against exact search reaches the target, then top-k latency, build time and the index's
 * size on disk. The vectors are random but clustered (a centroid plus noise), so neighbours are
 * close the way embeddings of related texts are, and the exact answer is not trivial to find.
 */
import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import hnswlib from 'hnswlib-node';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { measure, type Timing } from './measure.js';
import { benchTempDir } from './scratch.js';

const { HierarchicalNSW } = hnswlib;
type Hnsw = InstanceType<typeof HierarchicalNSW>;

/** The graph parameters of strategies/stores/vector-index.ts (M, efConstruction), so the figures describe the vector strategy's index. */
export const HNSW_M = 16;
export const HNSW_EF_CONSTRUCTION = 200;
/** Search breadths tried, in order, until recall reaches the target. */
export const EF_GRID = [8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512] as const;

/** `count` unit vectors of `dimensions` in one buffer (row i at i * dimensions), a pure function of the seed. */
export interface VectorSet {
  count: number;
  dimensions: number;
  data: Float32Array;
}

/** Seeded clustered unit vectors: each is a random cluster centroid plus uniform noise of about the centroid's length, normalised. */
export function clusteredVectors(
  count: number,
  dimensions: number,
  seed: number,
  clusters = Math.max(1, Math.round(count / 100)),
): VectorSet {
  const rng = xoroshiro128plus(seed);
  const uniform = (): number => rng.next() / 0x80000000; // [-1, 1)
  const centroids = new Float32Array(clusters * dimensions);
  for (let i = 0; i < centroids.length; i++) centroids[i] = uniform();
  for (let c = 0; c < clusters; c++) normalizeRow(centroids, c * dimensions, dimensions);
  const noise = 1 / Math.sqrt(dimensions / 3); // a noise vector about as long as the unit centroid
  const data = new Float32Array(count * dimensions);
  for (let i = 0; i < count; i++) {
    const centroid = Math.floor(((uniform() + 1) / 2) * clusters) % clusters;
    for (let j = 0; j < dimensions; j++)
      data[i * dimensions + j] = centroids[centroid * dimensions + j]! + noise * uniform();
    normalizeRow(data, i * dimensions, dimensions);
  }
  return { count, dimensions, data };
}

function normalizeRow(data: Float32Array, offset: number, dimensions: number): void {
  let norm = 0;
  for (let j = 0; j < dimensions; j++) norm += data[offset + j]! ** 2;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let j = 0; j < dimensions; j++) data[offset + j]! /= norm;
}

/** Row `index` as the plain array hnswlib-node takes. */
export function row(set: VectorSet, index: number): number[] {
  return Array.from(set.data.subarray(index * set.dimensions, (index + 1) * set.dimensions));
}

/** Exact top-k by cosine (dot product of unit vectors): a full scan keeping the k best. Labels best first. */
export function exactTopK(set: VectorSet, query: Float32Array | readonly number[], k: number): number[] {
  const { data, dimensions, count } = set;
  const labels: number[] = [];
  const scores: number[] = [];
  for (let i = 0; i < count; i++) {
    let score = 0;
    const offset = i * dimensions;
    for (let j = 0; j < dimensions; j++) score += query[j]! * data[offset + j]!;
    if (labels.length === k && score <= scores[k - 1]!) continue;
    // Insertion into the sorted k best: the last one drops out when the list is full.
    let at = Math.min(labels.length, k - 1);
    for (; at > 0 && scores[at - 1]! < score; at--) {
      scores[at] = scores[at - 1]!;
      labels[at] = labels[at - 1]!;
    }
    scores[at] = score;
    labels[at] = i;
  }
  return labels;
}

/** An HNSW graph over every vector of the set, built with the vector strategy's parameters. */
export function buildHnsw(set: VectorSet, seed: number): Hnsw {
  const index = new HierarchicalNSW('cosine', set.dimensions);
  index.initIndex({ maxElements: set.count, m: HNSW_M, efConstruction: HNSW_EF_CONSTRUCTION, randomSeed: seed });
  for (let i = 0; i < set.count; i++) index.addPoint(row(set, i), i);
  return index;
}

/** Share of the exact top-k found by the index, over all queries. */
export function recallAtK(index: Hnsw, queries: readonly number[][], exact: readonly number[][], k: number): number {
  let found = 0;
  queries.forEach((query, q) => {
    const truth = new Set(exact[q]);
    for (const label of index.searchKnn(query, k).neighbors) if (truth.has(label)) found++;
  });
  return found / (queries.length * k);
}

/** What to build and measure. */
export interface VectorScaleOptions {
  count: number;
  dimensions: number;
  queries: number;
  k: number;
  recallTarget: number;
  seed: number;
  /** tinybench iterations for the final latency. */
  iterations: number;
  onProgress?: (line: string) => void;
}

/** One `ef` tried: its recall and mean search time over the queries. */
export interface EfTrial {
  ef: number;
  recall: number;
  meanMs: number;
}

/** The index at scale and the chosen `ef`. */
export interface VectorScaleResult {
  count: number;
  dimensions: number;
  k: number;
  m: number;
  efConstruction: number;
  buildMs: number;
  indexBytes: number;
  /** Exact search (full scan in JavaScript), per query. */
  exactMeanMs: number;
  trials: EfTrial[];
  /** The smallest `ef` of the grid reaching the recall target (the largest tried when none does). */
  ef: number;
  recall: number;
  search: Timing;
}

/** Builds, tunes and measures (see the file comment). */
export async function benchVectorScale(options: VectorScaleOptions): Promise<VectorScaleResult> {
  const { count, dimensions, k } = options;
  // Queries come from the same clusters but are not stored: generated together, then split off.
  const all = clusteredVectors(count + options.queries, dimensions, options.seed, Math.max(1, Math.round(count / 100)));
  const set: VectorSet = { count, dimensions, data: all.data.subarray(0, count * dimensions) };
  const queries = Array.from({ length: options.queries }, (_, q) => row(all, count + q));
  options.onProgress?.(`vector: building an HNSW index of ${count} vectors (d=${dimensions})`);
  const buildStarted = performance.now();
  const index = buildHnsw(set, options.seed);
  const buildMs = performance.now() - buildStarted;
  const exactStarted = performance.now();
  const exact = queries.map((query) => exactTopK(set, query, k));
  const exactMeanMs = (performance.now() - exactStarted) / queries.length;
  const trials: EfTrial[] = [];
  for (const ef of EF_GRID) {
    index.setEf(Math.max(ef, k));
    const started = performance.now();
    const recall = recallAtK(index, queries, exact, k);
    trials.push({ ef, recall, meanMs: (performance.now() - started) / queries.length });
    if (recall >= options.recallTarget) break;
  }
  const chosen = trials.find((trial) => trial.recall >= options.recallTarget) ?? trials.at(-1)!;
  index.setEf(Math.max(chosen.ef, k));
  let next = 0;
  const search = await measure(
    `hnsw top-${k} @ ${count}`,
    () => {
      index.searchKnn(queries[next++ % queries.length]!, k);
    },
    { iterations: options.iterations, warmupIterations: Math.min(50, options.iterations) },
  );
  const dir = await benchTempDir('membench-bench-hnsw-');
  let indexBytes: number;
  try {
    const file = path.join(dir, 'index.hnsw');
    await index.writeIndex(file);
    indexBytes = (await stat(file)).size;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return {
    count,
    dimensions,
    k,
    m: HNSW_M,
    efConstruction: HNSW_EF_CONSTRUCTION,
    buildMs,
    indexBytes,
    exactMeanMs,
    trials,
    ef: chosen.ef,
    recall: chosen.recall,
    search,
  };
}
