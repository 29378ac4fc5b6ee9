/**
 * Storage failures in words that name the path and what to do: SQLite's own errors (which name
 * no file) raised for real, a store path that is a directory, and an output dir whose parent is
 * on a read-only file system (a real read-only tmpfs when this machine lets the test mount one).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { namingFile, openDatabase, storageProblem } from '../../../harness/core/sqlite.js';
import { ensureOutDir } from '../../../harness/run/out-lock.js';
import { thrown } from '../../helpers/thrown.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'membench-storage-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('SQLite storage errors', () => {
  it('"database or disk is full" names the store and, under TMPDIR, says how to move the cells there', () => {
    const file = path.join(dir, 'full.sqlite');
    const db = new Database(file);
    // A page limit makes SQLite raise its real SQLITE_FULL without filling a disk.
    db.exec('CREATE TABLE t (x TEXT)');
    db.pragma('max_page_count = 3');
    const full = thrown(() => namingFile(file, () => db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(100_000))));
    db.close();
    expect(full).toBeInstanceOf(MembenchError);
    expect((full as MembenchError).exitCode).toBe(1);
    expect((full as Error).message).toBe(
      `no space left for ${file} (database or disk is full): it is under TMPDIR (${path.resolve(os.tmpdir())}), where membench keeps the cells' stores: free space there, or set TMPDIR to a disk with room, then rerun the failed cells with membench run --resume DIR (it keeps the finished ones)`,
    );
    expect(
      storageProblem(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }), '/data/out/cells'),
    ).toBe(
      'disk I/O error on /data/out/cells (disk I/O error): a full or failing disk: free space there, or write --out elsewhere, then run again (--resume DIR finishes an interrupted run)',
    );
    expect(storageProblem(new Error('plain'), file)).toBeUndefined();
  });

  it('a store path that is a directory says so with its path, not "unable to open database file"', () => {
    const store = path.join(dir, 'history.sqlite');
    mkdirSync(store);
    const error = thrown(() => openDatabase(store, 'sync'));
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as Error).message).toBe(
      `${store} is a directory, not a SQLite store file: move it away or choose another path`,
    );
  });
});

/** A read-only tmpfs at a fresh dir, or why there is none (mounting needs root and a permitting container). */
function readOnlyMount(): { at?: string; why?: string } {
  const at = path.join(dir, 'ro');
  mkdirSync(at);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', at], { stdio: 'ignore' });
    return { at };
  } catch {
    return { why: 'mounting a read-only tmpfs is not allowed here' };
  }
}

describe('an output dir under a read-only parent', () => {
  // Mounted when the tests run, never while they are only collected (`vitest list` runs no afterAll).
  let mount: { at?: string; why?: string } = {};
  beforeAll(() => {
    mount = readOnlyMount();
  });
  afterAll(() => {
    if (mount.at) execFileSync('umount', [mount.at]);
  });

  it('says read-only with the path, not "no such file or directory" (on a real read-only tmpfs)', (context) => {
    if (!mount.at) context.skip(mount.why);
    const out = path.join(mount.at!, 'runs', 'latest');
    const error = thrown(() => ensureOutDir(out));
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as MembenchError).exitCode).toBe(2);
    expect((error as Error).message).toBe(
      `--out ${out}: cannot create it (read-only file system): choose another --out`,
    );
  });
});
