/**
 * Durable batches (harness/core/durable-batch.ts): inside one, `sync` stores write each replayed
 * session in one transaction committed without an fsync, and keep their files open across
 * close/reopen; at its end every file it wrote is fsynced and the stores go back to one commit and
 * one fsync per write. A process killed inside a batch loses only the session in progress.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { batchStats, durableBatch, inDurableBatch, sessionEnded } from '../../../harness/core/durable-batch.js';
import { DurableWriteCounter } from '../../../harness/core/commit-count.js';
import { fsyncStats, writeFileAtomic } from '../../../harness/core/fs.js';
import { commitDerived, openDatabase } from '../../../harness/core/sqlite.js';
import { JobQueue } from '../../../strategies/shared/jobs.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const synchronous = (db: Database.Database): number => db.pragma('synchronous', { simple: true }) as number;

describe('durableBatch', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-batch-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('importing the stores registers no batch hooks: a sync database registers on its first open, a held derived file on its first hold, each once', async () => {
    vi.resetModules();
    const batch = await import('../../../harness/core/durable-batch.js');
    const sqlite = await import('../../../harness/core/sqlite.js');
    const fs = await import('../../../harness/core/fs.js');
    expect(batch.registeredBatchHooks()).toBe(0);
    sqlite.openDatabase(path.join(dir, 'n.sqlite'), 'async').close();
    expect(batch.registeredBatchHooks()).toBe(0);
    for (const name of ['a', 'b']) sqlite.openDatabase(path.join(dir, `${name}.sqlite`), 'sync').close();
    expect(batch.registeredBatchHooks()).toBe(1);
    const cursor = path.join(dir, 'cursor');
    await batch.durableBatch(async () => {
      fs.replaceDerivedFile(cursor, 'first');
      fs.replaceDerivedFile(cursor, 'last');
      expect(existsSync(cursor)).toBe(false);
    });
    expect(batch.registeredBatchHooks()).toBe(2);
    expect(readFileSync(cursor, 'utf8')).toBe('last'); // written by the hook registered inside the batch
    vi.resetModules();
  });

  it('relaxes the fsync of sync stores inside the batch only, also for stores opened in it and after a failed step', async () => {
    const before = openDatabase(path.join(dir, 'a.sqlite'), 'sync');
    const relaxed = openDatabase(path.join(dir, 'c.sqlite'), 'async');
    expect(synchronous(before)).toBe(2); // FULL
    let inside: Database.Database | undefined;
    await expect(
      durableBatch(async () => {
        expect(inDurableBatch()).toBe(true);
        expect(synchronous(before)).toBe(1); // NORMAL
        inside = openDatabase(path.join(dir, 'b.sqlite'), 'sync');
        expect(synchronous(inside)).toBe(1);
        throw new Error('a step failed');
      }),
    ).rejects.toThrow('a step failed');
    expect(inDurableBatch()).toBe(false);
    expect(synchronous(before)).toBe(2);
    expect(synchronous(inside!)).toBe(2);
    expect(synchronous(relaxed)).toBe(1); // async stores are never FULL
    for (const db of [before, inside!, relaxed]) db.close();
  });

  it('a store left open whose dir was removed (an earlier cell that never closed it) neither fails the next batch nor leaves the process in one', async () => {
    const gone = await mkdtemp(path.join(os.tmpdir(), 'membench-batch-gone-'));
    const leaked = openDatabase(path.join(gone, 'leaked.sqlite'), 'sync');
    await rm(gone, { recursive: true, force: true });
    const store = openDatabase(path.join(dir, 'a.sqlite'), 'sync');
    await durableBatch(async () => {
      expect(synchronous(store)).toBe(1); // NORMAL: the live store joined the batch
      store.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1)');
    });
    expect(inDurableBatch()).toBe(false);
    expect(synchronous(store)).toBe(2);
    for (const db of [leaked, store]) db.close();
  });

  it('leaves no batch open when a store fails to join it', async () => {
    const store = openDatabase(path.join(dir, 'a.sqlite'), 'sync');
    const keeper = vi.spyOn(Database.prototype, 'prepare').mockImplementationOnce(() => {
      throw new Error('cannot keep the file');
    });
    await expect(durableBatch(async () => undefined)).rejects.toThrow('cannot keep the file');
    keeper.mockRestore();
    expect(inDurableBatch()).toBe(false);
    store.close();
  });

  it('commitDerived: a sync store commits the reshaping of durable rows without an fsync, then goes back to FULL; other stores and batches keep theirs', async () => {
    const sync = openDatabase(path.join(dir, 'a.sqlite'), 'sync');
    const relaxed = openDatabase(path.join(dir, 'b.sqlite'), 'async');
    for (const db of [sync, relaxed]) db.exec('CREATE TABLE t (x TEXT)');
    const seen: number[] = [];
    const move = (db: Database.Database) => () => {
      seen.push(synchronous(db));
      db.prepare("INSERT INTO t (x) VALUES ('moved')").run();
    };
    commitDerived(sync, move(sync));
    expect(synchronous(sync)).toBe(2);
    expect(() =>
      commitDerived(sync, () => {
        throw new Error('reshaping failed');
      }),
    ).toThrow('reshaping failed');
    expect(synchronous(sync)).toBe(2); // FULL again after a failure too
    commitDerived(relaxed, move(relaxed));
    await durableBatch(async () => commitDerived(sync, move(sync)));
    expect(seen).toEqual([1, 1, 1]); // NORMAL: no fsync of its own
    expect(synchronous(sync)).toBe(2);
    expect(sync.prepare('SELECT count(*) FROM t').pluck().get()).toBe(2);
    for (const db of [sync, relaxed]) db.close();
  });

  it('a job queue opened on a sync store inside the batch (a summariser reopened at a session boundary) keeps the batch’s relaxed fsync until the batch ends', async () => {
    let store: Database.Database | undefined;
    await durableBatch(async () => {
      store = openDatabase(path.join(dir, 'summary.sqlite'), 'sync');
      new JobQueue(store, { durability: 'sync' });
      expect(synchronous(store)).toBe(1); // NORMAL: no fsync per commit inside the batch
    });
    expect(synchronous(store!)).toBe(2); // FULL again
    const outside = openDatabase(path.join(dir, 'other.sqlite'), 'sync');
    new JobQueue(outside, { durability: 'sync' });
    expect(synchronous(outside)).toBe(2);
    const async = openDatabase(path.join(dir, 'async.sqlite'), 'async');
    await durableBatch(async () => {
      new JobQueue(async, { durability: 'async' });
    });
    expect(synchronous(async)).toBe(2); // an async queue is FULL, in a batch or not
    for (const db of [store!, outside, async]) db.close();
  });

  it('keeps a store closed inside the batch from checkpointing until the batch ends, then fsyncs its WAL and file', async () => {
    const file = path.join(dir, 'store.sqlite');
    const fsyncs = batchStats.fsyncs;
    await durableBatch(async () => {
      for (let session = 0; session < 3; session++) {
        const db = openDatabase(file, 'sync');
        db.exec('CREATE TABLE IF NOT EXISTS rows (n INTEGER)');
        db.prepare('INSERT INTO rows VALUES (?)').run(session);
        db.close();
        // The keeper holds the file: closing the store left its WAL, not checkpointed.
        expect(existsSync(`${file}-wal`) && statSync(`${file}-wal`).size > 0).toBe(true);
      }
    });
    // The keeper's close was the last: the WAL went into the file.
    expect(readdirSync(dir).filter((name) => name.endsWith('-wal'))).toEqual([]);
    expect(batchStats.fsyncs).toBeGreaterThan(fsyncs);
    const reader = new Database(file, { readonly: true });
    expect(reader.prepare('SELECT count(*) FROM rows').pluck().get()).toBe(3);
    reader.close();
  });

  it('defers the fsyncs of atomic file writes to the end of the batch', async () => {
    const file = path.join(dir, 'memory.md');
    const [writes, deferred] = [fsyncStats.fsyncs, batchStats.fsyncs];
    await durableBatch(async () => {
      await writeFileAtomic(file, 'one');
      await writeFileAtomic(file, 'two');
      expect(fsyncStats.fsyncs).toBe(writes);
    });
    // The file and its directory, once each, however many writes.
    expect(batchStats.fsyncs - deferred).toBe(2);
    await writeFileAtomic(file, 'three');
    expect(fsyncStats.fsyncs - writes).toBe(2);
  });

  it('writes each replayed session in one commit per store: at the session boundary, at a close, at the batch end', async () => {
    const file = path.join(dir, 'sessions.sqlite');
    const db = openDatabase(file, 'sync');
    db.exec('CREATE TABLE rows (n INTEGER)');
    const insert = db.prepare('INSERT INTO rows VALUES (?)');
    const save = db.transaction((n: number) => insert.run(n)); // a store's own commit per message
    const reader = new Database(file, { readonly: true });
    const seen = (): unknown => reader.prepare('SELECT count(*) FROM rows').pluck().get();
    const commits = new DurableWriteCounter(dir);
    await durableBatch(async () => {
      for (let n = 0; n < 10; n++) save(n);
      expect(seen()).toBe(0); // the session is one transaction, not yet committed
      sessionEnded();
      expect(seen()).toBe(10);
      for (let n = 10; n < 30; n++) save(n);
      sessionEnded();
      for (let n = 30; n < 35; n++) save(n);
    });
    expect(commits.take().commits).toBe(3); // three sessions, not 35 messages
    expect(seen()).toBe(35);
    save(35);
    expect(commits.take().commits).toBe(1); // outside a batch: a commit per write again
    reader.close();
    db.close();
  });

  it('a process killed with SIGKILL inside a batch keeps every ended session and loses only the one in progress (nothing in it was acknowledged)', async () => {
    const file = path.join(dir, 'killed.sqlite');
    const script = `
      import { durableBatch, sessionEnded } from ${JSON.stringify(path.join(ROOT, 'dist/harness/core/durable-batch.js'))};
      import { openDatabase } from ${JSON.stringify(path.join(ROOT, 'dist/harness/core/sqlite.js'))};
      const file = ${JSON.stringify(file)};
      await durableBatch(async () => {
        let db = openDatabase(file, 'sync');
        db.exec('CREATE TABLE rows (n INTEGER)');
        for (let n = 0; n < 50; n++) {
          if (n === 20) { db.close(); db = openDatabase(file, 'sync'); } // a session that reopens its store
          if (n === 40) sessionEnded(); // a session that keeps it open
          db.prepare('INSERT INTO rows VALUES (?)').run(n);
        }
        process.kill(process.pid, 'SIGKILL');
      });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
    const [, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.on('exit', (code, signal) => resolve([code, signal])),
    );
    expect(signal).toBe('SIGKILL');
    const db = openDatabase(file, 'sync');
    expect(db.prepare('SELECT count(*) FROM rows').pluck().get()).toBe(40);
    db.close();
  });
});
