/**
 * Setup file of every test project: the test file's own temp dir as TMPDIR (for it and the processes it
 * starts), removed after the file's tests, so nothing a test makes under os.tmpdir() outlives the run —
 * not a dir a test forgot, nor the cell dirs of a run a test killed. What was left is named on stderr
 * (the file that left it should remove it). A sandbox whose worker never reached its afterAll (`vitest
 * list` collects without running hooks; a failed afterAll stops the ones after it) is removed by the
 * next test file once that worker is gone. tsx's compile cache stays shared: a link to the system one.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { removeTempDirs } from './temp-dir.js';
import { leftInSandbox, reclaimSandboxes, SANDBOX_PREFIX, SYSTEM_TMPDIR_VARIABLE } from './temp-dirs.js';

// A worker that runs several files keeps the system's temp dir from the first.
const system = (process.env[SYSTEM_TMPDIR_VARIABLE] ??= os.tmpdir());
reclaimSandboxes(system);
const testFile = path.basename(expect.getState().testPath ?? 'unknown', '.test.ts');
const sandbox = mkdtempSync(path.join(system, `${SANDBOX_PREFIX}${process.pid}-${testFile.slice(0, 40)}-`));
const tsxCache = `tsx-${process.geteuid?.() ?? os.userInfo().username}`;
mkdirSync(path.join(system, tsxCache), { recursive: true });
symlinkSync(path.join(system, tsxCache), path.join(sandbox, tsxCache));
process.env.TMPDIR = sandbox;

function removeSandbox(): string[] {
  const left = existsSync(sandbox) ? leftInSandbox(readdirSync(sandbox)) : [];
  rmSync(sandbox, { recursive: true, force: true, maxRetries: 5 });
  process.env.TMPDIR = system;
  return left;
}
// One exit hook per process, for the sandbox of the file running then (files may share a worker).
const exitHook = globalThis as { membenchSandboxExit?: () => void };
if (exitHook.membenchSandboxExit) process.off('exit', exitHook.membenchSandboxExit);
exitHook.membenchSandboxExit = removeSandbox;
process.once('exit', removeSandbox);

afterAll(async () => {
  await removeTempDirs();
  const left = removeSandbox();
  if (left.length > 0)
    process.stderr.write(`${testFile}.test.ts left ${left.length} temp entries behind: ${left.join(', ')}\n`);
});
