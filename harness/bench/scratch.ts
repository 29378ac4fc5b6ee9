/**
 * What the bench leaves on the machine while it runs: its temp dirs and the `membench run`
 * processes it starts (the suite, the A/A runs). A bench stopped by SIGINT or SIGTERM ends them
 * (stopBench) instead of leaving a run going on as an orphan and `membench-suite-*` /
 * `membench-bench-*` dirs in the temp dir.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { removeRunTempDirsOf } from '../run/temp-dirs.js';

const dirs = new Set<string>();
const children = new Set<ChildProcess>();

/** A fresh dir under the temp dir named from `prefix` (as mkdtemp), removed by stopBench if the bench is stopped. */
export async function benchTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

/** Registers a process the bench started, so that stopBench ends it; returns it. */
export function benchChild<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** How long a stopped child has to end on SIGTERM (a run removes its own temp dirs) before SIGKILL. */
const CHILD_GRACE_MS = 10_000;

/**
 * Ends what the bench started: its child runs get SIGTERM (SIGKILL after CHILD_GRACE_MS) and are
 * waited for, then its temp dirs and those of the runs it made in this process go.
 */
export async function stopBench(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          const kill = setTimeout(() => child.kill('SIGKILL'), CHILD_GRACE_MS);
          child.once('exit', () => {
            clearTimeout(kill);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  await removeRunTempDirsOf(process.pid);
}
