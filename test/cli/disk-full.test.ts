/**
 * A full disk in the middle of a run, injected at the file-system layer the atomic write helper
 * uses (no disk is filled): the run stops with a plain message naming the file and how to go on,
 * exits 1, keeps its finished cells, and `--resume` completes it once space is back.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import yargs from 'yargs';
import * as run from '../../harness/cli/run.js';
import type { RunResult } from '../../harness/results/schema.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Writes of files whose path matches this fail with ENOSPC, as a full disk makes them. */
const full: { matching?: RegExp } = {};

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  const open = async (...args: Parameters<typeof actual.open>) => {
    const handle = await actual.open(...args);
    if (!full.matching?.test(String(args[0]))) return handle;
    return new Proxy(handle, {
      get(target, key) {
        // The kernel's error for a write names no file: the write helper must add it.
        if (key === 'writeFile')
          return async () =>
            Promise.reject(
              Object.assign(new Error('ENOSPC: no space left on device, write'), {
                code: 'ENOSPC',
                errno: -28,
                syscall: 'write',
              }),
            );
        const value = Reflect.get(target, key) as unknown;
        return typeof value === 'function' ? (value as (...inner: unknown[]) => unknown).bind(target) : value;
      },
    });
  };
  return { ...actual, open, default: { ...actual, open } };
});

/** Runs `membench run ARGS` in this process (so the injected file system applies); returns its exit code and stderr. */
async function membenchRun(args: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const write = vi
    .spyOn(process.stderr, 'write')
    .mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  try {
    await yargs(['run', ...args])
      .command(run)
      .strict()
      .parseAsync();
    return { code: Number(process.exitCode ?? 0), stderr };
  } finally {
    write.mockRestore();
    stdout.mockRestore();
    process.exitCode = undefined;
  }
}

afterEach(() => {
  full.matching = undefined;
});

describe('a full disk', () => {
  it('stops the run with the file, the kept cells and the --resume hint (exit 1), while the cells or the reports are written; --resume finishes it once space is freed', {
    timeout: 120_000,
  }, async () => {
    const dir = await tempDir('membench-full-');
    const out = path.join(dir, 'run');
    const scenario = writeSmallScenario(dir, 'pantry');
    const args = ['-s', 'buffer', '-s', 'window', '-c', scenario, '-w', '1', '-q'];
    const hint = `the finished cells are kept in ${out}: free some space, then continue with membench run --resume ${out}`;
    // The second cell's file cannot be written.
    full.matching = /cells\/\.1\.json\./u;
    const stopped = await membenchRun([...args, '-o', out]);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toBe(
      `membench: no space left on the device holding ${path.join(out, 'cells', '1.json')}: ${hint}\n`,
    );
    expect(readdirSync(path.join(out, 'cells'))).toEqual(['0.json']);
    expect(readdirSync(out)).not.toContain('results.json');

    // Space for the cell, none for the reports: the resumed run stops the same way, its cells kept.
    full.matching = /report\.html/u;
    const reporting = await membenchRun(['--resume', out, '-q']);
    expect(reporting.code).toBe(1);
    expect(reporting.stderr).toContain(
      `membench: no space left on the device holding ${path.join(out, 'report.html')}: ${hint}`,
    );
    expect(readdirSync(path.join(out, 'cells')).sort()).toEqual(['0.json', '1.json']);

    full.matching = undefined;
    const resumed = await membenchRun(['--resume', out, '-q']);
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['results.json', 'report.html']));
    const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as RunResult;
    expect(result.cells.map((cell) => [cell.id, cell.status])).toEqual([
      ['pantry/buffer', 'ok'],
      ['pantry/window(k=2)', 'ok'],
    ]);
  });
});
