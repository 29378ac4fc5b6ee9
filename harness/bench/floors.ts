/**
 * The floors: what the cheapest possible version of each operation costs on this machine, measured
 * at run time (never hard-coded), so every strategy figure can be read as a multiple of them.
 */
import { fork } from 'node:child_process';
import { writeFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Statement } from 'better-sqlite3';
import { get_encoding, type Tiktoken } from 'tiktoken';
import { writeFileAtomic } from '../core/fs.js';
import { agentEnv } from '../process/agent-process.js';
import { openDatabase, type SqliteDatabase } from '../core/sqlite.js';
import { encodingForModel } from '../core/tokens.js';
import { BpeCounter } from '../core/bpe.js';
import { measure, type MeasureOptions, type Timing } from './measure.js';
import { BENCH_TOKENIZER } from './rig.js';
import { buildHnsw, clusteredVectors, exactTopK, row, type VectorSet } from './vector-scale.js';
import { benchChild, benchTempDir } from './scratch.js';

/** A short chat message, the size of a typical user turn. */
export const SHORT_MESSAGE =
  'By the way, my friend Nora is visiting on March 3rd and loves lemon tart. Any tips for making it ahead?';

/** Every floor, with the parameters it was measured at. */
export interface Floors {
  encoding: string;
  /** tiktoken `encode` (special-token handling) and `encode_ordinary` of SHORT_MESSAGE: the floor of a count. */
  tokenEncode: Timing;
  tokenEncodeOrdinary: Timing;
  /** What TokenCounter uses (`harness/core/bpe.ts`, the same counts), on SHORT_MESSAGE. */
  tokenCount: Timing;
  /** Building an encoder, as every agent process does once: tiktoken's WebAssembly one and bpe.ts's. */
  tiktokenLoad: Timing;
  bpeLoad: Timing;
  /** One insert committed in WAL mode with synchronous=FULL (survives a power cut) and =NORMAL (survives a process crash). */
  sqliteCommitFull: Timing;
  sqliteCommitNormal: Timing;
  /** harness/core/fs.ts writeFileAtomic of a short file: temp + fsync + rename + fsync of the dir. */
  atomicFileWrite: Timing;
  /** Top-5 search over `vectors` unit vectors of `dimensions`: HNSW (at `ef`) and an exact scan. */
  vectors: number;
  dimensions: number;
  ef: number;
  hnswTop5: Timing;
  bruteForceTop5: Timing;
  /** Store size below which the exact scan is faster, estimated as HNSW time / scan time per vector. */
  crossoverVectors: number;
  /** Fork a node process that opens a SQLite file, SIGKILL it, reopen the file here. */
  forkKillReopen: Timing;
}

/** How long each floor runs: quick mode takes fewer samples and a smaller time budget. */
export interface FloorOptions {
  quick: boolean;
  vectors: number;
  dimensions: number;
  ef: number;
  seed: number;
  onProgress?: (line: string) => void;
}

const budget = (quick: boolean, iterations: number): MeasureOptions => ({
  iterations: quick ? Math.ceil(iterations / 4) : iterations,
  timeMs: quick ? 150 : 500,
  warmupIterations: 5,
});

async function tokenFloors(
  quick: boolean,
): Promise<
  Pick<Floors, 'encoding' | 'tokenEncode' | 'tokenEncodeOrdinary' | 'tokenCount' | 'tiktokenLoad' | 'bpeLoad'>
> {
  const encoding = encodingForModel(BENCH_TOKENIZER);
  const encoder = get_encoding(encoding);
  const counter = BpeCounter.load(encoding);
  const loads: MeasureOptions = { iterations: quick ? 3 : 10, timeMs: quick ? 300 : 2000, warmupIterations: 1 };
  try {
    const tokenEncode = await measure('tiktoken encode', () => void encoder.encode(SHORT_MESSAGE), budget(quick, 500));
    const tokenEncodeOrdinary = await measure(
      'tiktoken encode_ordinary',
      () => void encoder.encode_ordinary(SHORT_MESSAGE),
      budget(quick, 500),
    );
    const tokenCount = await measure('bpe.ts count', () => void counter.count(SHORT_MESSAGE), budget(quick, 500));
    const tiktokenLoad = await measure('tiktoken encoder load', () => get_encoding(encoding).free(), loads);
    const bpeLoad = await measure('bpe.ts encoder load', () => void BpeCounter.load(encoding), loads);
    return { encoding, tokenEncode, tokenEncodeOrdinary, tokenCount, tiktokenLoad, bpeLoad };
  } finally {
    encoder.free();
  }
}

