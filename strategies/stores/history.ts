/**
 * Session history in SQLite (WAL) behind LangChain's BaseListChatMessageHistory, so LangChain
 * users can reuse it. Keeps an in-memory copy so reading the history never re-reads the file.
 */
import path from 'node:path';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { mapChatMessagesToStoredMessages, mapStoredMessagesToChatMessages, type BaseMessage } from '@langchain/core/messages';
import type { DurabilityMode } from '../types.js';
import { openDatabase, type SqliteDatabase } from '../../harness/core/sqlite.js';

export interface SqliteHistoryOptions {
  /** Directory holding `history.sqlite` (ignored in `none` mode). */
  dir: string;
  sessionId?: string;
  durability: DurabilityMode;
  /**
   * An open database to keep the messages in instead of `history.sqlite` (left open on close): a
   * strategy whose own rows live there can commit a message and them together.
   */
  database?: SqliteDatabase;
}

/** Chat history persisted as the durability mode promises: per message (`sync`), next tick (`async`), on close (`exit`), never (`none`). */
export class SqliteChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['membench', 'stores', 'message', 'sqlite'];
  private readonly options: Required<Omit<SqliteHistoryOptions, 'database'>> & Pick<SqliteHistoryOptions, 'database'>;
  private db: SqliteDatabase | undefined;
  private readonly cache: BaseMessage[] = [];
  private pending: BaseMessage[] = [];
  private flushScheduled: Promise<void> | undefined;
  private insert: ((messages: BaseMessage[]) => void) | undefined;

  constructor(options: SqliteHistoryOptions) {
    super();
    this.options = { sessionId: 'default', ...options };
  }

  /** Opens the file and loads what was persisted; call once before use (idempotent). */
  open(): void {
    if (this.db || this.options.durability === 'none') return;
    const db = this.options.database ?? openDatabase(path.join(this.options.dir, 'history.sqlite'), this.options.durability);
    // The row id orders messages, so several processes can append to one history at once.
    db.exec(`CREATE TABLE IF NOT EXISTS messages (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL, data TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS messages_session ON messages (session_id, seq)`);
    const rows = db
      .prepare('SELECT data FROM messages WHERE session_id = ? ORDER BY seq')
      .all(this.options.sessionId) as { data: string }[];
    this.cache.push(...mapStoredMessagesToChatMessages(rows.map((row) => JSON.parse(row.data))));
    const statement = db.prepare('INSERT INTO messages (session_id, data) VALUES (?, ?)');
    this.insert = db.transaction((messages: BaseMessage[]) => {
      for (const stored of mapChatMessagesToStoredMessages(messages)) statement.run(this.options.sessionId, JSON.stringify(stored));
    });
    this.db = db;
  }

  /** The history without copying: strategies read it on the hot path. */
  get messages(): readonly BaseMessage[] {
    this.open();
    return this.cache;
  }

  async getMessages(): Promise<BaseMessage[]> {
    this.open();
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
        this.insert!(messages);
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
    if (this.pending.length === 0 || !this.insert) return;
    const batch = this.pending;
    this.pending = [];
    this.insert(batch);
  }
}
