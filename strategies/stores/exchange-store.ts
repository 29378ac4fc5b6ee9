/**
 * The SQLite side of the exchange-retrieving strategies (`vector`, `bm25`, `hybrid`): every
 * finished exchange with its text, messages, the scenario step ids it holds, and what each
 * retriever needs (its vector, its segmented terms), plus the messages of exchanges in progress.
 * These rows are the durable source of truth: the HNSW file is only a cache, and the FTS5 table
 * of terms (when the store has one) is written in the same transaction as its exchange. Several
 * processes may write one store at once:
 *
 * - exchange ids are assigned by SQLite (INTEGER PRIMARY KEY), so writers never collide;
 * - every store instance is a writer with its own random id, registered in `writers` with its
 *   pid; pending rows carry the writer that owns them (and the writer that first saved them), and
 *   a writer only finishes or deletes its own rows;
 * - on open, pending rows of writers that are gone (closed cleanly, or their process is dead) are
 *   claimed in one IMMEDIATE transaction, so exactly one opener adopts them: it indexes the
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
import {
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type BaseMessage,
} from '@langchain/core/messages';
import { commitDerived, namingFile, openDatabase, type SqliteDatabase } from '../../harness/core/sqlite.js';
import { LexicalIndex } from './lexical-index.js';
import { checkIdentity, recordDimensions, type StoreIdentity } from './store-identity.js';
import { processAlive } from './vector-index.js';
import type { DurabilityMode } from '../types.js';

/** What a store keeps per exchange besides its text and messages, and the file it lives in. */
export interface ExchangeStoreOptions {
  /** The SQLite file name inside the strategy's dir. */
  file: string;
  /** Exchanges carry an embedding (`vector`, `hybrid`). */
  vectors: boolean;
  /** Exchanges carry segmented terms, indexed in an FTS5 table in the same file (`bm25`, `hybrid`). */
  terms: boolean;
  /**
   * Called inside an exchange's transaction, after its row and before its terms: the
   * `mid_memory_write` crash point. A kill there leaves neither (SQLite rolls the transaction
   * back) and the pending rows in place, so the next opener stores the exchange again, once.
   */
  midWrite?: () => void;
}

/** A message of an exchange in progress; `seq` is its row, known once written. */
export interface PendingMessage {
  seq?: number;
  /** The writer that first saved it (claimed rows keep it, so each writer's messages stay together). */
  origin: string;
  message: BaseMessage;
  turn: number;
  timestamp?: string;
  /** The scenario step the message came from, when the step has an id. */
  stepId?: string;
  /** The conversation session it was said in (MemoryEvent.session). */
  session?: number;
  /** What a paper's corpus holds of it (MemoryEvent.indexText); kept in memory only. */
  indexText?: string;
}

/** A stored exchange's id, when it happened and the steps it holds (text and messages are read on demand). */
export interface StoredExchange {
  id: number;
  turn: number;
  timestamp?: string;
  stepIds: string[];
  /** The conversation session of its first message (MemoryEvent.session), when it was given. */
  session?: number;
}

/** What the retrievers derive from an exchange's text. */
export interface ExchangeFeatures {
  vector?: Float32Array;
  /** Index terms joined by spaces. */
  terms?: string;
}

/** An exchange to store: what it says, rendered, its messages, its steps and its features. */
export interface ExchangeRow extends ExchangeFeatures {
  turn: number;
  timestamp?: string;
  text: string;
  messages: BaseMessage[];
  stepIds: string[];
  session?: number;
}

interface ExchangeDbRow {
  id: number;
  turn: number;
  timestamp: string | null;
  step_ids: string | null;
  session: number | null;
}

const TERMS_TABLE = 'exchange_terms';

const serialize = (messages: BaseMessage[]): string => JSON.stringify(mapChatMessagesToStoredMessages(messages));
const deserialize = (json: string): BaseMessage[] => mapStoredMessagesToChatMessages(JSON.parse(json));
const toVector = (blob: Buffer): Float32Array =>
  new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
const toBlob = (vector: Float32Array | undefined): Buffer | null =>
  vector ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength) : null;
