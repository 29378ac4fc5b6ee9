/**
 * Where a run's cell dirs live: one temp dir per run, `membench-run-<pid>-*` under the system temp
 * folder, removed when the run ends. A run killed with SIGKILL cannot remove its own, so every run
 * first removes those of runs whose process is gone. With --keep-cell-dirs the dir is named
 * `membench-kept-<pid>-*` instead: kept, never reclaimed, and its path is told to the user.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { processAlive } from '../core/processes.js';

const RUN_DIR = /^membench-run-(\d+)-/u;

/** Removes the run temp dirs under `root` whose process id `whose` picks; returns what it removed. */
async function removeRunTempDirs(root: string, whose: (pid: number) => boolean): Promise<string[]> {
  const entries = await readdir(root).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const name of entries) {
    const pid = Number(RUN_DIR.exec(name)?.[1] ?? Number.NaN);
    if (!Number.isInteger(pid) || !whose(pid)) continue;
    // Another user's dir, or one removed meanwhile: not ours to worry about.
    if (
      await rm(path.join(root, name), { recursive: true, force: true, maxRetries: 3 }).then(
        () => true,
        () => false,
      )
    )
      removed.push(path.join(root, name));
  }
  return removed;
}

/** Removes the temp dirs of runs whose process no longer exists; returns what it removed. */
export function reclaimAbandonedTempDirs(root = os.tmpdir()): Promise<string[]> {
  return removeRunTempDirs(root, (pid) => pid !== process.pid && !processAlive(pid));
}

/**
 * Removes the run temp dirs of process `pid` now (a bench stopped by a signal, whose in-process runs
 * cannot end on their own); kept dirs (--keep-cell-dirs) stay.
 */
export function removeRunTempDirsOf(pid: number, root = os.tmpdir()): Promise<string[]> {
  return removeRunTempDirs(root, (owner) => owner === pid);
}

/** Where a run temp dir of this process goes: `membench-run-<pid>-` (reclaimed once the process is gone) or, kept, `membench-kept-<pid>-`. */
const runTempPrefix = (keep: boolean, root: string): string =>
  path.join(root, `membench-${keep ? 'kept' : 'run'}-${process.pid}-`);

/** A fresh temp dir for this run's cell dirs (runBenchmark reclaims abandoned ones first, before it calibrates). */
export async function makeRunTempDir(keep: boolean, root = os.tmpdir()): Promise<string> {
  return mkdtemp(runTempPrefix(keep, root));
}

/** makeRunTempDir, made at once (a dir opened from code that cannot wait: the scenario shelf's first write). */
export function makeRunTempDirSync(root = os.tmpdir()): string {
  return mkdtempSync(runTempPrefix(false, root));
}

/** A cell dir's name prefix: the cell id in file-safe characters, so a kept dir says which cell it holds. */
export function cellDirPrefix(cellId: string): string {
  return `${cellId.replace(/[^\p{L}\p{N}._-]+/gu, '_').slice(0, 80)}-`;
}

/**
 * The idle dirs of ranking-only cells (rank-only.ts) under one run's temp dir. Such a cell keeps
 * its stores in memory (mode `none`), so its dir is left as the cell made it; making and removing a
 * dir per cell cost about a fifth of the median cell of a protocol run (~2.3 ms of ~11 ms, the
 * kernel's work), and up to ~45 ms when the file system's journal was committing another process's
 * fsync. One process runs under one run's temp dir at a time: another root drops the idle list.
 */
let scratch: { root: string; idle: string[] } | undefined;

/** A dir for one ranking-only cell under `root`: an idle one, else a fresh one. Hand it back with returnScratchDir. */
export async function takeScratchDir(root: string): Promise<string> {
  if (scratch?.root !== root) scratch = { root, idle: [] };
  return scratch.idle.pop() ?? mkdtemp(path.join(root, 'ranking-only-'));
}

/**
 * Hands back a dir from takeScratchDir once its cell is over: kept for the next cell when it holds
 * exactly the empty dirs `made` (paths relative to it) that every cell makes, else removed as any
 * cell dir is, so that no cell ever sees what another left.
 */
export async function returnScratchDir(root: string, dir: string, made: readonly string[]): Promise<void> {
  if (scratch?.root === root && leftAsMade(dir, made)) scratch.idle.push(dir);
  else await rm(dir, { recursive: true, force: true });
}

function leftAsMade(dir: string, made: readonly string[]): boolean {
  try {
    const entries = readdirSync(dir, { recursive: true, withFileTypes: true });
    const names = new Set(entries.map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name))));
    return (
      entries.length === made.length &&
      entries.every((entry) => entry.isDirectory()) &&
      made.every((name) => names.has(name))
    );
  } catch {
    return false;
  }
}
