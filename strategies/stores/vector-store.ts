/**
 * The SQLite side of the `vector` strategy: every finished exchange with its text, messages and
 * vector (the durable source of truth; the HNSW file is only a cache), plus the messages of
 * exchanges in progress. Several processes may write one store at once:
 *
 * - exchange ids are assigned by SQLite (INTEGER PRIMARY KEY), so writers never collide;
 * - every store instance is a writer with its own random id, registered in `writers` with its
 *   pid; pending rows carry the writer that owns them (and the writer that first saved them), and
 *   a writer only finishes or deletes its own rows;
 * - on open, pending rows of writers that are gone (closed cleanly, or their process is dead) are
 *   claimed in one IMMEDIATE transaction, so exactly one opener adopts them: it embeds the
 *   complete exchanges among them and continues the one in progress.
 *
 * A writer whose process is alive keeps its rows, even when it is another instance in the same
 * process (its pid is ours): only a later process adopts an instance abandoned without close().
 * Liveness is `kill(pid, 0)` on this host (SQLite in WAL mode needs one host anyway); a dead
 * writer whose pid was reused keeps its rows until that process ends too, which delays their
 * adoption and never duplicates them.
 *
 * Finished exchanges are written at once in modes `sync` and `async` (in `async` after the
 * write-behind queue, which holds only pending messages); mode `exit` holds them until flush().
 */
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, type BaseMessage } from '@langchain/core/messages';
import { MembenchError } from '../../harness/core/errors.js';
import { openDatabase, type SqliteDatabase } from '../../harness/core/sqlite.js';
import { processAlive } from './vector-index.js';
import type { DurabilityMode } from '../types.js';

const DB_FILE = 'vector.sqlite';

/** A message of an exchange in progress; `seq` is its row, known once written. */
export interface PendingMessage {
  seq?: number;
  /** The writer that first saved it (claimed rows keep it, so each writer's messages stay together). */
  origin: string;
  message: BaseMessage;
  turn: number;
  timestamp?: string;
}

/** A stored exchange's id and when it happened (text and messages are read on demand). */
export interface StoredExchange {
  id: number;
  turn: number;
  timestamp?: string;
}

/** An exchange to store: what it says, rendered, and its messages. */
export interface ExchangeRow {
  turn: number;
  timestamp?: string;
  text: string;
  messages: BaseMessage[];
}

interface ExchangeDbRow {
  id: number;
  turn: number;
  timestamp: string | null;
}

const serialize = (messages: BaseMessage[]): string => JSON.stringify(mapChatMessagesToStoredMessages(messages));
const deserialize = (json: string): BaseMessage[] => mapStoredMessagesToChatMessages(JSON.parse(json));
const toVector = (blob: Buffer): Float32Array => new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
const toStored = (row: ExchangeDbRow): StoredExchange => ({ id: row.id, turn: row.turn, ...(row.timestamp !== null ? { timestamp: row.timestamp } : {}) });

const SCHEMA = `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS exchanges (id INTEGER PRIMARY KEY, turn INTEGER NOT NULL, timestamp TEXT,
    text TEXT NOT NULL, messages TEXT NOT NULL, vector BLOB NOT NULL);
  CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, writer TEXT NOT NULL, origin TEXT NOT NULL,
    turn INTEGER NOT NULL, timestamp TEXT, message TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS pending_writer ON pending (writer, seq);
  CREATE TABLE IF NOT EXISTS writers (writer TEXT PRIMARY KEY, pid INTEGER NOT NULL);`;

function prepareStatements(db: SqliteDatabase, writer: string) {
  const deletePending = db.prepare('DELETE FROM pending WHERE seq = ? AND writer = ?');
  const insertExchange = db.prepare('INSERT INTO exchanges (turn, timestamp, text, messages, vector) VALUES (?, ?, ?, ?, ?)');
  return {
    maxId: db.prepare('SELECT max(id) AS id FROM exchanges').pluck(),
    exchangesAfter: db.prepare('SELECT id, turn, timestamp, vector FROM exchanges WHERE id > ? ORDER BY id'),
    vectorOf: db.prepare('SELECT vector FROM exchanges WHERE id = ?').pluck(),
    readExchange: db.prepare('SELECT text, messages FROM exchanges WHERE id = ?'),
    insertPending: db.prepare('INSERT INTO pending (writer, origin, turn, timestamp, message) VALUES (?, ?, ?, ?, ?)'),
    /** Stores an exchange and deletes its pending rows; undefined (and nothing written) when another writer claimed them. */
    commitExchange: db
      .transaction((row: ExchangeRow, messages: string, vector: Buffer, seqs: number[]): number | undefined => {
        let deleted = 0;
        for (const seq of seqs) deleted += deletePending.run(seq, writer).changes;
        if (deleted !== seqs.length) throw new ClaimedElsewhere();
        return Number(insertExchange.run(row.turn, row.timestamp ?? null, row.text, messages, vector).lastInsertRowid);
      })
      .immediate,
  };
}

