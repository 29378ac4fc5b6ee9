/**
 * Session history in SQLite (WAL) behind LangChain's BaseListChatMessageHistory, so LangChain
 * users can reuse it. Keeps an in-memory copy so reading the history never re-reads the file.
 * `getMessages()` (LangChain's read) also asks SQLite for rows newer than the last one seen (one
 * indexed lookup), so an instance sees what other instances (other processes) appended to the
 * same session since it opened. The `messages` getter, the strategies' hot path, is this
 * instance's own view: strategies index into it, so it never changes under them.
 */
import path from 'node:path';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  type BaseMessage,
} from '@langchain/core/messages';
import type { DurabilityMode } from '../types.js';
import { namingFile, openDatabase, type SqliteDatabase } from '../../harness/core/sqlite.js';

/** `new SqliteChatMessageHistory({ dir, sessionId?, durability? })`. */
export interface SqliteHistoryOptions {
  /** Directory holding `history.sqlite` (ignored in `none` mode). */
  dir: string;
  /** The conversation's key: instances with the same dir and session id share one history (default `default`). */
  sessionId?: string;
  /** When a message is committed (default `sync`: before addMessage resolves, as a LangChain history is expected to persist). */
  durability?: DurabilityMode;
  /**
   * An open database to keep the messages in instead of `history.sqlite` (left open on close): a
   * strategy whose own rows live there can commit a message and them together.
   */
  database?: SqliteDatabase;
}

/** The file a history lives in, inside its dir. */
export const HISTORY_FILE = 'history.sqlite';

/** Chat history persisted as the durability mode promises: per message (`sync`), next tick (`async`), on close (`exit`), never (`none`). */
export class SqliteChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['membench', 'stores', 'message', 'sqlite'];
  private readonly options: Required<Omit<SqliteHistoryOptions, 'database'>> & Pick<SqliteHistoryOptions, 'database'>;
  private db: SqliteDatabase | undefined;
  /** What was persisted when it opened, then what this instance added and (after getMessages) others appended, in the order it learnt of them. */
  private readonly cache: BaseMessage[] = [];
  private pending: BaseMessage[] = [];
  private flushScheduled: Promise<void> | undefined;
  /** The highest row read from the file; rows after it are new, unless this instance wrote them. */
  private lastRead = 0;
  /** Rows this instance wrote after `lastRead`: skipped when reading others' rows. */
  private readonly written = new Set<number>();
  private statements:
    | { newer: (after: number) => { seq: number; data: string }[]; insert: (data: string) => number }
    | undefined;

  constructor(options: SqliteHistoryOptions) {
    super();
    this.options = { sessionId: 'default', durability: 'sync', ...options };
  }

  private get file(): string {
    return path.join(this.options.dir, HISTORY_FILE);
  }

  /** Opens the file and loads what was persisted; call once before use (idempotent). */
  open(): void {
    if (this.db || this.options.durability === 'none') return;
    const db = this.options.database ?? openDatabase(this.file, this.options.durability);
    try {
      namingFile(this.file, () => {
        // The row id orders messages, so several processes can append to one history at once.
        db.exec(`CREATE TABLE IF NOT EXISTS messages (
          seq INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, data TEXT NOT NULL);
          CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id, seq)`);
        const newer = db.prepare('SELECT seq, data FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq');
        const insert = db.prepare('INSERT INTO messages (session_id, data) VALUES (?, ?)');
        this.statements = {
          newer: (after) => newer.all(this.options.sessionId, after) as { seq: number; data: string }[],
          insert: (data) => Number(insert.run(this.options.sessionId, data).lastInsertRowid),
        };
        this.db = db;
        this.readNewRows();
      });
    } catch (error) {
      this.db = undefined;
      if (!this.options.database) db.close();
      throw error;
    }
  }

  /** Appends the rows other writers added since the last look (none at all on most reads). */
  private readNewRows(): void {
    const rows = this.statements?.newer(this.lastRead) ?? [];
    if (rows.length === 0) return;
    this.lastRead = rows.at(-1)!.seq;
    // Our own rows are in the cache already (and leave the set once seen).
    const theirs = rows.filter((row) => !this.written.delete(row.seq));
    if (theirs.length > 0)
      this.cache.push(...mapStoredMessagesToChatMessages(theirs.map((row) => JSON.parse(row.data))));
  }

  /** This instance's history without copying: strategies read it on the hot path. */
  get messages(): readonly BaseMessage[] {
    this.open();
    return this.cache;
  }

  /** The whole history, including what other instances appended to this session since it opened. */
  async getMessages(): Promise<BaseMessage[]> {
    this.open();
    this.readNewRows();
    return [...this.cache];
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    this.append(messages);
  }

  /** addMessages without the promise: in `sync` the insert is part of a transaction the caller has open. */
  append(messages: BaseMessage[]): void {
    this.open();
    this.cache.push(...messages);
    switch (this.options.durability) {
      case 'sync':
        this.write(messages);
        return;
      case 'async':
        this.pending.push(...messages);
        this.flushScheduled ??= new Promise<void>((resolve) =>
          setImmediate(() => {
            this.writePending();
            resolve();
          }),
        );
        return;
      case 'exit':
        this.pending.push(...messages);
        return;
      case 'none':
        return;
    }
  }

  override async clear(): Promise<void> {
    this.cache.length = 0;
    this.pending = [];
    this.written.clear();
    this.db?.prepare('DELETE FROM messages WHERE session_id = ?').run(this.options.sessionId);
  }

  /** Commits write-behind messages now. */
  async flush(): Promise<void> {
    this.writePending();
  }

  /** Persists what `exit` mode kept back, then releases the file. */
  async close(): Promise<void> {
    this.writePending();
    if (!this.options.database) this.db?.close();
    this.db = undefined;
  }

  private writePending(): void {
    this.flushScheduled = undefined;
    if (this.pending.length === 0 || !this.db) return;
    const batch = this.pending;
    this.pending = [];
    this.write(batch);
  }

  /** Commits `messages` in one transaction, remembering their rows (so reading others' rows skips them). */
  private write(messages: BaseMessage[]): void {
    const statements = this.statements!;
    const rows = this.db!.transaction(() =>
      mapChatMessagesToStoredMessages(messages).map((stored) => statements.insert(JSON.stringify(stored))),
    )();
    for (const row of rows) this.written.add(row);
  }
}
