import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { HashedEmbedder, MeteredModel, OfflineModel, type ChatModel } from '../../harness/models/index.js';
import { SUMMARY_FILE } from '../../strategies/shared/summarizer.js';
import { TokenCounter } from '../../harness/core/tokens.js';
import { summary } from '../../strategies/summary.js';
import type { DurabilityMode, MemoryStrategy, StrategyContext } from '../../strategies/types.js';
import { describeConformance, exchange } from './conformance.js';
import { GatedModel } from './gated-model.js';
import { tempDir } from '../helpers/temp-dir.js';

describeConformance(summary, { options: { every: 2, summarize: 'async' } });

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function setup(inner: ChatModel = new OfflineModel()) {
  const dir = await tempDir('membench-summary-');
  dirs.push(dir);
  const tokens = new TokenCounter('gpt-4o');
  const model = new MeteredModel(inner, tokens);
  const context = (durability: DurabilityMode = 'sync', chat: ChatModel = model): StrategyContext => ({
    dir,
    tokens,
    model: chat,
    embedder: new HashedEmbedder(16),
    durability,
    seed: 1,
    now: () => new Date('2026-01-01T00:00:00Z'),
  });
  const open = async (
    options: Record<string, unknown> = {},
    durability: DurabilityMode = 'sync',
    chat?: ChatModel,
  ): Promise<MemoryStrategy> => {
    const strategy = summary.create(context(durability, chat), summary.options.parse(options));
    await strategy.open();
    return strategy;
  };
  return { dir, tokens, model, open };
}

const texts = (messages: readonly BaseMessage[]) => messages.map((message) => String(message.content));
const summaryRow = (dir: string) => {
  const db = new Database(path.join(dir, SUMMARY_FILE), { readonly: true });
  try {
    return db.prepare('SELECT version, text FROM summary').get() as { version: number; text: string };
  } finally {
    db.close();
  }
};
const jobRows = (dir: string) => {
  const db = new Database(path.join(dir, SUMMARY_FILE), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM jobs').get() as { n: number }).n;
  } finally {
    db.close();
  }
};

