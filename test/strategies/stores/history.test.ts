import { truncateSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SqliteChatMessageHistory } from '../../../strategies/stores/history.js';
import type { DurabilityMode } from '../../../strategies/types.js';
import { tempDir as newTempDir } from '../../helpers/temp-dir.js';

const tempDir = () => newTempDir('membench-history-');
const rowsIn = (dir: string): number => {
  const db = new Database(path.join(dir, 'history.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('SqliteChatMessageHistory', () => {
  it('is a LangChain BaseListChatMessageHistory and round-trips every message type', async () => {
    const dir = await tempDir();
    const history = new SqliteChatMessageHistory({ dir, durability: 'sync' });
    expect(history).toBeInstanceOf(BaseListChatMessageHistory);
    await history.addUserMessage('我想做红烧肉');
    await history.addMessages([
      new AIMessage({
        content: '',
        tool_calls: [{ id: 'c1', name: 'search', args: { q: '红烧肉' }, type: 'tool_call' }],
      }),
      new ToolMessage({ content: '{"steps":2}', tool_call_id: 'c1', name: 'search' }),
    ]);
    await history.addAIMessage('先焯水。');
    await history.close();
    const reopened = new SqliteChatMessageHistory({ dir, durability: 'sync' });
    const messages = await reopened.getMessages();
    expect(messages.map((message) => message.getType())).toEqual(['human', 'ai', 'tool', 'ai']);
    expect((messages[1] as AIMessage).tool_calls?.[0]?.args).toEqual({ q: '红烧肉' });
    expect((messages[2] as ToolMessage).tool_call_id).toBe('c1');
    await reopened.clear();
    expect(await reopened.getMessages()).toEqual([]);
    await reopened.close();
  });

  it.each<[DurabilityMode, number, number]>([
    // mode, rows committed before close, rows after close
    ['sync', 3, 3],
    ['exit', 0, 3],
  ])('commits per its durability mode: %s', async (durability, beforeClose, afterClose) => {
    const dir = await tempDir();
    const history = new SqliteChatMessageHistory({ dir, durability });
    history.open();
    for (const text of ['a', 'b', 'c']) await history.addMessage(new HumanMessage(text));
    expect(rowsIn(dir)).toBe(beforeClose);
    await history.close();
    expect(rowsIn(dir)).toBe(afterClose);
  });

  it('commits write-behind messages on the next tick in async mode', async () => {
    const dir = await tempDir();
    const history = new SqliteChatMessageHistory({ dir, durability: 'async' });
    history.open();
    await history.addMessages([new HumanMessage('a'), new HumanMessage('b')]);
    expect(rowsIn(dir)).toBe(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(rowsIn(dir)).toBe(2);
    await history.close();
  });

  it('persists by default, as a LangChain history is expected to (durability defaults to sync)', async () => {
    const dir = await tempDir();
    const history = new SqliteChatMessageHistory({ dir });
    await history.addMessage(new HumanMessage('kept without saying so'));
    expect(rowsIn(dir)).toBe(1);
    await history.close();
    const reopened = new SqliteChatMessageHistory({ dir });
    expect((await reopened.getMessages()).map((message) => message.content)).toEqual(['kept without saying so']);
    await reopened.close();
  });

  it('shows one instance what another appended to the same session since it opened, once, in order', async () => {
    const dir = await tempDir();
    const first = new SqliteChatMessageHistory({ dir, sessionId: 'chat' });
    const second = new SqliteChatMessageHistory({ dir, sessionId: 'chat' });
    const other = new SqliteChatMessageHistory({ dir, sessionId: 'elsewhere' });
    first.open();
    second.open();
    await first.addMessage(new HumanMessage('one'));
    await second.addMessages([new AIMessage('two'), new HumanMessage('three')]);
    await other.addMessage(new HumanMessage('not this session'));
    await first.addMessage(new AIMessage('four'));
    expect((await first.getMessages()).map((message) => message.content)).toEqual(['one', 'four', 'two', 'three']);
    expect((await second.getMessages()).map((message) => message.content)).toEqual(['two', 'three', 'one', 'four']);
    // Asked again, nothing is added twice; a fresh instance reads the file's order.
    expect((await first.getMessages()).length).toBe(4);
    const fresh = new SqliteChatMessageHistory({ dir, sessionId: 'chat' });
    expect((await fresh.getMessages()).map((message) => message.content)).toEqual(['one', 'two', 'three', 'four']);
    // The strategies' view (`messages`) stays this instance's own, so indexes into it never shift.
    expect(second.messages.map((message) => message.content)).toEqual(['two', 'three', 'one', 'four']);
    for (const history of [first, second, other, fresh]) await history.close();
  });

  it('refuses a history file emptied to 0 bytes or damaged, naming it, instead of starting empty', async () => {
    const dir = await tempDir();
    const history = new SqliteChatMessageHistory({ dir });
    await history.addMessages(
      Array.from({ length: 100 }, (_, index) => new HumanMessage(`message ${index} ${'x'.repeat(100)}`)),
    );
    await history.close();
    const file = path.join(dir, 'history.sqlite');
    // Header and schema intact, the message pages overwritten: SQLite's "malformed", with the file named.
    const image = await readFile(file);
    await writeFile(file, image.fill(0x5a, 4096));
    await expect(new SqliteChatMessageHistory({ dir }).getMessages()).rejects.toThrow(
      `${file}: the SQLite store is damaged (database disk image is malformed)`,
    );
    truncateSync(file, 0);
    await expect(new SqliteChatMessageHistory({ dir }).getMessages()).rejects.toThrow(
      `${file}: the store file is empty (0 bytes): it was truncated or emptied`,
    );
    await writeFile(file, Buffer.alloc(8192, 7));
    await expect(new SqliteChatMessageHistory({ dir }).getMessages()).rejects.toThrow(
      `${file}: the SQLite store is damaged (file is not a database)`,
    );
  });

  it('writes no file at all in none mode', async () => {
    const dir = await tempDir();
    const history = new SqliteChatMessageHistory({ dir, durability: 'none' });
    await history.addMessage(new HumanMessage('a'));
    await history.close();
    expect(await readdir(dir)).toEqual([]);
  });
});
