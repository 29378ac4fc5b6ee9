/**
 * A real tmpfs of a given size for a test file, to fill a disk for real: mounted before the file's
 * tests (never while they are only collected: `vitest list` runs no hooks) where the process may
 * mount one (root in a permitting container), unmounted after them; elsewhere `at` stays unset and
 * `why` says why, for `context.skip`. Unmounted lazily (`umount -l`): a file a failing test left open
 * there cannot keep the mount behind.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { tempDir } from './temp-dir.js';

export interface Tmpfs {
  at?: string;
  why?: string;
}

export function tinyTmpfs(size: string, prefix: string): Tmpfs {
  const tmpfs: Tmpfs = {};
  beforeAll(async () => {
    const at = path.join(await tempDir(prefix), 'disk');
    mkdirSync(at);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', at], { stdio: 'ignore' });
      tmpfs.at = at;
    } catch {
      tmpfs.why = 'mounting a tmpfs is not allowed here (it needs root and a permitting container)';
    }
  });
  afterAll(() => {
    if (tmpfs.at) execFileSync('umount', ['-l', tmpfs.at]);
  });
  return tmpfs;
}
