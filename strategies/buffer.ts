/** `buffer`: every message, always (LangChain's BufferMemory), persisted as a SQLite session history. */
import { z } from 'zod';
import { SqliteChatMessageHistory } from './stores/history.js';
import { messageText } from '../harness/core/tokens.js';
import { defineStrategy, type LoadResult, type MemoryEvent, type MemoryStrategy, type StrategyContext } from './types.js';

export const bufferOptions = z.object({}).strict();

/** Every message in a SQLite session history; `window` extends it with what it trims at load time. */
export class BufferStrategy implements MemoryStrategy {
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

  async close(): Promise<void> {
    await this.history.close();
  }
}

export const buffer = defineStrategy({
  name: 'buffer',
  description: 'every message, always (LangChain BufferMemory)',
  options: bufferOptions,
  defaultDurability: 'sync',
  keepsVerbatim: true,
  create: (context) => new BufferStrategy(context),
});
