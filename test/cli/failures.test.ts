/**
 * Failing loudly at the command line: a hung strategy, a strategy that exits, two runs on one
 * output dir, SIGTERM, and an output dir that is not a directory. The real CLI, real processes.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../harness/results/schema.js';
import { MANIFEST_FILE } from '../../harness/core/manifest.js';
import { LOCK_FILE } from '../../harness/run/out-lock.js';
import { membench, startMembench, until } from './helpers.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';
import { tempDir as newTempDir } from '../helpers/temp-dir.js';

const tempDir = () => newTempDir('membench-failures-');
/** Two small scenarios (test/helpers/small-scenario.ts): the checks here need a run, not a long conversation. */
const scenarioDir = await tempDir();
const PANTRY = writeSmallScenario(scenarioDir, 'pantry');
const CELLAR = writeSmallScenario(scenarioDir, 'cellar', 'bottom shelf');
const HANGS = './fixtures/strategies/hangs.mjs';
const EXITS_ON_SAVE = './fixtures/strategies/exits-on-save.mjs';

describe('a hung or dying strategy', () => {
  it('under -w 1: the hung cell is stopped at --cell-timeout and named with its phase, the run exits 1 and writes every result', async () => {
    const out = path.join(await tempDir(), 'run');
    const result = await membench([
      'run',
      '-s',
      HANGS,
      '-s',
      'buffer',
      '-c',
      PANTRY,
      '-w',
      '1',
      '--cell-timeout',
      '1',
      '-o',
      out,
      '-q',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'FAILED pantry/hangs: timed out after 1 s in open: the cell was stopped (a strategy that never finishes open()?); raise --cell-timeout if it needs longer',
    );
    const written = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as RunResult;
    expect(
      written.cells.map((cell) => [cell.id, cell.status, cell.status === 'error' ? cell.phase : undefined]),
    ).toEqual([
      ['pantry/hangs', 'error', 'open'],
      ['pantry/buffer', 'ok', undefined],
    ]);
  });

  it('under -w 1: a strategy calling process.exit(3) fails its cell with the exit code, not membench', async () => {
    const dir = await tempDir();
    const scenario = path.join(dir, 'exit.yaml');
    writeFileSync(
      scenario,
      'name: exit\nsteps:\n  - user: please EXIT now\n    assistant: ok\n  - probe: what did I say?\n    expect: ["EXIT"]\n',
    );
    const result = await membench([
      'run',
      '-s',
      EXITS_ON_SAVE,
      '-c',
      scenario,
      '-w',
      '1',
      '-o',
      path.join(dir, 'run'),
      '-q',
    ]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'FAILED exit/exits-on-save: the pool worker running this cell exited unexpectedly in step 0 (user) (exit code 3, signal null)',
    );
    expect(existsSync(path.join(dir, 'run', 'results.json'))).toBe(true);
  });
});

describe('one run per output dir', () => {
  it('refuses a second run on a dir in use (exit 2, naming the pid), removes the replaced results at once with --overwrite, exits 130 on SIGTERM and takes over the lock of a dead run', {
    timeout: 120_000,
  }, async () => {
    const out = path.join(await tempDir(), 'run');
    // A lock left by a process that is gone (kill -9) is taken over: the run that does so is the one
    // whose results the hanging run below replaces.
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.on('exit', resolve));
    mkdirSync(out);
    writeFileSync(
      path.join(out, LOCK_FILE),
      JSON.stringify({ pid: dead.pid, host: os.hostname(), command: 'membench run', started: 'earlier' }),
    );
    const fresh = await membench(['run', '-s', 'buffer', '-c', PANTRY, '-w', '1', '-o', out, '-q']);
    expect(fresh.stderr).toBe('');
    expect(fresh.code).toBe(0);
    expect(existsSync(path.join(out, LOCK_FILE))).toBe(false);
    expect(existsSync(path.join(out, 'results.json'))).toBe(true);

    // A run that hangs (default time limit) holds the dir.
    const run = startMembench(['run', '-s', HANGS, '-c', PANTRY, '-w', '1', '-o', out, '--overwrite', '-q']);
    // The earlier run's results go right after the new plan is written (the event waited on): nothing stale looks current.
    await until(() => existsSync(path.join(out, 'plan.json')) && !existsSync(path.join(out, 'results.json')), run);
    expect(run.hasExited()).toBe(false);
    expect(existsSync(path.join(out, 'results.json'))).toBe(false);
    const [compared, second] = await Promise.all([
      membench(['compare', 'baselines/offline.json', out]),
      membench(['run', '-s', 'buffer', '-c', PANTRY, '-o', out, '--overwrite', '-q']),
    ]);
    expect(compared.code).toBe(2);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(
      `membench: --out ${out} is in use by another run: membench run (pid ${run.child.pid}, started `,
    );
    expect(second.stderr).toContain(`if that process is not membench, remove ${path.join(out, LOCK_FILE)}`);
    expect(existsSync(path.join(out, 'plan.json'))).toBe(true);

    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(130);
    expect(run.stderr()).toContain(`interrupted: resume with membench run --resume ${out}`);
    expect(existsSync(path.join(out, LOCK_FILE))).toBe(false);
  });
});

