/**
 * The "dataset scale" section: a seeded synthetic file in LongMemEval_S's shape (about 50
 * sessions, 500 messages and 115 k tokens per question: synthetic-longmemeval.ts) replayed per
 * strategy with `membench run --dataset longmemeval:FILE` in this process, one cell at a time:
 * wall and CPU ms per question and per message, beside the write-and-index floor (every message
 * written to SQLite and indexed in FTS5, one fsynced commit per session, as a batched replay
 * commits), and the process's peak resident set.
 */
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../core/sqlite.js';
import { errorCells, okCells } from '../results/cells.js';
import { runBenchmark } from '../run/runner.js';
import { syntheticLongMemEval, writeSyntheticLongMemEval } from './synthetic-longmemeval.js';
import { benchTempDir } from './scratch.js';

export interface DatasetScaleOptions {
  /** Questions in the file (LongMemEval_S has 500). */
  questions: number;
  strategies: readonly string[];
  seed?: number;
  onProgress?: (line: string) => void;
}

/** One strategy over the whole file. */
export interface DatasetScaleRow {
  strategy: string;
  questions: number;
  errors: number;
  wallMs: number;
  /** User + system CPU of this process (the cells ran in it). */
  cpuMs: number;
  msPerQuestion: number;
  msPerMessage: number;
  /** msPerMessage over the floor's. */
  floorRatio: number;
  peakRssMb: number;
}

export interface DatasetScaleResult {
  questions: number;
  sessions: number;
  messages: number;
  fileMb: number;
  /** Writing and indexing every message of the file's first questions, one fsynced commit per session. */
  floor: { questions: number; msPerQuestion: number; msPerMessage: number };
  rows: DatasetScaleRow[];
  /**
   * EXTRAPOLATED, not measured: the CPU per question summed over the strategies measured, times
   * LongMemEval_S's 500 questions, spread over this machine's cores (one worker per core): what a
   * full-file run of those strategies would take on an idle machine, import and reports aside.
   */
  fullFile: { questions: number; cores: number; cpuMinutes: number; wallMinutes: number };
}

/** LongMemEval_S's question count (the published file). */
const FULL_FILE_QUESTIONS = 500;

type Question = { haystack_sessions: { role: string; content: string }[][] };

/** The write-and-index floor on `sample` questions: SQLite rows + FTS5, synchronous=FULL, one commit per session. */
function measureFloor(dir: string, questions: readonly Question[]): { msPerQuestion: number; msPerMessage: number } {
  let messages = 0;
  const started = performance.now();
  for (const [index, question] of questions.entries()) {
    const db = openDatabase(path.join(dir, `floor-${index}.sqlite`), 'sync');
    db.exec(
      'CREATE TABLE messages (id INTEGER PRIMARY KEY, role TEXT, content TEXT); CREATE VIRTUAL TABLE terms USING fts5(content)',
    );
    const insert = db.prepare('INSERT INTO messages (role, content) VALUES (?, ?)');
    const index_ = db.prepare('INSERT INTO terms (rowid, content) VALUES (?, ?)');
    const session = db.transaction((turns: Question['haystack_sessions'][number]) => {
      for (const turn of turns) index_.run(insert.run(turn.role, turn.content).lastInsertRowid, turn.content);
    });
    for (const turns of question.haystack_sessions) {
      session(turns);
      messages += turns.length;
    }
    db.close();
  }
  const ms = performance.now() - started;
  return { msPerQuestion: ms / questions.length, msPerMessage: ms / Math.max(1, messages) };
}

/** Writes the file, measures the floor, then replays the file once per strategy. */
export async function benchDatasetScale(options: DatasetScaleOptions): Promise<DatasetScaleResult> {
  const dir = await benchTempDir('membench-bench-dataset-');
  try {
    const file = path.join(dir, 'longmemeval-s-synthetic.json');
    const settings = { questions: options.questions, seed: options.seed ?? 2025 };
    const bytes = await writeSyntheticLongMemEval(file, settings);
    let sessions = 0;
    let messages = 0;
    const sample: Question[] = [];
    for (const question of syntheticLongMemEval(settings) as Generator<Question>) {
      sessions += question.haystack_sessions.length;
      messages += question.haystack_sessions.reduce((sum, turns) => sum + turns.length, 0);
      if (sample.length < 5) sample.push(question);
    }
    options.onProgress?.(
      `dataset scale: ${options.questions} questions, ${sessions} sessions, ${messages} messages (${(bytes / 1e6).toFixed(0)} MB)`,
    );
    const floor = { questions: sample.length, ...measureFloor(dir, sample) };
    const rows: DatasetScaleRow[] = [];
    for (const strategy of options.strategies) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      const result = await runBenchmark({ datasets: [`longmemeval:${file}`], strategies: [strategy], workers: 1 });
      const wallMs = performance.now() - started;
      const used = process.cpuUsage(cpu);
      const cpuMs = (used.user + used.system) / 1000;
      const peakRssMb = Math.max(
        Math.round(process.memoryUsage.rss() / 1048576),
        ...okCells(result.cells).map((cell) => cell.peakRssMb),
      );
      const msPerMessage = wallMs / messages;
      rows.push({
        strategy,
        questions: result.cells.length,
        errors: errorCells(result.cells).length,
        wallMs,
        cpuMs,
        msPerQuestion: wallMs / result.cells.length,
        msPerMessage,
        floorRatio: floor.msPerMessage > 0 ? msPerMessage / floor.msPerMessage : 0,
        peakRssMb,
      });
      options.onProgress?.(
        `dataset scale: ${strategy}: ${(wallMs / 1000).toFixed(1)} s wall, ${(cpuMs / 1000).toFixed(1)} s CPU`,
      );
    }
    const cpuPerQuestionMs = rows.reduce((sum, row) => sum + row.cpuMs / Math.max(1, row.questions), 0);
    const cores = os.availableParallelism();
    const cpuMinutes = (cpuPerQuestionMs * FULL_FILE_QUESTIONS) / 60_000;
    const fullFile = { questions: FULL_FILE_QUESTIONS, cores, cpuMinutes, wallMinutes: cpuMinutes / cores };
    return { questions: options.questions, sessions, messages, fileMb: bytes / 1e6, floor, rows, fullFile };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
