/** What the test files' temp dirs hold, and a check that a test file removes what it made there. */
import { readdirSync } from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, expect } from 'vitest';

/** The environment variable that keeps the system's temp dir while TMPDIR points at a test file's own. */
export const SYSTEM_TMPDIR_VARIABLE = 'MEMBENCH_SYSTEM_TMPDIR';

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
