/**
 * The "protocol" section: `membench run --dataset longmemeval:FILE --protocol longmemeval -s bm25`
 * (both units, both rankers: four ranking-only cells a question) on a seeded LongMemEval_S-shaped
 * file, in this process, against a floor measured in the same process: read the file
 * (JSON.parse), then for each question and each of the four settings only what its ranking needs:
 * tokenize the user turns (or the sessions' joined user turns) with the same ranker's tokenizer,
 * index them (an in-memory FTS5 table for `fts5`; term counts for `okapi-paper`) and rank every
 * document for the question. Both are user + system CPU ms per question; the ratio is the run's
 * over the floor's (target ≤ PROTOCOL_TARGET_RATIO).
 */
import { okCells } from '../results/cells.js';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { LexicalIndex } from '../../strategies/stores/lexical-index.js';
import { descendingOrder, okapiDocument, okapiScores, paperTokens } from '../../strategies/shared/okapi-paper.js';
import { segmenterFor } from '../../strategies/shared/segmenters.js';
import { median } from '../core/calibration.js';
import { runBenchmark } from '../run/runner.js';
import { poolStats } from '../run/pool.js';
import type { CellResult } from '../results/schema.js';
import { writeSyntheticLongMemEval } from './synthetic-longmemeval.js';
import { readCellSchedules, type CellSchedule } from '../run/cell-sched.js';
import { benchTempDir } from './scratch.js';

/** The protocol run within this multiple of its floor (CPU per question). */
export const PROTOCOL_TARGET_RATIO = 3;

export interface ProtocolBenchOptions {
  questions: number;
  seed?: number;
  onProgress?: (line: string) => void;
}

export interface ProtocolBenchResult {
  questions: number;
  /** Cells of the run (four a question) and how many errored. */
  cells: number;
  errors: number;
  /** Cells that ranked only (harness/run/rank-only.ts): all of them, unless something forced the full cell. */
  rankingOnly: number;
  /** The run: CPU and wall ms per question, and the slowest cell against the median cell (wall). */
  run: {
    /** CPU of the one-question run before it (not counted): what a process loads and compiles once. */
    warmUpCpuMs: number;
    cpuMsPerQuestion: number;
    wallMsPerQuestion: number;
    medianCellMs: number;
    maxCellMs: number;
  };
  /**
   * The same run through the pool of worker processes, as `membench run` runs it: how many copies of
   * a question its workers were sent (one per question and worker, not one per cell), and how its
   * cells spread in CPU and in wall time (median, slowest, how many above 5× the median).
   */
  pooled: {
    workers: number;
    cells: number;
    scenariosSent: number;
    cpu: CellSpread;
    wall: CellSpread;
    /**
     * Where the kernel says (MEMBENCH_CELL_SCHED, harness/run/cell-sched.ts): the spread of each
     * cell's own thread's time on a CPU, and how many of the cells above 5× the median in wall time
     * were not above it in thread time (they waited for a CPU); null elsewhere.
     */
    thread: (CellSpread & { waitedAbove5x: number }) | null;
  };
  /** Read + tokenize + index + rank, CPU ms per question. */
  floor: { cpuMsPerQuestion: number };
  /** run.cpuMsPerQuestion / floor.cpuMsPerQuestion. */
  ratio: number;
}

/** How a run's cells spread in one of their timings (ms). */
export interface CellSpread {
  medianMs: number;
  maxMs: number;
  /** Cells above 5× the median. */
  above5x: number;
}

/** The spread of `cells` in `field` (cells that lack it are left out). */
export function cellSpread(cells: readonly CellResult[], field: 'durationMs' | 'cpuMs'): CellSpread {
  return spreadOf(cells.flatMap((cell) => (typeof cell[field] === 'number' ? [cell[field]] : [])));
}

/** The thread-time spread of a run's schedule lines, and the cells above 5× in wall time but not in thread time. */
export function threadSpread(lines: readonly CellSchedule[]): (CellSpread & { waitedAbove5x: number }) | null {
  if (lines.length === 0) return null;
  const thread = spreadOf(lines.map((line) => line.threadMs));
  const wall = spreadOf(lines.map((line) => line.wallMs));
  const waitedAbove5x = lines.filter(
    (line) => line.wallMs > 5 * wall.medianMs && line.threadMs <= 5 * thread.medianMs,
  ).length;
  return { ...thread, waitedAbove5x };
}

function spreadOf(values: readonly number[]): CellSpread {
  const medianMs = values.length === 0 ? 0 : median(values);
  return {
    medianMs,
    maxMs: values.reduce((max, value) => Math.max(max, value), 0),
    above5x: values.filter((value) => value > 5 * medianMs).length,
  };
}

/** Pool workers of the bench's pooled run: two, the cores of the machine the targets were set on. */
const POOLED_WORKERS = 2;

type Question = { question: string; haystack_sessions: { role: string; content: string }[][] };

