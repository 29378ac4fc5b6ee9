/**
 * A small durable job queue in SQLite, for memory work that runs off the hot path (summaries,
 * entity updates). A job is committed before `enqueue` returns, so it survives a crash and is
 * resumed by the next process that opens the same file (docs/design.md §6, invariant 6).
 *
 * The queue lives in the caller's database on purpose: a job's result and its completion can then
 * be committed in one transaction (`db.transaction(() => { write(); queue.complete(id); })`), so a
 * crash leaves either the job pending or its result written, never both or neither.
 *
 * Each job carries a `baseVersion`: the version of the record it was computed against. A consumer
 * writes its result only if the record is still at that version (a conditional write), so a job
 * queued before a correction can detect the correction instead of overwriting it (invariant 4).
 */
import type { Statement } from 'better-sqlite3';
import type { DurabilityMode } from '../types.js';
import type { SqliteDatabase } from '../../harness/core/sqlite.js';
import { inDurableBatch } from '../../harness/core/durable-batch.js';
import { errorMessage } from '../../harness/core/errors.js';

/** A unit of background work as stored in the queue. */
export interface Job<Payload = unknown> {
  id: number;
  kind: string;
  payload: Payload;
  /** Version of the record the job was based on when it was queued. */
  baseVersion: number;
  /** How many times the job was claimed (more than one: it was retried or resumed after a crash). */
  attempts: number;
  state: 'pending' | 'running';
  enqueuedAt: string;
  lastError: string | null;
}

interface JobRow {
  id: number;
  kind: string;
  payload: string;
  base_version: number;
  attempts: number;
  state: 'pending' | 'running';
  enqueued_at: string;
  last_error: string | null;
}

const toJob = <Payload>(row: JobRow): Job<Payload> => ({
  id: row.id,
  kind: row.kind,
  payload: JSON.parse(row.payload) as Payload,
  baseVersion: row.base_version,
  attempts: row.attempts,
  state: row.state,
  enqueuedAt: row.enqueued_at,
  lastError: row.last_error,
});

export interface JobQueueOptions {
  /** `sync` and `async` switch the connection to synchronous=FULL: an enqueued job survives a power cut (`sync` inside a durable batch: at the batch's end). */
  durability: DurabilityMode;
  /** Table name, so several queues can share one database. */
  table?: string;
  now?: () => Date;
}

/**
 * FIFO per kind, one job of a kind at a time: `claim(kind)` hands out the oldest unfinished job
 * only when no older job of that kind is running, so results are applied in the order the work
 * was queued. Finished jobs are deleted.
 */
export class JobQueue {
  private readonly table: string;
  private readonly now: () => Date;
  /** Statements prepared once per queue: a summariser asks the queue a few times per message. */
  private readonly statements = new Map<string, Statement>();

