/** What the test files' temp dirs hold, and a check that a test file removes what it made there. */
import { readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { processAlive } from '../../harness/core/processes.js';

/** The environment variable that keeps the system's temp dir while TMPDIR points at a test file's own. */
export const SYSTEM_TMPDIR_VARIABLE = 'MEMBENCH_SYSTEM_TMPDIR';

/** A test file's sandbox is `membench-test-<pid of its worker>-<file>-XXXXXX` in the system's temp dir. */
export const SANDBOX_PREFIX = 'membench-test-';

/** Removes the sandboxes in `root` whose worker is gone; returns their names. */
export function reclaimSandboxes(root: string): string[] {
  const abandoned = readdirSync(root).filter((name) => {
    const pid = Number(new RegExp(`^${SANDBOX_PREFIX}(\\d+)-`, 'u').exec(name)?.[1] ?? Number.NaN);
    return Number.isInteger(pid) && pid !== process.pid && !processAlive(pid);
  });
  return abandoned.filter((name) => {
    try {
      rmSync(path.join(root, name), { recursive: true, force: true });
      return true;
    } catch {
      return false; // another worker removing it too, or a mount a killed test left: not worth failing a test file for
    }
  });
}

/** The entries of a sandbox that a test left, leaving out the link to tsx's shared compile cache. */
export function leftInSandbox(entries: readonly string[]): string[] {
  return entries.filter((name) => !/^tsx-/u.test(name)).sort();
}

/**
 * Fails the test file when, after all its tests, its temp dir holds entries that were not there
 * before them: what each test made under os.tmpdir() must be removed by the test (or its hooks).
 */
export function expectTempDirsRemoved(): void {
  let before = new Set<string>();
  beforeAll(() => {
    before = new Set(readdirSync(os.tmpdir()));
  });
  afterAll(() => {
    expect(leftInSandbox(readdirSync(os.tmpdir()).filter((name) => !before.has(name)))).toEqual([]);
  });
}
