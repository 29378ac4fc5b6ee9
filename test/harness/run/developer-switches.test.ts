/**
 * The developer switches a run's cells and child processes read (MEMBENCH_CELL_SCHED,
 * MEMBENCH_CPU_PROF; docs/development.md): a value they could not use is refused once, before the
 * run, naming the variable and the path, where each cell failed on it or each process printed
 * Node's ENOTDIR line.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { checkProfileDir } from '../../../harness/process/worker.js';
import { checkCellScheduleFile } from '../../../harness/run/cell-sched.js';
import { runBenchmark } from '../../../harness/run/runner.js';
import { tempDir } from '../../helpers/temp-dir.js';

afterEach(() => {
  delete process.env.MEMBENCH_CELL_SCHED;
  delete process.env.MEMBENCH_CPU_PROF;
});

function refusal(check: () => void): string {
  try {
    check();
  } catch (error) {
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as MembenchError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error('accepted');
}

describe('MEMBENCH_CELL_SCHED', () => {
  it('is refused before the run when the cells could not append to it', async () => {
    const dir = await tempDir('membench-switches-');
    const missing = path.join(dir, 'nonexistent', 'x');
    process.env.MEMBENCH_CELL_SCHED = missing;
    const run = await runBenchmark({ scenarios: ['recipes-en'], strategies: ['buffer'] }).catch(
      (error: unknown) => error,
    );
    expect(run).toBeInstanceOf(MembenchError);
    expect((run as MembenchError).exitCode).toBe(2);
    expect((run as Error).message).toBe(
      `MEMBENCH_CELL_SCHED=${missing}: its directory ${path.dirname(missing)} does not exist: each cell appends a line to this file; give a file in a writable directory, or unset the variable`,
    );
    expect(refusal(() => checkCellScheduleFile(dir))).toMatch(/^MEMBENCH_CELL_SCHED=.*: is a directory: /u);
    const file = path.join(dir, 'a-file');
    await writeFile(file, '');
    expect(refusal(() => checkCellScheduleFile(path.join(file, 'x')))).toMatch(/: .*a-file is not a directory: /u);
  });

  it('is accepted when unset, for a new file in a directory and for an existing file', async () => {
    const dir = await tempDir('membench-switches-');
    expect(() => checkCellScheduleFile(undefined)).not.toThrow();
    expect(() => checkCellScheduleFile('')).not.toThrow();
    expect(() => checkCellScheduleFile(path.join(dir, 'new.jsonl'))).not.toThrow();
    await writeFile(path.join(dir, 'old.jsonl'), '');
    expect(() => checkCellScheduleFile(path.join(dir, 'old.jsonl'))).not.toThrow();
  });

  it.skipIf(process.getuid?.() === 0)('is refused when its directory is not writable', async () => {
    const dir = await tempDir('membench-switches-');
    const locked = path.join(dir, 'locked');
    await mkdir(locked);
    await chmod(locked, 0o500);
    try {
      expect(refusal(() => checkCellScheduleFile(path.join(locked, 'x')))).toMatch(/is not writable: /u);
    } finally {
      await chmod(locked, 0o700);
    }
  });
});

describe('MEMBENCH_CPU_PROF', () => {
  it('is refused before the run when it names a regular file', async () => {
    const dir = await tempDir('membench-switches-');
    const file = path.join(dir, 'profile');
    await writeFile(file, '');
    process.env.MEMBENCH_CPU_PROF = file;
    const run = await runBenchmark({ scenarios: ['recipes-en'], strategies: ['buffer'] }).catch(
      (error: unknown) => error,
    );
    expect(run).toBeInstanceOf(MembenchError);
    expect((run as Error).message).toBe(
      `MEMBENCH_CPU_PROF=${file}: not a directory (or a part of the path is a file): every forked process writes its CPU profile into this directory; give a directory, or unset the variable`,
    );
    expect(refusal(() => checkProfileDir(path.join(file, 'sub')))).toMatch(/^MEMBENCH_CPU_PROF=.*: not a directory/u);
  });

  it('makes a directory that is not there yet, as each child would', async () => {
    const dir = await tempDir('membench-switches-');
    expect(() => checkProfileDir(path.join(dir, 'profiles', 'run'))).not.toThrow();
    expect(() => checkProfileDir(path.join(dir, 'profiles', 'run'))).not.toThrow();
    expect(() => checkProfileDir(undefined)).not.toThrow();
  });
});