  constructor(
    private readonly db: SqliteDatabase,
    options: JobQueueOptions,
  ) {
    this.table = options.table ?? 'jobs';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/u.test(this.table)) throw new Error(`invalid job table name "${this.table}"`);
    this.now = options.now ?? (() => new Date());
    // Inside a durable batch a `sync` store stays at NORMAL: the batch fsyncs it once at its end and
    // then restores FULL (harness/core/sqlite.ts); forcing FULL here made every reopen at a replayed
    // session boundary fsync each commit again.
    if (options.durability === 'async' || (options.durability === 'sync' && !inDurableBatch()))
      db.pragma('synchronous = FULL');
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      kind TEXT NOT NULL,
      payload TEXT NOT NULL,
      base_version INTEGER NOT NULL,
      state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running')),
      attempts INTEGER NOT NULL DEFAULT 0,
      enqueued_at TEXT NOT NULL,
      claimed_at TEXT,
      last_error TEXT)`);
    db.exec(`CREATE INDEX IF NOT EXISTS ${this.table}_kind ON ${this.table} (kind, id)`);
  }

  /** The statement of `sql` on this queue's table, prepared on first use. */
  private statement(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Adds a job; it is committed (inside the caller's transaction, if any) before this returns. */
  enqueue<Payload>(kind: string, payload: Payload, baseVersion: number): Job<Payload> {
    const enqueuedAt = this.now().toISOString();
    const { lastInsertRowid } = this.statement(
      `INSERT INTO ${this.table} (kind, payload, base_version, enqueued_at) VALUES (?, ?, ?, ?)`,
    ).run(kind, JSON.stringify(payload), baseVersion, enqueuedAt);
    return {
      id: Number(lastInsertRowid),
      kind,
      payload,
      baseVersion,
      attempts: 0,
      state: 'pending',
      enqueuedAt,
      lastError: null,
    };
  }

  /**
   * Marks jobs left `running` by a process that is gone as pending again; call it on open.
   * A job that was in fact still running elsewhere may then run twice: consumers make that
   * harmless by completing conditionally (see `complete` and `baseVersion`).
   */
  recover(): number {
    return this.statement(`UPDATE ${this.table} SET state = 'pending', claimed_at = NULL WHERE state = 'running'`).run()
      .changes;
  }

  /** The oldest unfinished job of `kind`, marked running; undefined when none is left or an older one is still running. */
  claim<Payload>(kind: string): Job<Payload> | undefined {
    const claimed = this.db.transaction((): JobRow | undefined => {
      const oldest = this.statement(`SELECT * FROM ${this.table} WHERE kind = ? ORDER BY id LIMIT 1`).get(kind) as
        | JobRow
        | undefined;
      if (!oldest || oldest.state === 'running') return undefined;
      this.db
        .prepare(`UPDATE ${this.table} SET state = 'running', attempts = attempts + 1, claimed_at = ? WHERE id = ?`)
        .run(this.now().toISOString(), oldest.id);
      return { ...oldest, state: 'running', attempts: oldest.attempts + 1 };
    });
    const row = claimed.immediate();
    return row ? toJob<Payload>(row) : undefined;
  }

  /**
   * The oldest unfinished job of `kind` without marking it (no commit): for a worker whose caller
   * awaits it, where a crash mid-job leaves the job pending anyway. Undefined when none is left or
   * an older one is running elsewhere.
   */
  next<Payload>(kind: string): Job<Payload> | undefined {
    const oldest = this.statement(`SELECT * FROM ${this.table} WHERE kind = ? ORDER BY id LIMIT 1`).get(kind) as
      | JobRow
      | undefined;
    return oldest && oldest.state !== 'running' ? toJob<Payload>(oldest) : undefined;
  }

  /** Removes a finished job; false when it was already completed (e.g. by a duplicate run). */
  complete(id: number): boolean {
    return this.statement(`DELETE FROM ${this.table} WHERE id = ?`).run(id).changes === 1;
  }

  /** True while the job is neither completed nor gone: a consumer checks it inside its write transaction. */
  has(id: number): boolean {
    return this.statement(`SELECT 1 FROM ${this.table} WHERE id = ?`).get(id) !== undefined;
  }

  /** Puts a claimed job back (after a failure), remembering why; it is retried by the next claim. */
  release(id: number, error?: string): void {
    this.statement(`UPDATE ${this.table} SET state = 'pending', claimed_at = NULL, last_error = ? WHERE id = ?`).run(
      error ?? null,
      id,
    );
  }

  /** Unfinished jobs (pending or running), oldest first: what a crash left behind, or the backlog. */
  pending<Payload>(kind?: string): Job<Payload>[] {
    const rows = (
      kind === undefined
        ? this.statement(`SELECT * FROM ${this.table} ORDER BY id`).all()
        : this.statement(`SELECT * FROM ${this.table} WHERE kind = ? ORDER BY id`).all(kind)
    ) as JobRow[];
    return rows.map((row) => toJob<Payload>(row));
  }

  /** Number of unfinished jobs, without reading their payloads. */
  size(kind?: string): number {
    const row = (
      kind === undefined
        ? this.statement(`SELECT count(*) AS n FROM ${this.table}`).get()
        : this.statement(`SELECT count(*) AS n FROM ${this.table} WHERE kind = ?`).get(kind)
    ) as { n: number };
    return row.n;
  }
}

/**
 * Runs the jobs of one kind in order, off the hot path: `kick()` starts draining without being
 * awaited (save() stays fast), `drain()` resolves once the queue is empty (flush(), or a save()
 * that promises a synchronous summary), `stop()` lets the running job finish and claims no more.
 *
 * The handler should complete the job in the same transaction as its write; if it returns
 * without doing so, the worker completes it. If the handler throws, the job goes back to the
 * queue and `drain()` rejects with the error (a background `kick()` keeps it in `lastError`).
 */
export class JobWorker<Payload> {
  /** The error of the last failed background run, for diagnostics. */
  lastError: unknown;
  private running: Promise<void> | undefined;
  private stopped = false;

  /**
   * `markRunning` (default true) commits each claim (state `running`) before the handler runs, so
   * no other worker starts the job meanwhile; a worker whose every run is awaited by its caller
   * (synchronous summarising) can skip that commit: a duplicate run elsewhere is harmless, since
   * handlers complete conditionally. `staged(job)` tells the worker a job's result waits for a
   * later commit, which completes it: the worker must not complete it now.
   */
  constructor(
    private readonly queue: JobQueue,
    private readonly kind: string,
    private readonly handler: (job: Job<Payload>) => Promise<void>,
    private readonly markRunning = true,
    private readonly staged: (job: Job<Payload>) => boolean = () => false,
  ) {}

  /** Starts draining in the background; never throws, never needs awaiting. */
  kick(): void {
    if (this.stopped) return;
    this.drain().catch((error: unknown) => {
      this.lastError = error;
    });
  }

  /** Runs jobs until none of this kind is left (joins a run already in progress). */
  drain(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.loop();
    return this.running;
  }

  /** Waits for the job in progress, then stops; unfinished jobs stay queued for the next open. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running?.catch(() => undefined);
  }

  private async loop(): Promise<void> {
    await null; // lets `running` be assigned before the loop can clear it
    try {
      while (!this.stopped) {
        // Claiming and clearing `running` happen in the same tick, so a job queued after the
        // last claim always finds `running` unset and starts a new loop.
        const job = this.markRunning ? this.queue.claim<Payload>(this.kind) : this.queue.next<Payload>(this.kind);
        // A staged job is done but for its commit: the queue is drained.
        if (!job || this.staged(job)) return;
        try {
          await this.handler(job);
        } catch (error) {
          if (this.queue.has(job.id)) this.queue.release(job.id, errorMessage(error));
          throw error;
        }
        if (!this.staged(job)) this.queue.complete(job.id);
      }
    } finally {
      this.running = undefined;
    }
  }
}