async function commitFloor(dir: string, durability: 'sync' | 'async', quick: boolean): Promise<Timing> {
  const db = openDatabase(path.join(dir, `commit-${durability}.sqlite`), durability);
  try {
    db.exec('CREATE TABLE messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO messages (data) VALUES (?)');
    const data = JSON.stringify({ type: 'human', data: { content: SHORT_MESSAGE } });
    return await measure(
      `sqlite commit (${durability === 'sync' ? 'FULL' : 'NORMAL'})`,
      () => void insert.run(data),
      budget(quick, 200),
    );
  } finally {
    db.close();
  }
}

/** The child of the fork floor: opens the SQLite file, writes a row, says so, then waits to be killed. */
const CHILD_SCRIPT = `
const Database = require(process.argv[2]);
const db = new Database(process.argv[3]);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE IF NOT EXISTS beats (at INTEGER)');
db.prepare('INSERT INTO beats (at) VALUES (?)').run(Date.now());
process.send('ready');
setInterval(() => {}, 1 << 30);
`;

/** Fork, wait until the child has the file open, SIGKILL it, wait for its exit, reopen the file. */
async function forkKillReopen(script: string, sqliteModule: string, file: string): Promise<void> {
  // Started as offline agent processes are (without TLS-only settings): the floor is what theirs would be.
  const child = benchChild(
    fork(script, [sqliteModule, file], {
      execArgv: [],
      env: agentEnv(true),
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    }),
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      signal === 'SIGKILL'
        ? resolve()
        : reject(new Error(`fork floor: child exited with ${signal ?? code} before it was killed`)),
    );
    child.once('message', () => child.kill('SIGKILL'));
  });
  const db = openDatabase(file, 'sync');
  db.prepare('SELECT count(*) AS n FROM beats').get();
  db.close();
}

async function vectorFloors(
  options: FloorOptions,
): Promise<Pick<Floors, 'vectors' | 'dimensions' | 'ef' | 'hnswTop5' | 'bruteForceTop5' | 'crossoverVectors'>> {
  const { vectors, dimensions, ef, quick, seed } = options;
  const queryCount = 50;
  const all = clusteredVectors(vectors + queryCount, dimensions, seed, Math.max(1, Math.round(vectors / 100)));
  const set: VectorSet = { count: vectors, dimensions, data: all.data.subarray(0, vectors * dimensions) };
  const queries = Array.from({ length: queryCount }, (_, q) => row(all, vectors + q));
  options.onProgress?.(`floors: building an HNSW index of ${vectors} vectors (d=${dimensions})`);
  const index = buildHnsw(set, seed);
  index.setEf(ef);
  let next = 0;
  const hnswTop5 = await measure(
    'hnsw top-5',
    () => void index.searchKnn(queries[next++ % queryCount]!, 5),
    budget(quick, 400),
  );
  const bruteForceTop5 = await measure(
    'brute-force top-5',
    () => void exactTopK(set, queries[next++ % queryCount]!, 5),
    { ...budget(quick, 40), warmupIterations: 2 },
  );
  const perVector = bruteForceTop5.p50Ms / vectors;
  return {
    vectors,
    dimensions,
    ef,
    hnswTop5,
    bruteForceTop5,
    crossoverVectors: Math.round(hnswTop5.p50Ms / perVector),
  };
}

