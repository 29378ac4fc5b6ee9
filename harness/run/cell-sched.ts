/**
 * `MEMBENCH_CELL_SCHED=FILE` (a developer's switch, docs/development.md): where each cell's time
 * went, one JSON line per cell appended to FILE by the process that ran it. A cell's wall time
 * (`durationMs`) on a busy machine holds time its thread spent waiting for a CPU behind other
 * processes, and its CPU (`cpuMs`, the whole process) holds V8's helper threads (concurrent marking,
 * optimising compilers): neither says whether the cell itself was slow. The kernel's scheduler
 * statistics of the cell's own thread (`/proc/thread-self/schedstat`: time on a CPU, time runnable
 * but waiting for one) do, and V8's pauses on that thread say how much of it was garbage collection.
 * Linux only; elsewhere (no such file) the switch writes nothing.
 */
import { accessSync, appendFileSync, constants as fsConstants, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { MembenchError } from '../core/errors.js';
import { PerformanceObserver, constants, performance, type PerformanceEntry } from 'node:perf_hooks';

/** One cell's line. Times in ms. */
export interface CellSchedule {
  id: string;
  /** The cell's wall time (its result's durationMs). */
  wallMs: number;
  /** The process's CPU over the cell, helper threads included (its result's cpuMs). */
  cpuMs: number;
  /** The cell's own thread on a CPU. */
  threadMs: number;
  /** The cell's own thread runnable but waiting for a CPU. */
  waitMs: number;
  /** V8's collection pauses on the thread during the cell, by kind (`minor`, `major`, …), and their sum. */
  gc: Record<string, number>;
  gcMs: number;
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};

/**
 * Refuses a MEMBENCH_CELL_SCHED the cells could not append to (a missing directory, a directory, no
 * write permission), once before the run, naming the variable: else every cell fails on it.
 */
export function checkCellScheduleFile(file = process.env.MEMBENCH_CELL_SCHED): void {
  if (!file) return;
  const refuse = (why: string): never => {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `MEMBENCH_CELL_SCHED=${file}: ${why}: each cell appends a line to this file; give a file in a writable directory, or unset the variable`,
    );
  };
  const info = statOf(file);
  if (info?.isDirectory()) refuse('is a directory');
  const dir = path.dirname(path.resolve(file));
  if (!info) {
    const dirInfo = statOf(dir);
    if (!dirInfo) refuse(`its directory ${dir} does not exist`);
    if (!dirInfo!.isDirectory()) refuse(`${dir} is not a directory`);
  }
  try {
    accessSync(info ? file : dir, fsConstants.W_OK);
  } catch {
    refuse(info ? 'not writable' : `its directory ${dir} is not writable`);
  }
}

/** The file's stat, or undefined when there is none (or a part of its path is not a directory). */
function statOf(file: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

/** The lines a run wrote to `file` (none when it wrote nothing: the switch writes only where the kernel says). */
export function readCellSchedules(file: string): CellSchedule[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as CellSchedule);
}

/** The calling thread's time on a CPU and waiting for one (ns), or undefined where the kernel does not say. */
function threadSchedule(): [number, number] | undefined {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return run === undefined || wait === undefined || Number.isNaN(run + wait) ? undefined : [run, wait];
  } catch {
    return undefined;
  }
}

/** Collection pauses seen since the observer started: [start, duration, kind]. */
let pauses: [number, number, string][] | undefined;

function observePauses(): [number, number, string][] {
  if (pauses) return pauses;
  const seen: [number, number, string][] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      seen.push([entry.startTime, entry.duration, GC_KINDS[kind ?? -1] ?? 'other']);
    }
  }).observe({ entryTypes: ['gc'] });
  pauses = seen;
  return seen;
}

/**
 * Starts timing a cell where the switch is on (else returns undefined): the returned function,
 * called with the cell's id, wall time and CPU once it is over, appends the cell's line.
 */
export function startCellSchedule(
  file = process.env.MEMBENCH_CELL_SCHED,
): ((id: string, wallMs: number, cpuMs: number) => Promise<void>) | undefined {
  if (!file) return undefined;
  const before = threadSchedule();
  if (!before) return undefined;
  const seen = observePauses();
  const started = performance.now();
  return async (id, wallMs, cpuMs) => {
    const after = threadSchedule();
    // The observer hears of a pause later (Node queues the entry, then the observer's call, each
    // for a later turn of the event loop): the last ones are in once the loop went round twice.
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 0));
    const gc: Record<string, number> = {};
    let gcMs = 0;
    for (const [at, duration, kind] of seen) {
      if (at < started) continue;
      gc[kind] = (gc[kind] ?? 0) + duration;
      gcMs += duration;
    }
    seen.length = 0; // a process runs one cell at a time: its pauses are read once, and the list does not grow over a run
    if (!after) return;
    const line: CellSchedule = {
      id,
      wallMs,
      cpuMs,
      threadMs: (after[0] - before[0]) / 1e6,
      waitMs: (after[1] - before[1]) / 1e6,
      gc,
      gcMs,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  };
}
