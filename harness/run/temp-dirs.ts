/**
 * Where a run's cell dirs live: one temp dir per run, `membench-run-<pid>-*` under the system temp
 * folder, removed when the run ends. A run killed with SIGKILL cannot remove its own, so every run
 * first removes those of runs whose process is gone. With --keep-cell-dirs the dir is named
 * `membench-kept-<pid>-*` instead: kept, never reclaimed, and its path is told to the user.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { processAlive } from '../core/processes.js';

const RUN_DIR = /^membench-run-(\d+)-/u;

/** Removes the temp dirs of runs whose process no longer exists; returns what it removed. */
export async function reclaimAbandonedTempDirs(root = os.tmpdir()): Promise<string[]> {
  const entries = await readdir(root).catch(() => [] as string[]);
  const abandoned = entries.filter((name) => {
    const pid = Number(RUN_DIR.exec(name)?.[1] ?? Number.NaN);
    return Number.isInteger(pid) && pid !== process.pid && !processAlive(pid);
  });
  const removed: string[] = [];
  for (const name of abandoned) {
    // Another user's dir, or one removed meanwhile: not ours to worry about.
    if (
      await rm(path.join(root, name), { recursive: true, force: true }).then(
        () => true,
        () => false,
      )
    )
      removed.push(path.join(root, name));
  }
  return removed;
}

/** A fresh temp dir for this run's cell dirs (after reclaiming abandoned ones). */
export async function makeRunTempDir(keep: boolean, root = os.tmpdir()): Promise<string> {
  await reclaimAbandonedTempDirs(root);
  return mkdtemp(path.join(root, `membench-${keep ? 'kept' : 'run'}-${process.pid}-`));
}

/** A cell dir's name prefix: the cell id in file-safe characters, so a kept dir says which cell it holds. */
export function cellDirPrefix(cellId: string): string {
  return `${cellId.replace(/[^\p{L}\p{N}._-]+/gu, '_').slice(0, 80)}-`;
}
