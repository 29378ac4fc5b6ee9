/**
 * The machine's speed during a run, measured by the run itself: a fixed piece of CPU work and a
 * fixed durable SQLite commit, timed a few times before the cells start and again after they end.
 * `compare` divides each run's latencies by its own calibration, so a head run on a busier or
 * slower moment of the same machine is not read as slower code.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fnv1a } from './hash.js';
import { openDatabase } from './sqlite.js';

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

/** Raw calibration samples, to be pooled into a Calibration by `calibrationOf`. */
export interface CalibrationSamples {
  cpu: number[];
  commit: number[];
}

/** Times the fixed CPU work and the fixed commit `samples` times each (in a temp dir removed after). */
export async function sampleCalibration(samples = CALIBRATION_SAMPLES): Promise<CalibrationSamples> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-calibration-'));
  const db = openDatabase(path.join(dir, 'calibration.sqlite'), 'sync');
  try {
    db.exec('CREATE TABLE beats (seq INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO beats (data) VALUES (?)');
    const cpu: number[] = [];
    const commit: number[] = [];
    let sink = 0;
    for (let round = 0; round < WARMUP + samples; round++) {
      let started = performance.now();
      for (let pass = 0; pass < 4; pass++) sink ^= fnv1a(TEXT, pass);
      const cpuMs = performance.now() - started;
      started = performance.now();
      insert.run(String(sink));
      const commitMs = performance.now() - started;
      if (round < WARMUP) continue;
      cpu.push(cpuMs);
      commit.push(commitMs);
    }
    return { cpu, commit };
  } finally {
    db.close();
    await rm(dir, { recursive: true, force: true });
  }
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
