/**
 * Opens SQLite files the way every persistent store needs them: WAL, fsync per the durability
 * mode, and never a damaged file taken for an empty one. SQLite treats a 0-byte file as a fresh,
 * empty database; but membench creates a store whole (its header written under a temp name, then
 * linked into place), so no process ever sees a store of 0 bytes that membench is creating: a
 * 0-byte store file was emptied (truncated, or a disk that lost it) and is refused, naming the
 * file. A file that is not a database, or whose pages are damaged, is refused the same way.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { inTempWorkDir, MembenchError } from './errors.js';
import type { DurabilityMode } from './durability-mode.js';
import { inDurableBatch, onDurableBatch, type BatchHooks } from './durable-batch.js';

export type SqliteDatabase = Database.Database;

/** better-sqlite3's codes for a file that is not (or no longer) a sound database. */
const DAMAGED = new Set([
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_CORRUPT_VTAB',
  'SQLITE_CORRUPT_SEQUENCE',
  'SQLITE_CORRUPT_INDEX',
]);

/** What to do about a damaged store, in every message about one. */
const REMEDY = 'restore it from a backup, or delete it to start with an empty store (what it held is lost)';

/** Refuses a store file that exists with 0 bytes: it was emptied, and opening it would silently start from nothing. */
export function assertNotEmptied(file: string): void {
  const size = (() => {
    try {
      return statSync(file).size;
    } catch {
      return undefined; // no file yet: a fresh store
    }
  })();
  if (size === 0)
    throw new MembenchError(
      'CORRUPT_STORE',
      `${file}: the store file is empty (0 bytes): it was truncated or emptied, not created empty (membench writes its header at once); ${REMEDY}`,
    );
}

/** Runs `work` on a store file; a damaged-database error from SQLite becomes one that names the file and the remedy. */
export function namingFile<T>(file: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && DAMAGED.has(code))
      throw new MembenchError(
        'CORRUPT_STORE',
        `${file}: the SQLite store is damaged (${(error as Error).message}); ${REMEDY}`,
      );
    const words = storageProblem(error, file);
    if (words) throw new MembenchError('FILE_SYSTEM', words);
    throw error;
  }
}

/** What to do when `where` is under TMPDIR (the cell dirs are): say which variable moves them. */
function tempDirHint(where: string): string {
  return inTempWorkDir(where)
    ? `: it is under TMPDIR (${path.resolve(os.tmpdir())}), where membench keeps the cells' stores: free space there, or set TMPDIR to a disk with room, then rerun the failed cells with membench run --resume DIR (it keeps the finished ones)`
    : ': free space there, or write --out elsewhere, then run again (--resume DIR finishes an interrupted run)';
}

/**
 * A storage failure from SQLite (whose messages name no file: "database or disk is full", "disk
 * I/O error", "unable to open database file") or a full disk's errno, in words that name
 * `where` (the store file or the dir holding it) and what to do; undefined for anything else.
 */
export function storageProblem(error: unknown, where: string): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  const said = (error as Error).message;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT')
    return `no space left for ${where} (${said})${tempDirHint(where)}`;
  if (code.startsWith('SQLITE_IOERR'))
    return `disk I/O error on ${where} (${said}): a full or failing disk${tempDirHint(where)}`;
  if (code.startsWith('SQLITE_READONLY'))
    return `${where} cannot be written (${said}): it or its directory is read-only (permissions, or a read-only file system)`;
  if (code.startsWith('SQLITE_CANTOPEN')) {
    const stat = (() => {
      try {
        return statSync(where);
      } catch {
        return undefined;
      }
    })();
    if (stat?.isDirectory())
      return `${where} is a directory, not a SQLite store file: move it away or choose another path`;
    return `cannot open ${where} (${said}): its directory is missing, not writable or on a read-only file system`;
  }
  return undefined;
}

/**
 * Creates an empty store at `file` with its header already written, atomically: made under a
 * temp name, then hard-linked into place (a process that created it first wins; both then open
 * the same file).
 */
