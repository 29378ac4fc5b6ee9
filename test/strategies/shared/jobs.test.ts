import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { JobQueue, JobWorker, type Job } from '../../../strategies/shared/jobs.js';
import { openDatabase, type SqliteDatabase } from '../../../harness/core/sqlite.js';
import type { DurabilityMode } from '../../../strategies/types.js';

const dirs: string[] = [];
const opened: SqliteDatabase[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) if (db.open) db.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function queueFile(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-jobs-'));
  dirs.push(dir);
  return path.join(dir, 'jobs.sqlite');
}

function openQueue(file: string, durability: DurabilityMode = 'sync'): { db: SqliteDatabase; queue: JobQueue } {
  const db = openDatabase(file, durability);
  opened.push(db);
  return { db, queue: new JobQueue(db, { durability, now: () => new Date('2026-01-01T00:00:00Z') }) };
}

/** A promise the test resolves by hand, to hold a job "in flight". */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('JobQueue', () => {
  it('commits a job before enqueue returns (another connection sees it at once)', async () => {
    const file = await queueFile();
    const { queue } = openQueue(file);
    const job = queue.enqueue('fold', { from: 1, to: 4 }, 3);
    const reader = new Database(file, { readonly: true });
    const row = reader.prepare('SELECT kind, payload, base_version, state FROM jobs WHERE id = ?').get(job.id);
    reader.close();
    expect(row).toEqual({ kind: 'fold', payload: '{"from":1,"to":4}', base_version: 3, state: 'pending' });
  });

  it('runs with synchronous=FULL in durability modes sync and async', async () => {
    for (const durability of ['sync', 'async', 'exit'] as const) {
      const { db } = openQueue(await queueFile(), durability);
      expect(db.pragma('synchronous', { simple: true })).toBe(durability === 'exit' ? 1 : 2);
    }
  });

  it('hands out jobs of a kind in order, one at a time', async () => {
    const { queue } = openQueue(await queueFile());
    const first = queue.enqueue('a', 'one', 0);
    const second = queue.enqueue('a', 'two', 1);
    const other = queue.enqueue('b', 'elsewhere', 0);
    const claimed = queue.claim<string>('a');
    expect(claimed).toMatchObject({ id: first.id, payload: 'one', state: 'running', attempts: 1 });
    expect(queue.claim('a')).toBeUndefined(); // the older one is still running
    expect(queue.claim<string>('b')?.id).toBe(other.id); // other kinds are independent
    expect(queue.complete(first.id)).toBe(true);
    expect(queue.complete(first.id)).toBe(false);
    expect(queue.claim<string>('a')?.payload).toBe('two');
    expect(queue.pending('a').map((job) => job.id)).toEqual([second.id]);
    expect(queue.size()).toBe(2);
  });

  it('prepares each of its statements once, however many jobs pass through it', async () => {
    const { db, queue } = openQueue(await queueFile());
    const prepare = db.prepare.bind(db);
    const prepared: string[] = [];
    db.prepare = ((sql: string) => (prepared.push(sql), prepare(sql))) as typeof db.prepare;
    for (let n = 0; n < 20; n++) {
      const job = queue.enqueue('fold', n, n);
      queue.next('fold');
      queue.has(job.id);
      queue.size('fold');
      queue.complete(job.id);
    }
    expect(prepared.length).toBe(new Set(prepared).size);
    expect(prepared.length).toBeLessThanOrEqual(5);
  });

  it('puts a failed job back with its error and counts attempts', async () => {
    const { queue } = openQueue(await queueFile());
    const job = queue.enqueue('a', null, 0);
    queue.claim('a');
    queue.release(job.id, 'model timed out');
    expect(queue.pending()[0]).toMatchObject({ state: 'pending', attempts: 1, lastError: 'model timed out' });
    expect(queue.claim('a')?.attempts).toBe(2);
  });

  it('keeps unfinished jobs across reopen and releases jobs a dead process was running', async () => {
    const file = await queueFile();
    const first = openQueue(file);
    first.queue.enqueue('a', { n: 1 }, 0);
    first.queue.enqueue('a', { n: 2 }, 1);
    first.queue.claim('a');
    first.db.close(); // the process dies with job 1 running
    const { queue } = openQueue(file);
    expect(queue.pending().map((job) => job.state)).toEqual(['running', 'pending']);
    expect(queue.claim('a')).toBeUndefined();
    expect(queue.recover()).toBe(1);
    expect(queue.claim<{ n: number }>('a')?.payload).toEqual({ n: 1 });
  });

  it('lets a consumer commit its result and the completion together', async () => {
    const { db, queue } = openQueue(await queueFile());
    db.exec('CREATE TABLE record (id INTEGER PRIMARY KEY, version INTEGER, text TEXT)');
    db.exec("INSERT INTO record VALUES (1, 0, 'old')");
    const job = queue.enqueue('write', 'new', 0);
    const write = db.transaction((claimed: Job<string>) => {
      const changes = db
        .prepare('UPDATE record SET text = ?, version = version + 1 WHERE id = 1 AND version = ?')
        .run(claimed.payload, claimed.baseVersion).changes;
      queue.complete(claimed.id);
      return changes;
    });
    db.exec("UPDATE record SET text = 'corrected', version = 1"); // a correction lands first
    expect(write(queue.claim<string>('write')!)).toBe(0);
    expect(db.prepare('SELECT text FROM record').get()).toEqual({ text: 'corrected' });
    expect(queue.has(job.id)).toBe(false);
  });

  it('refuses table names that are not identifiers', async () => {
    const db = new Database(':memory:');
    expect(() => new JobQueue(db, { durability: 'none', table: 'jobs; DROP TABLE x' })).toThrow(/invalid job table/u);
    db.close();
  });
});