/** The fork + SIGKILL + reopen floor alone: what a crash and its recovery cannot go below (the suite section divides by it). */
export async function measureForkFloor(options: { quick: boolean; iterations?: number }): Promise<Timing> {
  const dir = await benchTempDir('membench-bench-fork-');
  try {
    const script = path.join(dir, 'child.cjs');
    await writeFile(script, CHILD_SCRIPT);
    const sqliteModule = createRequire(import.meta.url).resolve('better-sqlite3');
    const forkFile = path.join(dir, 'fork.sqlite');
    return await measure('fork + SIGKILL + reopen', () => forkKillReopen(script, sqliteModule, forkFile), {
      iterations: options.iterations ?? (options.quick ? 5 : 15),
      warmupIterations: 1,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Measures every floor (see Floors). */
export async function measureFloors(options: FloorOptions): Promise<Floors> {
  const dir = await benchTempDir('membench-bench-floors-');
  try {
    options.onProgress?.('floors: tokenizer, SQLite commits, atomic file write');
    const tokens = await tokenFloors(options.quick);
    const sqliteCommitFull = await commitFloor(dir, 'sync', options.quick);
    const sqliteCommitNormal = await commitFloor(dir, 'async', options.quick);
    const target = path.join(dir, 'atomic.md');
    const atomicFileWrite = await measure(
      'writeFileAtomic',
      () => writeFileAtomic(target, `---\nname: note\n---\n${SHORT_MESSAGE}\n`),
      budget(options.quick, 100),
    );
    const vectorFloor = await vectorFloors(options);
    options.onProgress?.('floors: fork + SIGKILL + reopen');
    const forkTiming = await measureForkFloor({ quick: options.quick });
    return {
      ...tokens,
      sqliteCommitFull,
      sqliteCommitNormal,
      atomicFileWrite,
      ...vectorFloor,
      forkKillReopen: forkTiming,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The cheapest durable write of a strategy's kind: a SQLite commit, or (file-index) an atomic file write. */
export type FloorWrite = 'commit' | 'file';

/**
 * The per-turn floor of the targets: a turn saves two messages, and each costs at least one token
 * count and one durable write, so the floor is twice (encode_ordinary + commit).
 * `write` picks the durable write: a SQLite commit, or an atomic file write.
 */
export function turnFloorMs(floors: Floors, write: FloorWrite): number {
  const writeMs = write === 'commit' ? floors.sqliteCommitFull.p50Ms : floors.atomicFileWrite.p50Ms;
  return 2 * (floors.tokenEncodeOrdinary.p50Ms + writeMs);
}

/** The floor of one `remember` (file-index): one token count and one atomic file write. */
export function rememberFloorMs(floors: Floors): number {
  return floors.tokenEncodeOrdinary.p50Ms + floors.atomicFileWrite.p50Ms;
}

/**
 * Takes floor samples between the samples of a measured operation, so both see the same load on
 * the machine (fsync times swing with other work on the disk): a strategy's ratio is to the floor
 * of the same moments, not of a minute earlier.
 */
export class FloorProbe {
  private readonly db: SqliteDatabase;
  private readonly insert: Statement;
  private readonly encoder: Tiktoken;
  private readonly file: string;
  private readonly data = JSON.stringify({ type: 'human', data: { content: SHORT_MESSAGE } });

  constructor(dir: string) {
    this.db = openDatabase(path.join(dir, 'floor-probe.sqlite'), 'sync');
    this.db.exec('CREATE TABLE IF NOT EXISTS messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT NOT NULL)');
    this.insert = this.db.prepare('INSERT INTO messages (data) VALUES (?)');
    this.encoder = get_encoding(encodingForModel(BENCH_TOKENIZER));
    this.file = path.join(dir, 'floor-probe.md');
  }

  /** One per-turn floor sample: twice (count a short message, write it durably: a FULL commit, or an atomic file write), in ms. */
  async turn(write: FloorWrite): Promise<number> {
    const started = performance.now();
    for (let message = 0; message < 2; message++) {
      this.encoder.encode_ordinary(SHORT_MESSAGE);
      if (write === 'commit') this.insert.run(this.data);
      else await writeFileAtomic(this.file, SHORT_MESSAGE);
    }
    return performance.now() - started;
  }

  /** One `remember` floor sample: count a short memory, write it atomically and durably, in ms. */
  async remember(): Promise<number> {
    const started = performance.now();
    this.encoder.encode_ordinary(SHORT_MESSAGE);
    await writeFileAtomic(this.file, SHORT_MESSAGE);
    return performance.now() - started;
  }

  close(): void {
    this.db.close();
    this.encoder.free();
  }
}
