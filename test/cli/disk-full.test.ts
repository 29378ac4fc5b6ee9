/**
 * A full disk in the middle of a run, injected at the file-system layer the atomic write helper
 * uses (no disk is filled): the run stops with a plain message naming the file and how to go on,
 * exits 1, keeps its finished cells, and `--resume` completes it once space is back. `tune` says a
 * full disk in the same words and with the same exit code, injected and on a real tiny tmpfs.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import yargs, { type CommandModule } from 'yargs';
import * as run from '../../harness/cli/run.js';
import * as tune from '../../harness/cli/tune.js';
import type { RunResult } from '../../harness/results/schema.js';
import { writeSyntheticLongMemEval } from '../../harness/bench/synthetic-longmemeval.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';
import { tempDir } from '../helpers/temp-dir.js';
import { tinyTmpfs } from '../helpers/tmpfs.js';
import { membench } from './helpers.js';

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

/** Runs `membench run ARGS` (or another command) in this process (so the injected file system applies); returns its exit code and output. */
async function membenchRun(
  args: string[],
  command: CommandModule = run as unknown as CommandModule,
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stderr = '';
  let stdout = '';
  const write = vi
    .spyOn(process.stderr, 'write')
    .mockImplementation((chunk: string | Uint8Array) => ((stderr += String(chunk)), true));
  const out = vi
    .spyOn(process.stdout, 'write')
    .mockImplementation((chunk: string | Uint8Array) => ((stdout += String(chunk)), true));
  try {
    await yargs([String(command.command), ...args])
      .command(command)
      .strict()
      .parseAsync();
    return { code: Number(process.exitCode ?? 0), stdout, stderr };
  } finally {
    write.mockRestore();
    out.mockRestore();
    process.exitCode = undefined;
  }
}

/** `tune`'s words for a full disk while it writes into `out` (the file it was writing named before them). */
const tuneFullDisk = (out: string): string =>
  `the sweep's reports in ${out} are incomplete (tune keeps no cells to resume): free some space, then run membench tune again with --overwrite`;
/** A sweep whose cheapest value meets the target: exit 0 when its reports are written. */
const SWEEP = ['-s', 'window', '-p', 'k', '--values', '1,2', '--target-recall', '0.1', '-w', '1', '-q'];

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

describe('a full disk under tune', () => {
  it('says the file and how to go on, in the words run uses, and exits 1 as run does (injected)', {
    timeout: 120_000,
  }, async () => {
    const dir = await tempDir('membench-full-tune-');
    const out = path.join(dir, 'sweep');
    const scenario = writeSmallScenario(dir, 'pantry');
    full.matching = /report\.html/u;
    const stopped = await membenchRun([...SWEEP, '-c', scenario, '-o', out], tune as unknown as CommandModule);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toBe(
      `membench: no space left on the device holding ${path.join(out, 'report.html')}: ${tuneFullDisk(out)}\n`,
    );
    // The verdict was printed before the reports were written.
    expect(stopped.stdout).toContain('cheapest setting meeting the target: window(k=');
  });

  // Room for results.json and report.md, not for report.html (its chart code inline is over 200 KiB).
  const tmpfs = tinyTmpfs('128k', 'membench-full-tmpfs-');

  it('on a real full tmpfs: the same words and exit 1; with room again, the sweep reruns with --overwrite', {
    timeout: 120_000,
  }, async (context) => {
    if (!tmpfs.at) context.skip(tmpfs.why);
    const out = path.join(tmpfs.at!, 'sweep');
    const args = ['tune', ...SWEEP, '-c', 'recipes-en', '-o', out];
    const stopped = await membench(args);
    expect(stopped.code).toBe(1);
    const file = /^membench: no space left on the device holding (\S+): /u.exec(stopped.stderr)?.[1];
    expect(path.dirname(file ?? '')).toBe(out);
    expect(stopped.stderr).toBe(`membench: no space left on the device holding ${file}: ${tuneFullDisk(out)}\n`);
    execFileSync('mount', ['-o', 'remount,size=16m', tmpfs.at!], { stdio: 'ignore' });
    const again = await membench([...args, '--overwrite']);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    expect(readdirSync(out)).toEqual(expect.arrayContaining(['results.json', 'report.html']));
  });
});

describe('a full TMPDIR while run --dataset shelves the questions it imports', () => {
  const tmpfs = tinyTmpfs('1m', 'membench-shelf-tmpfs-');

  it('says the shelf file, TMPDIR and what to do, exits 1 and leaves nothing there', {
    timeout: 120_000,
  }, async (context) => {
    if (!tmpfs.at) context.skip(tmpfs.why);
    const file = path.join(await tempDir('membench-shelf-data-'), 'longmemeval.json');
    // ~0.6 MB a question: the third does not fit.
    await writeSyntheticLongMemEval(file, { questions: 3, seed: 3 });
    const out = path.join(await tempDir('membench-shelf-out-'), 'run');
    const stopped = await membench(['run', '--dataset', `longmemeval:${file}`, '-s', 'bm25', '-o', out], {
      env: { TMPDIR: tmpfs.at! },
    });
    expect(stopped.stderr).toMatch(
      new RegExp(
        `^membench: no space left on the device holding ${tmpfs.at}/membench-run-\\d+-\\w+/scenarios\\.bin: membench makes its working dirs in the temp dir \\(TMPDIR=${tmpfs.at}\\): free space there, or set TMPDIR to a disk with room\\n$`,
        'u',
      ),
    );
    expect(stopped.code).toBe(1);
    expect(readdirSync(tmpfs.at!)).toEqual([]);
  });
});