describe('output dirs that are not directories', () => {
  it.each([
    [
      'a file',
      (dir: string) => path.join(dir, 'file'),
      'a file of that name exists, not a directory: choose another --out',
    ],
    [
      'a path under a file',
      (dir: string) => path.join(dir, 'file', 'run'),
      'a part of the path is a file, not a directory: choose another --out',
    ],
    [
      'a symbolic link to nothing',
      (dir: string) => path.join(dir, 'dangling'),
      'a symbolic link that points at nothing, not a directory: choose another --out',
    ],
  ])('--out naming %s is refused in plain words (exit 2)', async (_what, outOf, message) => {
    const dir = await tempDir();
    writeFileSync(path.join(dir, 'file'), 'not a dir');
    symlinkSync(path.join(dir, 'gone'), path.join(dir, 'dangling'));
    const out = outOf(dir);
    const result = await membench(['run', '-s', 'buffer', '-c', PANTRY, '-o', out, '-q']);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`membench: --out ${out}: ${message}\n`);
    expect(readFileSync(path.join(dir, 'file'), 'utf8')).toBe('not a dir');
  });
});

describe('--overwrite removes only what membench wrote', () => {
  it('run and report --overwrite keep the files of the user in the dir and in charts/, and drop the earlier run files', {
    timeout: 120_000,
  }, async () => {
    const out = path.join(await newTempDir('membench-failures-'), 'run');
    expect((await membench(['run', '-s', 'buffer', '-c', PANTRY, '-c', CELLAR, '-w', '1', '-o', out, '-q'])).code).toBe(
      0,
    );
    const manifest = JSON.parse(readFileSync(path.join(out, MANIFEST_FILE), 'utf8')) as {
      command: string;
      files: string[];
    };
    expect(manifest.command).toBe('membench run');
    expect(manifest.files).toEqual(
      expect.arrayContaining(['results.json', 'report.html', path.join('charts', 'tokens-cellar.png')]),
    );
    const mine = ['notes.md', path.join('charts', 'my-notes.txt'), path.join('charts', 'sub', 'x.txt')];
    mkdirSync(path.join(out, 'charts', 'sub'));
    for (const name of mine) writeFileSync(path.join(out, name), `mine: ${name}\n`);

    // One scenario fewer: its chart was membench's and goes; the files of the user stay.
    expect(
      (await membench(['run', '-s', 'buffer', '-c', PANTRY, '-w', '1', '-o', out, '--overwrite', '-q'])).code,
    ).toBe(0);
    for (const name of mine) expect(readFileSync(path.join(out, name), 'utf8')).toBe(`mine: ${name}\n`);
    expect(existsSync(path.join(out, 'charts', 'tokens-cellar.png'))).toBe(false);
    expect(existsSync(path.join(out, 'charts', 'tokens-pantry.png'))).toBe(true);

    const rendered = path.join(path.dirname(out), 'rendered');
    expect((await membench(['report', path.join(out, 'results.json'), '-o', rendered])).code).toBe(0);
    mkdirSync(path.join(rendered, 'charts', 'sub'), { recursive: true });
    for (const name of mine) writeFileSync(path.join(rendered, name), `mine: ${name}\n`);
    expect((await membench(['report', path.join(out, 'results.json'), '-o', rendered, '--overwrite'])).code).toBe(0);
    for (const name of mine) expect(readFileSync(path.join(rendered, name), 'utf8')).toBe(`mine: ${name}\n`);
    expect(JSON.parse(readFileSync(path.join(rendered, MANIFEST_FILE), 'utf8'))).toMatchObject({
      command: 'membench report',
    });
  });
});