class ClaimedElsewhere extends Error {}

/** The SQLite store of one writer. Writes follow the durability mode; `none` keeps nothing. */
export class ExchangeStore {
  /** This instance's writer id: its pid (for the liveness check of later openers) and random bits. */
  readonly writer = `${process.pid}-${randomBytes(6).toString('hex')}`;
  /** Rows read on the hot path (catch-up and lazy reads), for complexity tests. */
  rowsRead = 0;
  private db: SqliteDatabase | undefined;
  private statements: ReturnType<typeof prepareStatements> | undefined;
  private queue: (() => (() => void) | void)[] = [];
  private drainScheduled = false;

  constructor(
    private readonly dir: string,
    private readonly durability: DurabilityMode,
  ) {}

  /** Whether finished exchanges wait for flush() (mode `exit`) rather than being stored at once. */
  get deferred(): boolean {
    return this.durability === 'exit';
  }

  /**
   * Opens the file, registers this writer, claims the pending rows of writers that are gone, and
   * returns the stored exchanges (ascending) and this writer's pending messages (each origin's
   * messages together, in the order they were saved).
   */
  open(embedderKey: string): { exchanges: StoredExchange[]; pending: PendingMessage[] } {
    if (this.durability === 'none') return { exchanges: [], pending: [] };
    mkdirSync(this.dir, { recursive: true });
    const file = path.join(this.dir, DB_FILE);
    const db = openDatabase(file, this.durability);
    try {
      db.exec(SCHEMA);
      db.transaction(() => this.register(db, file, embedderKey)).immediate();
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
    this.statements = prepareStatements(db, this.writer);
    const exchanges = (db.prepare('SELECT id, turn, timestamp FROM exchanges ORDER BY id').all() as ExchangeDbRow[]).map(toStored);
    const rows = db.prepare('SELECT seq, origin, turn, timestamp, message FROM pending WHERE writer = ? ORDER BY seq').all(this.writer) as {
      seq: number;
      origin: string;
      turn: number;
      timestamp: string | null;
      message: string;
    }[];
    const byOrigin = new Map<string, PendingMessage[]>();
    for (const row of rows) {
      const entry: PendingMessage = { seq: row.seq, origin: row.origin, turn: row.turn, message: deserialize(row.message)[0]!, ...(row.timestamp !== null ? { timestamp: row.timestamp } : {}) };
      byOrigin.set(row.origin, [...(byOrigin.get(row.origin) ?? []), entry]);
    }
    return { exchanges, pending: [...byOrigin.values()].flat() };
  }

  /** The highest stored exchange id (0 when none): an O(1) check for other writers' rows. */
  latestId(): number {
    if (!this.statements) return 0;
    this.rowsRead++;
    return (this.statements.maxId.get() as number | null) ?? 0;
  }

  /** Exchanges stored after `id`, with their vectors (other writers' rows since the last look). */
  exchangesAfter(id: number): (StoredExchange & { vector: Float32Array })[] {
    if (!this.statements) return [];
    const rows = this.statements.exchangesAfter.all(id) as (ExchangeDbRow & { vector: Buffer })[];
    this.rowsRead += rows.length;
    return rows.map((row) => ({ ...toStored(row), vector: toVector(row.vector) }));
  }

  /** Stored vectors of the given ids (read on open, for those the index file lacks). */
  *vectorsOf(ids: readonly number[]): Generator<[number, Float32Array]> {
    const statements = this.statements;
    if (!statements) return;
    for (const id of ids) {
      const blob = statements.vectorOf.get(id) as Buffer | undefined;
      if (blob) yield [id, toVector(blob)];
    }
  }

  /** Text and messages of a stored exchange (after a reopen they are not kept in memory). */
  readExchange(id: number): { text: string; messages: BaseMessage[] } {
    const row = this.statements?.readExchange.get(id) as { text: string; messages: string } | undefined;
    if (!row) throw new Error(`vector: exchange ${id} is not in ${DB_FILE}`);
    this.rowsRead++;
    return { text: row.text, messages: deserialize(row.messages) };
  }

  /** Every stored exchange's text and every pending message of every writer (for durability checks, not the hot path). */
  storedTexts(): { exchanges: string[]; pending: BaseMessage[] } {
    const db = this.db;
    if (!db) return { exchanges: [], pending: [] };
    const exchanges = db.prepare('SELECT text FROM exchanges ORDER BY id').pluck().all() as string[];
    const pending = (db.prepare('SELECT message FROM pending ORDER BY seq').pluck().all() as string[]).map((json) => deserialize(json)[0]!);
    return { exchanges, pending };
  }

  /** Runs `work`'s writes in one commit (mode `sync`; the other modes queue or hold their writes anyway). */
  together(work: () => void): void {
    if (this.durability === 'sync' && this.db) this.db.transaction(work).immediate();
    else work();
  }

  appendPending(entry: PendingMessage): void {
    const data = serialize([entry.message]);
    this.write((statements) => {
      entry.seq = Number(statements.insertPending.run(this.writer, entry.origin, entry.turn, entry.timestamp ?? null, data).lastInsertRowid);
    });
  }

  /**
   * Stores a finished exchange and deletes its pending rows in one transaction, and calls
   * `stored` with its id: at once, or (mode `exit`) after the flush that writes it. The id is
   * undefined when another writer claimed the rows (it stores the exchange instead).
   */
  commitExchange(row: ExchangeRow, entries: readonly PendingMessage[], vector: Float32Array, stored: (id: number | undefined) => void): void {
    const messages = serialize(row.messages);
    const blob = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    const commit = (statements: ReturnType<typeof prepareStatements>): number | undefined => {
      try {
        return statements.commitExchange(row, messages, blob, entries.map((entry) => entry.seq!));
      } catch (error) {
        if (error instanceof ClaimedElsewhere) return undefined;
        throw error;
      }
    };
    const statements = this.statements;
    if (!statements) return stored(undefined);
    if (this.deferred) {
      this.queue.push(() => {
        const id = commit(statements);
        return () => stored(id);
      });
      return;
    }
    this.flush(); // `async`: this exchange's pending rows first
    stored(commit(statements));
  }

  /** Commits queued writes (write-behind in `async`, held back in `exit`), then reports what they stored. */
  flush(): void {
    this.drainScheduled = false;
    if (!this.db || this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    const after: (() => void)[] = [];
    this.db
      .transaction(() => {
        for (const write of batch) {
          const then = write();
          if (then) after.push(then);
        }
      })
      .immediate();
    for (const then of after) then();
  }

  /** Flushes and leaves: this writer's pending rows stay for the next opener to adopt. */
  close(): void {
    if (this.db) {
      this.flush();
      this.db.prepare('DELETE FROM writers WHERE writer = ?').run(this.writer);
      this.db.close();
    }
    this.db = undefined;
    this.statements = undefined;
  }

  /** Inside the open transaction: checks the embedder, registers this writer, claims rows of writers that are gone. */
  private register(db: SqliteDatabase, file: string, embedderKey: string): void {
    db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('embedder', ?)`).run(embedderKey);
    const stored = db.prepare(`SELECT value FROM meta WHERE key = 'embedder'`).pluck().get() as string;
    if (stored !== embedderKey) {
      throw new MembenchError('INVALID_ARGUMENT', `${file}: its exchanges were embedded with ${stored}, not ${embedderKey}; use the same embedder or a fresh dir`);
    }
    const removeWriter = db.prepare('DELETE FROM writers WHERE writer = ?');
    for (const { writer, pid } of db.prepare('SELECT writer, pid FROM writers').all() as { writer: string; pid: number }[]) {
      if (!processAlive(pid)) removeWriter.run(writer);
    }
    db.prepare('INSERT INTO writers (writer, pid) VALUES (?, ?)').run(this.writer, process.pid);
    db.prepare('UPDATE pending SET writer = ? WHERE writer NOT IN (SELECT writer FROM writers)').run(this.writer);
  }

  private write(operation: (statements: ReturnType<typeof prepareStatements>) => void): void {
    const statements = this.statements;
    if (!statements) return; // `none`: memory only
    if (this.durability === 'sync') return operation(statements);
    this.queue.push(() => operation(statements));
    if (this.durability === 'async' && !this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => this.flush());
    }
  }
}