function createStoreFile(file: string): void {
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  try {
    const db = new Database(temp);
    db.pragma('journal_mode = WAL');
    db.close();
    linkSync(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${temp}${suffix}`, { force: true });
  }
}

/** Open `sync` databases; the files of those open at any time during the current durable batch, each with a keeper connection. */
const syncDatabases = new Set<SqliteDatabase>();
const batchFiles = new Map<string, SqliteDatabase>();

function openSyncDatabases(): SqliteDatabase[] {
  for (const db of syncDatabases) if (!db.open) syncDatabases.delete(db);
  return [...syncDatabases];
}

/**
 * Holds a store file open for the rest of the batch: SQLite checkpoints the WAL into the database
 * (and fsyncs both) when the last connection to a file closes, so a store closed and reopened at
 * every session boundary would pay that at each one. The keeper only reads.
 */
function keepDuringBatch(db: SqliteDatabase): void {
  if (batchFiles.has(db.name)) return;
  const keeper = new Database(db.name, { fileMustExist: true });
  keeper.prepare('SELECT count(*) FROM sqlite_master').get();
  batchFiles.set(db.name, keeper);
}

/** `sync` stores whose transaction of the current replayed session is open (inside a durable batch). */
const sessionTransactions = new Set<SqliteDatabase>();

/**
 * Opens the transaction that a store's writes of one replayed session share: the store's own
 * transactions inside it become savepoints (better-sqlite3 nests them), so the session costs one
 * commit instead of one per message (and FTS5 flushes its index once, not per exchange).
 */
function beginSessionTransaction(db: SqliteDatabase): void {
  if (db.inTransaction) return;
  db.exec('BEGIN');
  sessionTransactions.add(db);
}

/** Commits the session's transaction, if this store has one open (a failed statement may have rolled it back). */
function commitSessionTransaction(db: SqliteDatabase): void {
  if (sessionTransactions.delete(db) && db.open && db.inTransaction) db.exec('COMMIT');
}

// Inside a durable batch a `sync` store writes each replayed session in one transaction, committed
// as `normal` does (WAL, no fsync: a process crash loses only the session in progress), and its
// file stays open between sessions; at the batch's end the last session commits, the keepers close
// (the last one to a file checkpoints it, fsyncing), the WAL and the database file of every store
// the batch wrote are fsynced, and the stores go back to one commit and one fsync per write.
const SYNC_STORE_HOOKS: BatchHooks = {
  start() {
    for (const db of openSyncDatabases()) {
      // A store left open whose file is gone (its dir removed under it) has nothing to keep or commit.
      if (!existsSync(db.name)) continue;
      db.pragma('synchronous = NORMAL');
      keepDuringBatch(db);
      beginSessionTransaction(db);
    }
  },
  sessionEnded() {
    for (const db of [...sessionTransactions]) {
      commitSessionTransaction(db);
      if (db.open) beginSessionTransaction(db);
    }
  },
  end() {
    let failed: unknown;
    for (const db of openSyncDatabases()) {
      try {
        commitSessionTransaction(db);
      } catch (error) {
        // A commit that failed (a full disk): the cell fails with it, and the store is left consistent.
        failed ??= error;
        if (db.inTransaction) db.exec('ROLLBACK');
      }
      db.pragma('synchronous = FULL');
    }
    const files = [...batchFiles.keys()];
    for (const keeper of batchFiles.values()) keeper.close();
    batchFiles.clear();
    if (failed !== undefined) throw failed;
    return files.flatMap((file) => [`${file}-wal`, file]);
  },
};

/**
 * Runs `work` in one transaction of a `sync` store that commits without an fsync of its own: for
 * writes that only reshape what an earlier fsynced commit made durable (pending rows moved into
 * their exchange). The WAL keeps commits in order, so the next fsync covers this one, and a power
 * cut before it loses only the reshaping: the rows it came from are still there. Inside a durable
 * batch, or for a store of another mode, it is a plain transaction.
 */
export function commitDerived<T>(db: SqliteDatabase, work: () => T): T {
  if (!syncDatabases.has(db) || inDurableBatch()) return db.transaction(work).immediate();
  db.pragma('synchronous = NORMAL');
  try {
    return db.transaction(work).immediate();
  } finally {
    db.pragma('synchronous = FULL');
  }
}

/**
 * `sync` commits with synchronous=FULL (survives a power cut); the other modes use NORMAL,
 * which in WAL mode survives a process crash but may lose the last commits on a power cut.
 * The schema is read at once, so a file that is not a database fails here, by name.
 */
export function openDatabase(file: string, durability: DurabilityMode): SqliteDatabase {
  if (!existsSync(file)) namingFile(file, () => createStoreFile(file));
  assertNotEmptied(file);
  const db = namingFile(file, () => new Database(file));
  try {
    namingFile(file, () => {
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${durability === 'sync' && !inDurableBatch() ? 'FULL' : 'NORMAL'}`);
      // Concurrent agent processes share files: wait for a lock rather than fail.
      db.pragma('busy_timeout = 10000');
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    });
    if (durability === 'sync') {
      onDurableBatch(SYNC_STORE_HOOKS);
      syncDatabases.add(db);
      // A store closed inside a batch (a session boundary that reopens it) commits its session first:
      // better-sqlite3 would roll an open transaction back.
      const close = db.close.bind(db);
      db.close = () => {
        commitSessionTransaction(db);
        return close();
      };
      if (inDurableBatch()) {
        keepDuringBatch(db);
        beginSessionTransaction(db);
      }
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}
