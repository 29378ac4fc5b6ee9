/** Opens SQLite files the way every persistent strategy needs them: WAL, and fsync per the durability mode. */
import Database from 'better-sqlite3';
import type { DurabilityMode } from './durability-mode.js';

export type SqliteDatabase = Database.Database;

/**
 * `sync` commits with synchronous=FULL (survives a power cut); the other modes use NORMAL,
 * which in WAL mode survives a process crash but may lose the last commits on a power cut.
 */
export function openDatabase(file: string, durability: DurabilityMode): SqliteDatabase {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${durability === 'sync' ? 'FULL' : 'NORMAL'}`);
  // Concurrent agent processes share files: wait for a lock rather than fail.
  db.pragma('busy_timeout = 10000');
  return db;
}