describe('JobWorker', () => {
  it('drains in order off the hot path, and flush-style drain() waits for the end', async () => {
    const { queue } = openQueue(await queueFile());
    const done: number[] = [];
    const held = gate();
    const worker = new JobWorker<number>(queue, 'n', async (job) => {
      await held.promise;
      done.push(job.payload);
    });
    queue.enqueue('n', 1, 0);
    queue.enqueue('n', 2, 1);
    worker.kick();
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toEqual([]); // kick() returned while the first job waits
    expect(queue.pending().map((job) => job.state)).toEqual(['running', 'pending']);
    queue.enqueue('n', 3, 2); // queued while a run is in progress: the same run picks it up
    held.open();
    await worker.drain();
    expect(done).toEqual([1, 2, 3]);
    expect(queue.size()).toBe(0);
    queue.enqueue('n', 4, 3); // after the run ended: a new drain starts a new run
    await worker.drain();
    expect(done).toEqual([1, 2, 3, 4]);
  });

  it('puts a failing job back, rejects drain() and keeps background errors in lastError', async () => {
    const { queue } = openQueue(await queueFile());
    let fail = true;
    const worker = new JobWorker<string>(queue, 'x', async () => {
      if (fail) throw new Error('endpoint down');
    });
    queue.enqueue('x', 'a', 0);
    await expect(worker.drain()).rejects.toThrow('endpoint down');
    expect(queue.pending()[0]).toMatchObject({ state: 'pending', lastError: 'endpoint down' });
    worker.kick();
    await new Promise((resolve) => setImmediate(resolve));
    expect((worker.lastError as Error).message).toBe('endpoint down');
    fail = false;
    await worker.drain();
    expect(queue.size()).toBe(0);
  });

  it('stop() lets the running job finish and claims nothing more', async () => {
    const { queue } = openQueue(await queueFile());
    const held = gate();
    const done: string[] = [];
    const worker = new JobWorker<string>(queue, 'x', async (job) => {
      await held.promise;
      done.push(job.payload);
    });
    queue.enqueue('x', 'a', 0);
    queue.enqueue('x', 'b', 1);
    worker.kick();
    await new Promise((resolve) => setImmediate(resolve));
    const stopped = worker.stop();
    held.open();
    await stopped;
    expect(done).toEqual(['a']);
    expect(queue.pending().map((job) => job.payload)).toEqual(['b']);
    await worker.drain(); // a stopped worker does nothing
    expect(done).toEqual(['a']);
  });
});
