/**
 * Every message in a SQLite session history, loaded whole: `buffer` is this class as it is, and
 * `window` extends it with what it trims at load time.
 */
import { SqliteChatMessageHistory } from '../stores/history.js';
import { messageText } from '../../harness/core/tokens.js';
import type { LoadResult, MemoryEvent, MemoryStrategy, StrategyContext } from '../types.js';

export class HistoryMemory implements MemoryStrategy {
  readonly capabilities = { persistent: true, explicitMemory: false, backgroundWork: false };
  protected readonly history: SqliteChatMessageHistory;

  constructor(protected readonly context: StrategyContext) {
    this.history = new SqliteChatMessageHistory({ dir: context.dir, durability: context.durability });
  }

  async open(): Promise<void> {
    this.history.open();
  }

  async save(event: MemoryEvent): Promise<void> {
    await this.history.addMessage(event.message);
  }

  async load(): Promise<LoadResult> {
    return { messages: [...this.history.messages] };
  }

  async flush(): Promise<void> {
    await this.history.flush();
  }

  async snapshot(): Promise<string[]> {
    return this.history.messages.map(messageText);
  }

  /** Mode `sync`: the history in process is what the file holds, so a new session needs no reopen (MemoryStrategy.newSession). */
  async newSession(): Promise<boolean> {
    return this.context.durability === 'sync';
  }

  async close(): Promise<void> {
    await this.history.close();
  }
}
