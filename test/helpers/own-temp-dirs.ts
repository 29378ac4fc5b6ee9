/**
 * Temp dirs a test file makes and removes itself: `ownTempDirs()` at the file's top level registers an
 * afterAll that removes every dir made through it, so the file leaves nothing for temp-sandbox.ts to sweep.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

export interface OwnTempDirs {
  /** A fresh dir under os.tmpdir() named `${prefix}XXXXXX`, removed after the file's tests. */
  (prefix: string): Promise<string>;
  sync(prefix: string): string;
}

export function ownTempDirs(): OwnTempDirs {
  const made: string[] = [];
  afterAll(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 5 })));
  });
  const make = async (prefix: string) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
  make.sync = (prefix: string) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
  return make;
}

/** Removes `dir` (for a dir made outside `ownTempDirs`), ignoring one already gone. */
export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
}
