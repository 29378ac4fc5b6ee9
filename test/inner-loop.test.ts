/**
 * The test setup itself: the CLI project refuses a stale `dist/`, each project holds the files its
 * name promises (a `unit` file starts no process and reads no build), and a test file's temp dir is its own.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DIST_TESTS, FORKING_TESTS } from '../vitest.config.js';
import { staleDist, whileLocked } from './helpers/fresh-dist.js';
import { reclaimSandboxes } from './helpers/temp-dirs.js';

const ROOT = path.resolve(import.meta.dirname, '..');

describe('staleDist', () => {
  /** A repository with one source and a built dist, the source written `sourceAge` seconds after the build. */
  function tree(sourceAge: number): string {
    const root = path.join(os.tmpdir(), `tree-${sourceAge}`);
    const built = new Date('2026-01-01T00:00:00Z');
    for (const file of [
      'dist/index.js',
      'dist/cli/main.mjs',
      'dist/harness/process/agent-entry.bundle.cjs',
      'harness/core/a.ts',
    ]) {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), '');
      const at = file.startsWith('dist/') ? built : new Date(built.getTime() + sourceAge * 1000);
      utimesSync(path.join(root, file), at, at);
    }
    for (const dir of ['strategies', 'reports']) mkdirSync(path.join(root, dir), { recursive: true });
    return root;
  }

  it('passes a build newer than every source, names the newer source otherwise', () => {
    expect(staleDist(tree(-60))).toBeUndefined();
    expect(staleDist(tree(60))).toBe(`dist/ is older than ${path.join('harness', 'core', 'a.ts')}`);
    for (const age of [-60, 60]) rmSync(path.join(os.tmpdir(), `tree-${age}`), { recursive: true });
  });

  it('names a missing entry (a build that stopped half-way)', () => {
    const root = tree(-60);
    rmSync(path.join(root, 'dist/cli'), { recursive: true });
    expect(staleDist(root)).toBe('dist/cli/main.mjs is missing');
    rmSync(root, { recursive: true });
  });
});

describe('the build lock of the CLI project', () => {
  const lock = () => path.join(os.tmpdir(), 'locks', 'dist-build.lock');

  it('waits while a live run holds it, builds once it is gone, and leaves no lock', () => {
    mkdirSync(path.dirname(lock()), { recursive: true });
    writeFileSync(lock(), String(process.ppid)); // a live process: the other run
    let pauses = 0;
    const built = whileLocked(
      lock(),
      () => 'built',
      () => {
        pauses += 1;
        rmSync(lock()); // the other run's build ends
      },
    );
    expect([built, pauses]).toEqual(['built', 1]);
    expect(readdirSync(path.dirname(lock()))).toEqual([]);
    rmSync(path.dirname(lock()), { recursive: true });
  });

  it('takes over the lock of a run that is gone, and releases it when the build throws', () => {
    mkdirSync(path.dirname(lock()), { recursive: true });
    writeFileSync(lock(), '4194305'); // above Linux's largest pid: no process has it
    const never = (): void => {
      throw new Error('waited on a run that is gone');
    };
    expect(() =>
      whileLocked(
        lock(),
        () => {
          expect(readFileSync(lock(), 'utf8')).toBe(String(process.pid));
          throw new Error('build failed');
        },
        never,
      ),
    ).toThrow('build failed');
    expect(readdirSync(path.dirname(lock()))).toEqual([]);
    rmSync(path.dirname(lock()), { recursive: true });
  });
});

describe('vitest projects', () => {
  const testFiles = (dir: string): string[] =>
    readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? testFiles(path.join(dir, entry.name))
        : entry.name.endsWith('.test.ts')
          ? [path.join(dir, entry.name)]
          : [],
    );
  const all = testFiles('test').filter((file) => file !== 'test/inner-loop.test.ts');
  const inCli = (file: string): boolean => /^test\/(?:cli|docs)\//u.test(file) || DIST_TESTS.includes(file);
  const inProcess = (file: string): boolean =>
    !inCli(file) && (/^test\/harness\/(?:process|run|bench)\//u.test(file) || FORKING_TESTS.includes(file));

  it('run every file that reads dist/ or starts the CLI in `cli`', () => {
    const readsBuild = /\bmembench\(|startMembench\(|bin\/membench|['"`/]dist\/|cli-reference\.mjs/u;
    expect(all.filter((file) => readsBuild.test(readFileSync(path.join(ROOT, file), 'utf8')) && !inCli(file))).toEqual(
      [],
    );
  });

  it('keep `unit` to files that start no process', () => {
    const forks =
      /\b(?:fork|spawn|spawnSync|execFile|execFileSync|execSync|launchPersistentContext|runCellInProcesses)\(|workers: [2-9]/u;
    const unit = all.filter((file) => !inCli(file) && !inProcess(file));
    expect(unit.length).toBeGreaterThan(40);
    expect(unit.filter((file) => forks.test(readFileSync(path.join(ROOT, file), 'utf8')))).toEqual([]);
  });

  it('name only files that exist', () => {
    expect([...DIST_TESTS, ...FORKING_TESTS].filter((file) => !all.includes(file))).toEqual([]);
  });
});

describe('the temp sandbox', () => {
  it('gives this file a temp dir of its own, which the processes it starts inherit', () => {
    expect(path.basename(os.tmpdir())).toMatch(new RegExp(`^membench-test-${process.pid}-inner-loop-`, 'u'));
    expect(process.env.TMPDIR).toBe(os.tmpdir());
  });

  it("reclaims the sandboxes of workers that are gone, never a live worker's", () => {
    const root = path.join(os.tmpdir(), 'system');
    // Above Linux's largest pid (2^22): no process has it.
    const names = ['membench-test-4194305-gone-abc123', `membench-test-${process.pid}-live-def456`, 'membench-run-1-x'];
    for (const name of names) mkdirSync(path.join(root, name, 'cell'), { recursive: true });
    expect(reclaimSandboxes(root)).toEqual([names[0]]);
    expect(readdirSync(root).sort()).toEqual(names.slice(1).sort());
    rmSync(root, { recursive: true });
  });
});
