/**
 * The machine's speed during a run, measured by the run itself: a fixed piece of CPU work and a
 * fixed durable SQLite commit, timed in a batch before the cells start, once a second while they
 * run, and in a batch after they end. `compare` divides each run's load and save times by its CPU
 * floor, so a head run on a busier or slower moment of the same machine is not read as slower
 * code; the commit floor is recorded beside it (fsync times on a shared disk swing too far between
 * runs to divide by: medians of 4.9 and 1.7 ms in two back-to-back default runs on one machine).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fnv1a } from './hash.js';
import { namingFile, openDatabase, type SqliteDatabase } from './sqlite.js';

/** What a run records of its machine's speed (medians over the samples taken before and after its cells), in ms. */
export interface Calibration {
  /** Hashing a fixed 64 KiB of text: the CPU a strategy's load (segmenting, scoring, tokenising) competes for. */
  cpuMs: number;
  /** One row committed with synchronous=FULL in WAL mode: the fsync a durable save waits for. */
  commitMs: number;
  /** Samples behind each median. */
  samples: number;
}

/** Samples per batch (one batch before the cells, one after), after a few unrecorded warm-up rounds. */
export const CALIBRATION_SAMPLES = 15;
const WARMUP = 3;
const TEXT = 'membench calibration: the same bytes every run, hashed as a strategy would scan its store. '.repeat(700);

/** Raw calibration samples, pooled into a Calibration by `calibrationOf`. */
export interface CalibrationSamples {
  cpu: number[];
  commit: number[];
}

/** How often a round is sampled while the cells run: the floor follows the machine's load over the run. */
export const CALIBRATION_INTERVAL_MS = 1000;

/** A calibration being taken over a run: `stop()` (idempotent) takes the last batch and returns the medians. */
export interface RunningCalibration {
  stop(): Promise<Calibration>;
}

/**
 * Starts calibrating: a batch of rounds now, one round every CALIBRATION_INTERVAL_MS while the run
 * goes on when `periodic` (a few ms of the parent's otherwise idle time, while the cells run in
 * other processes), and a batch at `stop()`; each round times
 * the fixed CPU work and the fixed commit once, in a temp dir removed at the end.
 */
export async function startCalibration(
  options: { periodic: boolean; samples?: number } = { periodic: true },
): Promise<RunningCalibration> {
  const samples = options.samples ?? CALIBRATION_SAMPLES;
  // Named as a run's temp dir (harness/run/temp-dirs.ts): a run killed before stop() has it reclaimed by the next.
  const dir = await mkdtemp(path.join(os.tmpdir(), `membench-run-${process.pid}-calibration-`));
  const file = path.join(dir, 'calibration.sqlite');
  let db: SqliteDatabase | undefined;
  const close = async (): Promise<void> => {
    db?.close();
    await rm(dir, { recursive: true, force: true });
  };
  const taken: CalibrationSamples = { cpu: [], commit: [] };
  let insert: (data: string) => void = () => undefined;
  let sink = 0;
  const round = (record: boolean) => {
    let started = performance.now();
    for (let pass = 0; pass < 4; pass++) sink ^= fnv1a(TEXT, pass);
    const cpuMs = performance.now() - started;
    started = performance.now();
    insert(String(sink));
    const commitMs = performance.now() - started;
    if (!record) return;
    taken.cpu.push(cpuMs);
    taken.commit.push(commitMs);
  };
  const batch = () => {
    for (let index = 0; index < WARMUP; index++) round(false);
    for (let index = 0; index < samples; index++) round(true);
  };
  try {
    const opened = openDatabase(file, 'sync');
    db = opened;
    // SQLite's own words name no file ("database or disk is full"): namingFile says which, and TMPDIR.
    namingFile(file, () =>
      opened.exec('CREATE TABLE beats (seq INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT NOT NULL)'),
    );
    const statement = opened.prepare('INSERT INTO beats (data) VALUES (?)');
    insert = (data) => namingFile(file, () => statement.run(data));
    batch();
  } catch (error) {
    await close();
    throw error;
  }
  // Rounds while the cells run only when they run in other processes: in this one, a round between
  // two awaited steps would be timed as part of a save or a load. A round that fails there (the temp
  // dir's disk filled up under the run) ends the sampling, not the run: an exception in a timer
  // would have killed membench with every cell in flight; the cells on that disk say it themselves.
  const timer = options.periodic
    ? setInterval(() => {
        try {
          round(true);
        } catch {
          clearInterval(timer);
        }
      }, CALIBRATION_INTERVAL_MS)
    : undefined;
  timer?.unref();
  let stopped: Promise<Calibration> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        if (timer) clearInterval(timer);
        try {
          batch();
        } catch {
          // The closing batch failed the same way: the samples taken before stand (the first batch's at least).
        } finally {
          await close();
        }
        return calibrationOf([taken]);
      })();
      return stopped;
    },
  };
}

/** The median of a non-empty list. */
export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** Pools batches of samples (before and after a run's cells) into the medians a results header records. */
export function calibrationOf(batches: readonly CalibrationSamples[]): Calibration {
  const cpu = batches.flatMap((batch) => batch.cpu);
  const commit = batches.flatMap((batch) => batch.commit);
  return { cpuMs: median(cpu), commitMs: median(commit), samples: cpu.length };
}
