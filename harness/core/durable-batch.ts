/**
 * One fsync per file per batch instead of one per write, for replayed dataset sessions. Inside
 * `durableBatch(work)` this process's durable writes still happen in order (SQLite commits of
 * `sync` stores, atomic file writes and their renames), so a process crash loses none of them; only
 * their fsyncs wait, and when the batch ends every file and directory they touched is fsynced once
 * before the batch resolves. Nothing is acknowledged inside a batch (the runner batches only runs
 * of scripted turns: no `remember`, no tool effect, no model call), so "acknowledged is durable"
 * holds at its end exactly as it does per write outside one.
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** What a store does when a batch starts and ends (sqlite.ts relaxes and restores its databases' fsyncs). */
export interface BatchHooks {
  start(): void;
  /** Returns the files to fsync now. */
  end(): Iterable<string>;
}

const hooks: BatchHooks[] = [];
const deferred = new Set<string>();
let depth = 0;
/** fsyncs issued at the end of batches, for tests and the bench (they cannot use a clock). */
export const batchStats = { batches: 0, fsyncs: 0 };

/** Registers a store's hooks (once, at module load). */
export function onDurableBatch(hook: BatchHooks): void {
  hooks.push(hook);
}

/** True inside `durableBatch`: a durable write may hand its fsync to `deferFsync`. */
export function inDurableBatch(): boolean {
  return depth > 0;
}

/** A file or directory to fsync when the current batch ends. */
export function deferFsync(target: string): void {
  deferred.add(target);
}

/** fsyncs a file or directory by path; a file already gone (renamed over, removed) needs none. */
export function fsyncPath(target: string): boolean {
  let fd: number;
  try {
    fd = openSync(target, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Runs `work` with fsyncs deferred, then fsyncs what it touched. Resolves with the value and the
 * ms the closing fsyncs took (the batch's share of durable-commit time). Nested calls join the outer batch.
 */
export async function durableBatch<T>(work: () => Promise<T>): Promise<{ value: T; syncMs: number }> {
  if (depth > 0) return { value: await work(), syncMs: 0 };
  depth++;
  for (const hook of hooks) hook.start();
  let value: T;
  let syncMs = 0;
  try {
    value = await work();
  } finally {
    depth--;
    // Also after a failed step: the stores go back to one fsync per commit, and what was written is made durable.
    const started = performance.now();
    const targets = new Set<string>();
    for (const hook of hooks) for (const file of hook.end()) targets.add(file);
    for (const target of deferred) targets.add(target);
    deferred.clear();
    for (const target of targets) if (fsyncPath(target)) batchStats.fsyncs++;
    batchStats.batches++;
    syncMs = performance.now() - started;
  }
  return { value, syncMs };
}
