/**
 * The peer adapters on their real libraries: mem0ai's Memory talking to the local endpoint over
 * real HTTP (its facts from the offline stand-in, metered as maintenance), and LangGraph's SQLite
 * checkpointer and in-memory store. What each keeps across a reopen is asserted as it is.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MembenchError } from '../../harness/core/errors.js';
import { langgraph } from '../../strategies/adapters/langgraph.js';
import { mem0 } from '../../strategies/adapters/mem0.js';
import type { MemoryStrategy } from '../../strategies/types.js';
import { makeHarness, type Harness } from './conformance.js';
import { rm } from 'node:fs/promises';

const text = (messages: readonly BaseMessage[]): string =>
  messages.map((message) => String(message.content)).join('\n');

async function turn(strategy: MemoryStrategy, index: number, user: string, reply: string): Promise<void> {
  await strategy.save({ message: new HumanMessage(user), turn: index, stepId: `u${index}` });
  await strategy.load({ query: user, turn: index });
  await strategy.save({ message: new AIMessage(reply), turn: index, stepId: `a${index}` });
}

describe('mem0 adapter', () => {
  let harness: Harness;
  let strategy: MemoryStrategy;
  beforeEach(async () => {
    harness = await makeHarness(mem0, { recentTokens: 0 });
    strategy = harness.create();
    await strategy.open();
  });
  afterEach(async () => {
    await strategy.close().catch(() => undefined);
    await rm(harness.dir, { recursive: true, force: true });
  });

  it('keeps its history and vector store in the cell dir and its facts through a reopen, found by search with their step ids', async () => {
    await turn(strategy, 1, 'My sister Lin lives in Hangzhou.', 'Nice city.');
    await turn(strategy, 2, 'What should I cook tonight?', 'Maybe noodles.');
    await strategy.save({ message: new HumanMessage('Where does Lin live?'), turn: 3 });
    await strategy.close();
    for (const file of ['history.db', 'vector_store.db', 'config.json'])
      expect(existsSync(path.join(harness.dir, file))).toBe(true);
    strategy = harness.create();
    await strategy.open();
    const { messages, retrieved } = await strategy.load({ query: 'Where does Lin live?', turn: 3, rankDepth: 5 });
    // recentTokens 0: only mem0's memories, which hold the fact and not the question it was never told.
    expect(text(messages)).toContain('My sister Lin lives in Hangzhou.');
    expect(text(messages)).not.toContain('cook');
    expect(retrieved?.[0]?.stepIds).toEqual(['u1', 'a1']);
    expect(await strategy.snapshot!()).toEqual(['My sister Lin lives in Hangzhou.']);
  });

  it("is ready when open resolves: mem0's own initialization (vector store, its config.json) has run, so nothing of it writes into a dir after a close", async () => {
    const fresh = await makeHarness(mem0, { recentTokens: 0 });
    const opened = fresh.create();
    try {
      await opened.open();
      for (const file of ['vector_store.db', 'config.json'])
        expect(existsSync(path.join(fresh.dir, file)), file).toBe(true);
    } finally {
      await opened.close();
      await rm(fresh.dir, { recursive: true, force: true });
    }
  });

  it("sends mem0's extraction through the harness's meter: one maintenance call per exchange, mem0's own prompt counted", async () => {
    const usage = (
      harness.context().model as unknown as { usage: { maintenanceCalls: number; maintenanceTokens: number } }
    ).usage;
    await turn(strategy, 1, 'I am allergic to peanuts.', 'Noted.');
    await turn(strategy, 2, 'I live in Berlin.', 'OK.');
    await strategy.flush!();
    expect(usage.maintenanceCalls).toBe(2);
    // mem0's extraction instructions alone run to well over a thousand tokens per call.
    expect(usage.maintenanceTokens / usage.maintenanceCalls).toBeGreaterThan(1000);
  });

  it('offers durability sync only, saying so', async () => {
    expect(() => harness.create('async')).toThrow(MembenchError);
    expect(() => harness.create('none')).toThrow(/offers durability "sync" only/u);
  });
});

describe('langgraph adapter', () => {
  let harness: Harness;
  let strategy: MemoryStrategy;
  beforeEach(async () => {
    harness = await makeHarness(langgraph, { maxTokens: 60, k: 1 });
    strategy = harness.create();
    await strategy.open();
  });
  afterEach(async () => {
    await strategy.close().catch(() => undefined);
    await rm(harness.dir, { recursive: true, force: true });
  });

  it('trims the checkpointed thread to maxTokens and finds older exchanges in the store, which a reopen loses', async () => {
    await turn(strategy, 1, 'The locker code is 9931.', 'OK.');
    for (let index = 2; index <= 8; index++)
      await turn(strategy, index, `Filler message number ${index} about the weather.`, 'Sure.');
    await strategy.save({ message: new HumanMessage('What is the locker code?'), turn: 9 });
    const before = await strategy.load({ query: 'What is the locker code?', turn: 9, rankDepth: 3 });
    const thread = before.messages.filter((message) => message.getType() !== 'system');
    expect(harness.tokens.countMessages(thread)).toBeLessThanOrEqual(60);
    expect(text(before.messages)).toContain('9931'); // from the store, the thread is trimmed past it
    expect(text(thread)).not.toContain('9931');
    expect(before.retrieved?.[0]?.stepIds).toEqual(['u1', 'a1']);
    await strategy.close();
    expect(existsSync(path.join(harness.dir, 'checkpoints.db'))).toBe(true);
    strategy = harness.create();
    await strategy.open();
    const after = await strategy.load({ query: 'What is the locker code?', turn: 9 });
    expect(text(after.messages)).toContain('What is the locker code?'); // the thread survives in the checkpointer
    expect(text(after.messages)).not.toContain('9931'); // the in-memory store did not
    expect((await strategy.snapshot!()).join('\n')).toContain('9931'); // still in the checkpointed thread, beyond the trim
  });
});
