/** Counting durable writes from the WAL and the fsync counter, without a clock. */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DurableWriteCounter } from '../../../harness/core/commit-count.js';
import { writeFileAtomic } from '../../../harness/core/fs.js';
import { openDatabase } from '../../../harness/core/sqlite.js';

describe('DurableWriteCounter', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-commits-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('counts one commit per autocommit write and per transaction, none for reads or writes that change nothing', () => {
    const db = openDatabase(path.join(dir, 'a.sqlite'), 'sync');
    db.exec('CREATE TABLE t (x TEXT)');
    const counter = new DurableWriteCounter(dir);
    const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
    for (let i = 0; i < 5; i++) insert.run(`row ${i}`);
    expect(counter.take().commits).toBe(5);
    db.transaction(() => {
      for (let i = 0; i < 50; i++) insert.run(`batched ${i}`);
    })();
    db.prepare('SELECT count(*) FROM t').get();
    db.prepare('DELETE FROM t WHERE x = ?').run('no such row');
    expect(counter.take().commits).toBe(1);
    db.close();
  });

  it('sums every WAL file under the dir and starts again after a checkpoint restarts a log', async () => {
    await mkdir(path.join(dir, 'sub'));
    const a = openDatabase(path.join(dir, 'a.sqlite'), 'sync');
    const b = openDatabase(path.join(dir, 'sub', 'b.sqlite'), 'sync');
    for (const db of [a, b]) db.exec('CREATE TABLE t (x TEXT)');
    const counter = new DurableWriteCounter(dir);
    a.prepare('INSERT INTO t (x) VALUES (1)').run();
    b.prepare('INSERT INTO t (x) VALUES (1)').run();
    expect(counter.take().commits).toBe(2);
    a.pragma('wal_checkpoint(TRUNCATE)');
    a.prepare('INSERT INTO t (x) VALUES (2)').run();
    a.prepare('INSERT INTO t (x) VALUES (3)').run();
    expect(counter.take().commits).toBe(2);
    a.close();
    b.close();
  });

  it('counts the fsyncs of atomic file writes (the file and its dir)', async () => {
    const counter = new DurableWriteCounter(dir);
    await writeFileAtomic(path.join(dir, 'note.md'), 'hello');
    expect(counter.take()).toEqual({ commits: 0, fileSyncs: 2 });
  });
});
