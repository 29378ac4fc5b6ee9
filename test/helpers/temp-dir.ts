/**
 * A temp dir for a test file, removed after the file's tests: what a test makes under os.tmpdir()
 * is its own to remove (test/helpers/temp-sandbox.ts removes these, and names what a file left otherwise).
 */
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

/**
 * Removes the dirs made so far; called after each test file by test/helpers/temp-sandbox.ts (a hook
 * registered here would run for the first file only where files share this module: the unit project).
 */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true, maxRetries: 5 })));
}

/** A new dir under os.tmpdir() named from `prefix` (as mkdtemp), removed after the test file. */
export async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** tempDir, synchronous (for a file's top level or a synchronous helper). */
export function tempDirSync(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}
