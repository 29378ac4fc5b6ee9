import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { writeFileAtomic } from '../../../harness/core/fs.js';
import { SqliteChatMessageHistory } from '../../../strategies/stores/history.js';
import type { DurabilityMode } from '../../../strategies/types.js';

const tempDir = () => mkdtemp(path.join(os.tmpdir(), 'membench-history-'));
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
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'search', args: { q: '红烧肉' }, type: 'tool_call' }] }),
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

  it('writes no file at all in none mode', async () => {
    const dir = await tempDir();
    const history = new SqliteChatMessageHistory({ dir, durability: 'none' });
    await history.addMessage(new HumanMessage('a'));
    await history.close();
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('writeFileAtomic', () => {
  it('replaces the file whole and leaves no temp file behind', async () => {
    const dir = await tempDir();
    const file = path.join(dir, 'nested', 'results.json');
    await writeFileAtomic(file, 'first');
    await writeFileAtomic(file, '第二');
    expect(await readFile(file, 'utf8')).toBe('第二');
    expect(await readdir(path.dirname(file))).toEqual(['results.json']);
  });
});