const cpuMs = (since: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** The floor of one question: each of the protocol's four rankings, nothing else. Returns the ranked documents (so none of it is optimised away). */
function floorQuestion(question: Question, segment: (text: string) => string[]): number {
  const sessions = question.haystack_sessions.map((turns) =>
    turns.filter((turn) => turn.role === 'user').map((turn) => turn.content),
  );
  const turns = sessions.flat();
  let ranked = 0;
  for (const documents of [turns, sessions.map((texts) => texts.join('\n'))]) {
    const index = LexicalIndex.inMemory();
    documents.forEach((text, key) => index.add(key + 1, segment(text).join(' ')));
    ranked += index.search(segment(question.question), documents.length).length;
    index.close();
  }
  for (const documents of [turns, sessions.map((texts) => texts.join(' '))]) {
    const corpus = documents.map((text) => okapiDocument(paperTokens(text)));
    ranked += descendingOrder(okapiScores(corpus, paperTokens(question.question))).length;
  }
  return ranked;
}

/** The floor of every question of the file: how many there were and the documents ranked. */
function floorFile(
  questions: readonly Question[],
  segment: (text: string) => string[],
): { count: number; ranked: number } {
  let ranked = 0;
  for (const question of questions) ranked += floorQuestion(question, segment);
  return { count: questions.length, ranked };
}

/** Writes the file, measures the floor, then runs the protocol on it. */
export async function benchProtocol(options: ProtocolBenchOptions): Promise<ProtocolBenchResult> {
  const dir = await benchTempDir('membench-bench-protocol-');
  try {
    const file = path.join(dir, 'longmemeval-s-synthetic.json');
    await writeSyntheticLongMemEval(file, { questions: options.questions, seed: options.seed ?? 2025 });
    const segment = segmenterFor('jieba');
    floorQuestion({ question: 'warm up', haystack_sessions: [[{ role: 'user', content: 'warm up' }]] }, segment);

    let since = process.cpuUsage();
    // The floor's parsed file is garbage once it has ranked: the run's collections do not mark it.
    const { count, ranked } = floorFile(JSON.parse(await readFile(file, 'utf8')) as Question[], segment);
    const floorCpu = cpuMs(since);
    options.onProgress?.(
      `protocol: floor ${(floorCpu / count).toFixed(1)} ms CPU a question (${ranked} documents ranked)`,
    );

    // `membench run --dataset longmemeval:FILE --protocol longmemeval -s bm25`, run three ways below.
    const protocolRun = { datasets: [`longmemeval:${file}`], protocol: 'longmemeval', strategies: ['bm25'] } as const;
    // As the floor is measured warm, so is the run: a one-question run first (not counted) loads and
    // compiles what a process loads once. Its CPU is printed as the run's fixed cost.
    since = process.cpuUsage();
    await runBenchmark({ ...protocolRun, workers: 1, datasetLimit: 1 });
    const warmUpCpuMs = cpuMs(since);

    since = process.cpuUsage();
    const started = performance.now();
    const result = await runBenchmark({ ...protocolRun, workers: 1 });
    const wallMs = performance.now() - started;
    const runCpu = cpuMs(since);
    const cells = cellSpread(result.cells, 'durationMs');
    const run = {
      warmUpCpuMs,
      cpuMsPerQuestion: runCpu / count,
      wallMsPerQuestion: wallMs / count,
      medianCellMs: cells.medianMs,
      maxCellMs: cells.maxMs,
    };
    const floor = { cpuMsPerQuestion: floorCpu / count };
    const sentBefore = poolStats.scenariosSent;
    // The workers inherit the switch (it is read where each cell runs) and write each cell's thread time.
    const schedules = path.join(dir, 'cells.jsonl');
    const switchBefore = process.env.MEMBENCH_CELL_SCHED;
    process.env.MEMBENCH_CELL_SCHED = schedules;
    let pooledResult: Awaited<ReturnType<typeof runBenchmark>>;
    try {
      pooledResult = await runBenchmark({ ...protocolRun, workers: POOLED_WORKERS });
    } finally {
      if (switchBefore === undefined) delete process.env.MEMBENCH_CELL_SCHED;
      else process.env.MEMBENCH_CELL_SCHED = switchBefore;
    }
    const pooled = {
      workers: POOLED_WORKERS,
      cells: pooledResult.cells.length,
      scenariosSent: poolStats.scenariosSent - sentBefore,
      cpu: cellSpread(pooledResult.cells, 'cpuMs'),
      wall: cellSpread(pooledResult.cells, 'durationMs'),
      thread: threadSpread(readCellSchedules(schedules)),
    };
    options.onProgress?.(
      `protocol: run ${run.cpuMsPerQuestion.toFixed(1)} ms CPU a question, ${result.cells.length} cells`,
    );
    return {
      questions: count,
      cells: result.cells.length,
      errors: result.cells.filter((cell) => cell.status === 'error').length,
      rankingOnly: okCells(result.cells).filter((cell) => cell.skipped?.length).length,
      run,
      pooled,
      floor,
      ratio: floor.cpuMsPerQuestion > 0 ? run.cpuMsPerQuestion / floor.cpuMsPerQuestion : 0,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