const toStored = (row: ExchangeDbRow): StoredExchange => ({
  id: row.id,
  turn: row.turn,
  ...(row.timestamp !== null ? { timestamp: row.timestamp } : {}),
  stepIds: row.step_ids ? (JSON.parse(row.step_ids) as string[]) : [],
  ...(row.session !== null ? { session: row.session } : {}),
});

const SCHEMA = `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS exchanges (id INTEGER PRIMARY KEY, turn INTEGER NOT NULL, timestamp TEXT,
    text TEXT NOT NULL, messages TEXT NOT NULL, vector BLOB, step_ids TEXT, terms TEXT, session INTEGER);
  CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, writer TEXT NOT NULL, origin TEXT NOT NULL,
    turn INTEGER NOT NULL, timestamp TEXT, message TEXT NOT NULL, step_id TEXT, session INTEGER);
  CREATE INDEX IF NOT EXISTS pending_writer ON pending (writer, seq);
  CREATE TABLE IF NOT EXISTS writers (writer TEXT PRIMARY KEY, pid INTEGER NOT NULL);`;

export type { StoreIdentity } from './store-identity.js';

/** Columns added after the first release: a file written before them gets them (empty) on open. */
const ADDED_COLUMNS: [table: string, column: string][] = [
  ['exchanges', 'step_ids TEXT'],
  ['exchanges', 'terms TEXT'],
  ['pending', 'step_id TEXT'],
  ['exchanges', 'session INTEGER'],
  ['pending', 'session INTEGER'],
];

