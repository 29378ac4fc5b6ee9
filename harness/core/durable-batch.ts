/**
 * One commit per session and one fsync per file per batch instead of one of each per write, for
 * replayed dataset sessions. Inside `durableBatch(work)` a `sync` SQLite store writes a replayed
 * session's messages in one transaction, committed when the session ends (`sessionEnded()`), when
 * the store closes, and when the batch ends; atomic file writes and their renames happen in order.
 * Only their fsyncs wait: when the batch ends every file and directory they touched is fsynced once
 * before the batch resolves. A process crash inside a batch loses at most the session in progress
 * (ended sessions are committed, in the OS's page cache). Nothing is acknowledged inside a batch
 * (the runner batches only runs of scripted turns: no `remember`, no tool effect, no model call),
 * so "acknowledged is durable" holds at its end exactly as it does per write outside one.
 */
import { closeSync, fsyncSync, openSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

/** What a store does when a batch starts and ends (sqlite.ts relaxes and restores its databases' fsyncs). */
export interface BatchHooks {
  start(): void;
  /** A replayed session ended inside the batch: commit what it wrote. */
  sessionEnded?(): void;
  /** Returns the files to fsync now. */
  end(): Iterable<string>;
}

/** The hooks of the stores that have taken part in a batch (a Set: registering twice is registering once). */
const hooks = new Set<BatchHooks>();
const deferred = new Set<string>();
let depth = 0;
/** fsyncs issued at the end of batches, and the session boundaries inside them (a commit per store each), for tests and the bench (they cannot use a clock). */
export const batchStats = { batches: 0, fsyncs: 0, sessions: 0 };

/**
 * Registers a store's hooks, on its first use (the first `sync` database opened, the first derived
 * file held): importing a store module registers nothing. A hook registered inside a batch is called
 * at its session boundaries and its end; `start` only from the next batch on (the store has joined
 * the running batch itself).
 */
export function onDurableBatch(hook: BatchHooks): void {
  hooks.add(hook);
}

/** How many stores' hooks are registered: none until a store is first used (tests check that importing registers nothing). */
export function registeredBatchHooks(): number {
  return hooks.size;
}

/** True inside `durableBatch`: a durable write may hand its fsync to `deferFsync`. */
export function inDurableBatch(): boolean {
  return depth > 0;
}

/** Called by the runner at each session boundary inside a batch: the stores commit the ended session's writes. */
export function sessionEnded(): void {
  if (depth === 0) return;
  batchStats.sessions++;
  for (const hook of hooks) hook.sessionEnded?.();
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
  let value: T;
  let syncMs = 0;
  try {
    // Inside the try: a hook that fails to start must not leave this process in a batch for good.
    for (const hook of hooks) hook.start();
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