describe('summary strategy', () => {
  it('loads the summary as a system message plus the current user message', async () => {
    const { open } = await setup();
    const strategy = await open();
    await exchange(strategy, 1, 'My cat is called Mochi.', 'Nice name!');
    await exchange(strategy, 2, '我对花生过敏。', '好的。');
    await strategy.save({ message: new HumanMessage('What is my cat called?'), turn: 3 });
    const { messages } = await strategy.load({ query: 'What is my cat called?', turn: 3 });
    expect(messages).toHaveLength(2);
    expect(messages[0]).toBeInstanceOf(SystemMessage);
    expect(String(messages[0]!.content)).toContain('My cat is called Mochi.');
    expect(String(messages[0]!.content)).toContain('我对花生过敏');
    expect(messages[1]!.content).toBe('What is my cat called?');
    await strategy.close();
  });

  it('counts its summarisation calls as maintenance through the metered model', async () => {
    const { model, open } = await setup();
    const strategy = await open();
    for (let turn = 1; turn <= 5; turn++)
      await exchange(strategy, turn, `Fact ${turn}: the blue box holds ${turn * 3} apples.`, 'OK.');
    expect(model.usage.maintenanceCalls).toBe(5);
    expect(model.usage.maintenanceTokens).toBeGreaterThan(0);
    expect(model.usage.replyTokens + model.usage.answerTokens).toBe(0);
    await strategy.close();
  });

  it('persists a versioned summary in sync mode with the next write (its job queued until then), and reads it back on reopen', async () => {
    const { dir, open } = await setup();
    const strategy = await open();
    await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
    await exchange(strategy, 2, 'Lin works as a chef.', 'OK.');
    // The first fold was committed with the second exchange's first message; the second one's result
    // waits for the next write, its messages and its job on disk meanwhile (no flush, no close).
    expect(summaryRow(dir)).toEqual({ version: 1, text: 'Lin lives in Hangzhou.' });
    expect(jobRows(dir)).toBe(1);
    expect(texts((await strategy.load({ query: 'Lin?', turn: 3 })).messages)).toEqual([
      'Summary of the earlier conversation:\nLin lives in Hangzhou. Lin works as a chef.',
    ]);
    // Killed now (never closed), the next process folds the queued job again: nothing is lost.
    const afterCrash = await open();
    await afterCrash.flush!();
    expect(summaryRow(dir)).toEqual({ version: 2, text: 'Lin lives in Hangzhou. Lin works as a chef.' });
    expect(jobRows(dir)).toBe(0);
    await afterCrash.close();
    const reopened = await open();
    const { messages } = await reopened.load({ query: 'Where does Lin live?', turn: 3 });
    expect(texts(messages)).toEqual([
      'Summary of the earlier conversation:\nLin lives in Hangzhou. Lin works as a chef.',
    ]);
    await reopened.close();
  });

  it('summarises every N exchanges and shows the exchanges not folded yet', async () => {
    const { model, open } = await setup();
    const strategy = await open({ every: 3 });
    await exchange(strategy, 1, 'The red key opens the shed.', 'OK.');
    await exchange(strategy, 2, 'The blue key opens the gate.', 'OK.');
    expect(model.usage.maintenanceCalls).toBe(0);
    expect(texts((await strategy.load({ query: 'keys?', turn: 3 })).messages)).toEqual([
      'The red key opens the shed.',
      'OK.',
      'The blue key opens the gate.',
      'OK.',
    ]);
    await exchange(strategy, 3, 'The green key opens the car.', 'OK.');
    expect(model.usage.maintenanceCalls).toBe(1);
    expect(texts((await strategy.load({ query: 'keys?', turn: 4 })).messages)).toEqual([
      'Summary of the earlier conversation:\nThe red key opens the shed. The blue key opens the gate. The green key opens the car.',
    ]);
    await strategy.close();
  });

  it('caps the summary at maxSummaryTokens', async () => {
    const { tokens, open } = await setup();
    const strategy = await open({ maxSummaryTokens: 20 });
    for (let turn = 1; turn <= 30; turn++)
      await exchange(
        strategy,
        turn,
        `Item ${turn} is a ${turn % 2 ? 'red' : '绿色'} lamp priced ${turn * 11} dollars.`,
        'OK.',
      );
    const [system] = (await strategy.load({ query: 'lamp?', turn: 31 })).messages;
    expect(tokens.countText(String(system!.content).split('\n')[1]!)).toBeLessThanOrEqual(20);
    expect(String(system!.content)).toContain('Item 30');
    await strategy.close();
  });

  it('keeps the summary in memory in mode exit and writes it on close only', async () => {
    const { dir, open } = await setup();
    const strategy = await open({}, 'exit');
    await exchange(strategy, 1, 'The locker code is 9931.', 'OK.');
    expect(existsSync(path.join(dir, SUMMARY_FILE))).toBe(false);
    await strategy.close();
    const reopened = await open({}, 'exit');
    expect(texts((await reopened.load({ query: 'code?', turn: 2 })).messages).join()).toContain('9931');
    await reopened.close();
  });

  it('in async mode queues folds durably off the hot path, and a reopen resumes them after a crash', async () => {
    const { dir, open } = await setup();
    const stuck = new GatedModel();
    const crashed = await open({}, 'async', stuck);
    for (let turn = 1; turn <= 4; turn++)
      await exchange(
        crashed,
        turn,
        `Guest ${turn} is allergic to ${['peanuts', 'shrimp', '芝麻', 'milk'][turn - 1]}.`,
        'OK.',
      );
    // save() returned although no fold has finished; every exchange is still in the context.
    expect(stuck.calls).toBe(1);
    expect(jobRows(dir)).toBe(4);
    expect(texts((await crashed.load({ query: 'allergies?', turn: 5 })).messages)).toHaveLength(8);
    // The process "dies" here: no close, no flush. A new one opens the same dir.
    const resumed = await open({}, 'async');
    await resumed.flush!();
    expect(jobRows(dir)).toBe(0);
    const { messages } = await resumed.load({ query: 'allergies?', turn: 5 });
    expect(messages).toHaveLength(1);
    expect(String(messages[0]!.content)).toContain('Guest 1 is allergic to peanuts.');
    expect(String(messages[0]!.content)).toContain('芝麻');
    const row = summaryRow(dir);
    // The dead process's model call returning late must not write anything.
    stuck.release();
    await crashed.flush!();
    expect(summaryRow(dir)).toEqual(row);
    await crashed.close();
    await resumed.close();
  });
});

describe('summary across durability modes', () => {
  it('reopens in exit mode a dir written in sync mode (WAL folded in)', async () => {
    const { summary: definition } = await import('../../strategies/summary.js');
    const { makeHarness, exchange } = await import('./conformance.js');
    const harness = await makeHarness(definition);
    const writer = harness.create('sync');
    await writer.open();
    await exchange(writer, 1, 'Lin lives in Hangzhou.', 'Got it.');
    await writer.close();
    const reader = harness.create('exit');
    await reader.open();
    const { messages } = await reader.load({ query: 'Where does Lin live?', turn: 2 });
    expect(messages.map((message) => String(message.content)).join('\n')).toContain('Hangzhou');
    await reader.close();
  });
});