function addMissingColumns(db: SqliteDatabase): void {
  for (const [table, definition] of ADDED_COLUMNS) {
    const column = definition.split(' ')[0]!;
    const columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[];
    if (!columns.includes(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${definition}`);
  }
}

function prepareStatements(
  db: SqliteDatabase,
  writer: string,
  lexical: LexicalIndex | undefined,
  midWrite: (() => void) | undefined,
) {
  const deletePending = db.prepare('DELETE FROM pending WHERE seq = ? AND writer = ?');
  const insertExchange = db.prepare(
    'INSERT INTO exchanges (turn, timestamp, text, messages, vector, step_ids, terms, session) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  return {
    maxId: db.prepare('SELECT max(id) AS id FROM exchanges').pluck(),
    exchangesAfter: db.prepare(
      'SELECT id, turn, timestamp, step_ids, session, vector, terms FROM exchanges WHERE id > ? ORDER BY id',
    ),
    vectorOf: db.prepare('SELECT vector FROM exchanges WHERE id = ?').pluck(),
    readExchange: db.prepare('SELECT text, messages FROM exchanges WHERE id = ?'),
    insertPending: db.prepare(
      'INSERT INTO pending (writer, origin, turn, timestamp, message, step_id, session) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    /** Stores an exchange (and its terms) and deletes its pending rows; undefined (and nothing written) when another writer claimed them. */
    commitExchange: db.transaction((row: ExchangeRow, messages: string, seqs: number[]): number | undefined => {
      let deleted = 0;
      for (const seq of seqs) deleted += deletePending.run(seq, writer).changes;
      if (deleted !== seqs.length) throw new ClaimedElsewhere();
      const stepIds = row.stepIds.length > 0 ? JSON.stringify(row.stepIds) : null;
      const id = Number(
        insertExchange.run(
          row.turn,
          row.timestamp ?? null,
          row.text,
          messages,
          toBlob(row.vector),
          stepIds,
          row.terms ?? null,
          row.session ?? null,
        ).lastInsertRowid,
      );
      midWrite?.();
      if (lexical && row.terms !== undefined) lexical.add(id, row.terms);
      return id;
    }).immediate,
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
  private terms: LexicalIndex | undefined;
  private queue: (() => (() => void) | void)[] = [];
  private drainScheduled = false;

  constructor(
    private readonly dir: string,
    private readonly durability: DurabilityMode,
    private readonly options: ExchangeStoreOptions,
  ) {}

  /** Whether finished exchanges wait for flush() (mode `exit`) rather than being stored at once. */
  get deferred(): boolean {
    return this.durability === 'exit';
  }

  /** The file's FTS5 index of terms (stores with terms, once open; modes `sync`, `async` and `exit`). */
  get lexical(): LexicalIndex | undefined {
    return this.terms;
  }

  private get file(): string {
    return path.join(this.dir, this.options.file);
  }

  /**
   * Opens the file, checks it was written with the same embedder and tokenizer, registers this
   * writer, claims the pending rows of writers that are gone, and returns the stored exchanges
   * (ascending), this writer's pending messages (each origin's messages together, in the order
   * they were saved) and the dimension of the stored vectors (when any were recorded).
   */
  open(identity: StoreIdentity): { exchanges: StoredExchange[]; pending: PendingMessage[]; dimensions?: number } {
    if (this.durability === 'none') return { exchanges: [], pending: [] };
    mkdirSync(this.dir, { recursive: true });
    const db = openDatabase(this.file, this.durability);
    let dimensions: number | undefined;
    try {
      dimensions = namingFile(this.file, () => {
        db.exec(SCHEMA);
        addMissingColumns(db);
        if (this.options.terms)
          this.terms = new LexicalIndex(db, TERMS_TABLE, { kind: 'external', table: 'exchanges', rowid: 'id' });
        return db.transaction(() => this.register(db, identity)).immediate();
      });
    } catch (error) {
      db.close();
      this.terms = undefined;
      throw error;
    }
    this.db = db;
    this.statements = prepareStatements(db, this.writer, this.terms, this.options.midWrite);
    const exchanges = namingFile(this.file, () =>
      (
        db.prepare('SELECT id, turn, timestamp, step_ids, session FROM exchanges ORDER BY id').all() as ExchangeDbRow[]
      ).map(toStored),
    );
    const rows = db
      .prepare(
        'SELECT seq, origin, turn, timestamp, message, step_id, session FROM pending WHERE writer = ? ORDER BY seq',
      )
      .all(this.writer) as {
      seq: number;
      origin: string;
      turn: number;
      timestamp: string | null;
      message: string;
      step_id: string | null;
      session: number | null;
    }[];
    const byOrigin = new Map<string, PendingMessage[]>();
    for (const row of rows) {
      const entry: PendingMessage = {
        seq: row.seq,
        origin: row.origin,
        turn: row.turn,
        message: deserialize(row.message)[0]!,
        ...(row.timestamp !== null ? { timestamp: row.timestamp } : {}),
        ...(row.step_id !== null ? { stepId: row.step_id } : {}),
        ...(row.session !== null ? { session: row.session } : {}),
      };
      byOrigin.set(row.origin, [...(byOrigin.get(row.origin) ?? []), entry]);
    }
    return { exchanges, pending: [...byOrigin.values()].flat(), ...(dimensions !== undefined ? { dimensions } : {}) };
  }

  /**
   * Records the dimension of the vectors once the embedder has shown it (an OpenAI-compatible
   * model's first response); refuses vectors of another dimension than the file already holds.
   */
  recordDimensions(embedder: string, dimensions: number): void {
    const db = this.db;
    if (db) recordDimensions(db, this.file, embedder, dimensions);
  }

  /** The highest stored exchange id (0 when none): an O(1) check for other writers' rows. */
  latestId(): number {
    if (!this.statements) return 0;
    this.rowsRead++;
    return (this.statements.maxId.get() as number | null) ?? 0;
  }

  /** Exchanges stored after `id`, with their features (other writers' rows since the last look). */
  exchangesAfter(id: number): (StoredExchange & ExchangeFeatures)[] {
    if (!this.statements) return [];
    const rows = this.statements.exchangesAfter.all(id) as (ExchangeDbRow & {
      vector: Buffer | null;
      terms: string | null;
    })[];
    this.rowsRead += rows.length;
    return rows.map((row) => ({
      ...toStored(row),
      ...(row.vector ? { vector: toVector(row.vector) } : {}),
      ...(row.terms !== null ? { terms: row.terms } : {}),
    }));
  }

  /** Stored vectors of the given ids (read on open, for those the index file lacks). */
  *vectorsOf(ids: readonly number[]): Generator<[number, Float32Array]> {
    const statements = this.statements;
    if (!statements) return;
    for (const id of ids) {
      const blob = statements.vectorOf.get(id) as Buffer | null | undefined;
      if (blob) yield [id, toVector(blob)];
    }
  }

  /** Every stored exchange's terms (mode `exit` rebuilds its in-memory index from them on open). */
  *storedTerms(): Generator<[number, string]> {
    if (!this.db) return;
    for (const row of this.db
      .prepare('SELECT id, terms FROM exchanges WHERE terms IS NOT NULL ORDER BY id')
      .iterate() as Iterable<{ id: number; terms: string }>)
      yield [row.id, row.terms];
  }

  /** Text and messages of a stored exchange (after a reopen they are not kept in memory). */
  readExchange(id: number): { text: string; messages: BaseMessage[] } {
    const row = this.statements?.readExchange.get(id) as { text: string; messages: string } | undefined;
    if (!row) throw new Error(`${this.options.file}: exchange ${id} is not stored`);
    this.rowsRead++;
    return { text: row.text, messages: deserialize(row.messages) };
  }

  /** Every stored exchange's text and every pending message of every writer (for durability checks, not the hot path). */
  storedTexts(): { exchanges: string[]; pending: BaseMessage[] } {
    const db = this.db;
    if (!db) return { exchanges: [], pending: [] };
    const exchanges = db.prepare('SELECT text FROM exchanges ORDER BY id').pluck().all() as string[];
    const pending = (db.prepare('SELECT message FROM pending ORDER BY seq').pluck().all() as string[]).map(
      (json) => deserialize(json)[0]!,
    );
    return { exchanges, pending };
  }

  /**
   * Runs `work`'s writes in one commit (mode `sync`; the other modes queue or hold their writes
   * anyway). `derived`: they add nothing not durable yet (pending messages moved into their
   * exchange), so the commit has no fsync of its own (commitDerived).
   */
  inOneCommit(work: () => void, { derived = false }: { derived?: boolean } = {}): void {
    if (this.durability !== 'sync' || !this.db) work();
    else if (derived) commitDerived(this.db, work);
    else this.db.transaction(work).immediate();
  }

  appendPending(entry: PendingMessage): void {
    if (!this.statements) return; // `none`: memory only, nothing to serialize
    const data = serialize([entry.message]);
    this.write((statements) => {
      entry.seq = Number(
        statements.insertPending.run(
          this.writer,
          entry.origin,
          entry.turn,
          entry.timestamp ?? null,
          data,
          entry.stepId ?? null,
          entry.session ?? null,
        ).lastInsertRowid,
      );
    });
  }

  /**
   * Stores a finished exchange and deletes its pending rows in one transaction, and calls
   * `stored` with its id: at once, or (mode `exit`) after the flush that writes it. The id is
   * undefined when another writer claimed the rows (it stores the exchange instead).
   */
  commitExchange(row: ExchangeRow, entries: readonly PendingMessage[], stored: (id: number | undefined) => void): void {
    const messages = serialize(row.messages);
    const commit = (statements: ReturnType<typeof prepareStatements>): number | undefined => {
      try {
        return statements.commitExchange(
          row,
          messages,
          entries.map((entry) => entry.seq!),
        );
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
    this.terms = undefined;
  }

  /**
   * Inside the open transaction: checks the embedder and tokenizer, registers this writer, claims
   * rows of writers that are gone. Returns the recorded vector dimension, if any.
   */
  private register(db: SqliteDatabase, identity: StoreIdentity): number | undefined {
    const dimensions = checkIdentity(db, this.file, identity);
    const removeWriter = db.prepare('DELETE FROM writers WHERE writer = ?');
    for (const { writer, pid } of db.prepare('SELECT writer, pid FROM writers').all() as {
      writer: string;
      pid: number;
    }[]) {
      if (!processAlive(pid)) removeWriter.run(writer);
    }
    db.prepare('INSERT INTO writers (writer, pid) VALUES (?, ?)').run(this.writer, process.pid);
    db.prepare('UPDATE pending SET writer = ? WHERE writer NOT IN (SELECT writer FROM writers)').run(this.writer);
    return dimensions;
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
