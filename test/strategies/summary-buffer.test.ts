import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { HashedEmbedder, MeteredModel, OfflineModel, type ChatModel } from '../../harness/models/index.js';
import { SUMMARY_FILE, SUMMARY_PREFIX } from '../../strategies/shared/summarizer.js';
import { TokenCounter } from '../../harness/core/tokens.js';
import { summaryBuffer } from '../../strategies/summary-buffer.js';
import type { DurabilityMode, MemoryStrategy, StrategyContext } from '../../strategies/types.js';
import { describeConformance, exchange } from './conformance.js';
import { GatedModel } from './gated-model.js';

describeConformance(summaryBuffer, { options: { maxTokenLimit: 60, summarize: 'async' } });

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function setup() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-summary-buffer-'));
  dirs.push(dir);
  const tokens = new TokenCounter('gpt-4o');
  const model = new MeteredModel(new OfflineModel(), tokens);
  const open = async (
    options: Record<string, unknown>,
    durability: DurabilityMode = 'sync',
    chat: ChatModel = model,
  ): Promise<MemoryStrategy> => {
    const context: StrategyContext = {
      dir,
      tokens,
      model: chat,
      embedder: new HashedEmbedder(16),
      durability,
      seed: 1,
      now: () => new Date('2026-01-01T00:00:00Z'),
    };
    const strategy = summaryBuffer.create(context, summaryBuffer.options.parse(options));
    await strategy.open();
    return strategy;
  };
  return { dir, tokens, model, open };
}

/** Counts like the harness does, with its own cache, so checks do not touch the strategy's tokenizer counter. */
const checker = new TokenCounter('gpt-4o');
const contextTokens = (messages: readonly BaseMessage[]) => checker.countMessages(messages);

/** The context never starts on a tool result and every tool result follows its call. */
function expectToolPairs(messages: readonly BaseMessage[]): void {
  const first = messages.find((message) => message.getType() !== 'system');
  if (first) expect(first.getType()).not.toBe('tool');
  const calls = new Set<string>();
  for (const message of messages) {
    if (message instanceof AIMessage) for (const call of message.tool_calls ?? []) calls.add(call.id!);
    if (message instanceof ToolMessage) expect(calls.has(message.tool_call_id)).toBe(true);
  }
}

function rows(dir: string, sql: string): unknown {
  const db = new Database(path.join(dir, SUMMARY_FILE), { readonly: true });
  try {
    return db.prepare(sql).get();
  } finally {
    db.close();
  }
}

/** mulberry32: a seeded generator, so the long conversation is the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['Lin', 'Maya', 'Omar', '王芳', '李雷', 'Sofia'];
const CITIES = ['Hangzhou', 'Lyon', 'Nairobi', '成都', '上海', 'Lima'];
const DISHES = ['红烧肉', 'vegetable curry', '麻婆豆腐', 'mushroom risotto', '清蒸鱼'];
const pick = <T>(next: () => number, items: readonly T[]): T => items[Math.floor(next() * items.length)]!;

function userLine(next: () => number, turn: number): string {
  const name = pick(next, NAMES);
  const templates = [
    () =>
      `${name} moved to ${pick(next, CITIES)} in turn ${turn} and wants to cook ${pick(next, DISHES)} for ${Math.floor(next() * 12) + 2} guests.`,
    () => `${name}在第${turn}轮说：我想做${pick(next, DISHES)}，但是我对花生过敏，请不要放花生。`,
    () =>
      `Remember that the budget for dinner ${turn} is ${Math.floor(next() * 900)} yuan, 预算是${Math.floor(next() * 900)}元。`,
    () => `Short note ${turn}.`,
    // Now and then a long paste, larger than the tiny limit on its own.
    () =>
      Array.from(
        { length: 6 + Math.floor(next() * 10) },
        (_, i) => `Step ${i + 1} of recipe ${turn}: stir the ${pick(next, DISHES)} gently, 小火慢炖十分钟。`,
      ).join(' '),
  ];
  return pick(next, templates)();
}

interface Measured {
  maxTokens: number;
  encodeCalls: number[];
}

/** Plays `turns` turns the way the agent loop does (save user, load, save reply), with tool calls now and then. */
async function playConversation(
  strategy: MemoryStrategy,
  tokens: TokenCounter,
  limit: number,
  turns: number,
  seed: number,
): Promise<Measured> {
  const next = random(seed);
  const measured: Measured = { maxTokens: 0, encodeCalls: [tokens.encodeCalls] };
  const check = (messages: readonly BaseMessage[]) => {
    const used = contextTokens(messages);
    measured.maxTokens = Math.max(measured.maxTokens, used);
    expect(used).toBeLessThanOrEqual(limit);
    expectToolPairs(messages);
  };
  for (let turn = 1; turn <= turns; turn++) {
    const user = userLine(next, turn);
    await strategy.save({ message: new HumanMessage(user), turn });
    check((await strategy.load({ query: user, turn })).messages);
    if (turn % 7 === 0) {
      const id = `call_${turn}`;
      await strategy.save({
        message: new AIMessage({
          content: '',
          tool_calls: [{ id, name: 'search_recipes', args: { dish: pick(next, DISHES), turn }, type: 'tool_call' }],
        }),
        turn,
      });
      const result =
        next() < 0.3
          ? JSON.stringify({ steps: Array.from({ length: 12 }, (_, i) => `第${i + 1}步：加入酱油和糖`) })
          : `found ${Math.floor(next() * 5)} recipes`;
      await strategy.save({
        message: new ToolMessage({ content: result, tool_call_id: id, name: 'search_recipes' }),
        turn,
      });
      check((await strategy.load({ query: 'which recipes?', turn })).messages);
    }
    await strategy.save({
      message: new AIMessage(next() < 0.5 ? `OK, noted for turn ${turn}.` : `好的，第${turn}轮记下了。`),
      turn,
    });
    if (turn % 500 === 0) measured.encodeCalls.push(tokens.encodeCalls);
  }
  return measured;
}

describe('summary-buffer strategy', () => {
  for (const limit of [200, 40]) {
    it(`never exceeds maxTokenLimit=${limit} over 2,000 mixed English/Chinese turns with tool calls, at flat tokenizer cost`, async () => {
      const { dir, tokens, model, open } = await setup();
      // Mode exit keeps the database in memory while it runs (no fsync per message) and writes it on close.
      const strategy = await open({ maxTokenLimit: limit }, 'exit');
      const measured = await playConversation(strategy, tokens, limit, 2000, limit);
      expect(measured.maxTokens).toBeLessThanOrEqual(limit);
      expect(measured.maxTokens).toBeGreaterThan(limit * 0.6); // the budget is used, not wasted
      expect(model.usage.maintenanceCalls).toBeGreaterThan(0);
      // Tokenizer calls per turn stay flat: the last 500 turns cost about what the first 500 did.
      const [start, at500, , at1500, end] = measured.encodeCalls as [number, number, number, number, number];
      expect(end - at1500).toBeLessThan((at500 - start) * 1.25);
      expect((end - at1500) / 500).toBeLessThan(60);

      // The summary (and the buffer) survive close + reopen.
      const before = (await strategy.load({ query: 'x', turn: 2001 })).messages;
      await strategy.close();
      const stored = rows(dir, 'SELECT version, text FROM summary') as { version: number; text: string };
      expect(stored.version).toBeGreaterThan(10);
      if (limit >= 200) {
        expect(stored.text.length).toBeGreaterThan(0);
        expect(before[0]).toBeInstanceOf(SystemMessage);
      }
      const reopened = await open({ maxTokenLimit: limit }, 'exit');
      const after = (await reopened.load({ query: 'x', turn: 2001 })).messages;
      expect(after.map((message) => message.content)).toEqual(before.map((message) => message.content));
      await reopened.close();
    });
  }

  it('stays within tiny limits (20, 12 and 1 tokens)', async () => {
    const { tokens, open } = await setup();
    for (const limit of [20, 12, 1]) {
      const strategy = await open({ maxTokenLimit: limit }, 'none');
      await playConversation(strategy, tokens, limit, 30, 3);
      await strategy.close();
    }
  });

  it('keeps recent messages verbatim and moves the oldest whole units into the summary', async () => {
    const { dir, open } = await setup();
    // Buffer budget beside a full summary: 70 - 3 (reply priming) - 40 = 27 tokens.
    const strategy = await open({ maxTokenLimit: 70, maxSummaryTokens: 40 });
    await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
    await exchange(strategy, 2, 'Lin is allergic to peanuts.', 'OK.');
    await exchange(strategy, 3, 'Lin has two cats named Mochi and Tofu.', 'OK.');
    expect(rows(dir, 'SELECT version FROM summary')).toEqual({ version: 0 });
    await strategy.save({ message: new HumanMessage('我最喜欢的菜是红烧肉。'), turn: 4 });
    // sync summarising: the fold ran before save() resolved (its summary is in the context); its
    // result is committed with the next write, and its job stays queued until then.
    expect(rows(dir, 'SELECT version FROM summary')).toEqual({ version: 0 });
    const { messages } = await strategy.load({ query: 'x', turn: 4 });
    expect(messages[0]).toBeInstanceOf(SystemMessage);
    expect(String(messages[0]!.content)).toContain(
      'Lin lives in Hangzhou. Lin is allergic to peanuts. Lin has two cats named Mochi and Tofu.',
    );
    expect(messages.slice(1).map((message) => message.content)).toEqual(['OK.', '我最喜欢的菜是红烧肉。']);
    expect(contextTokens(messages)).toBeLessThanOrEqual(70);
    await strategy.save({ message: new AIMessage('好的。'), turn: 4 });
    expect(rows(dir, 'SELECT version, text FROM summary')).toEqual({
      version: 1,
      text: 'Lin lives in Hangzhou. Lin is allergic to peanuts. Lin has two cats named Mochi and Tofu.',
    });
    await strategy.close();
  });

  it('cuts a newest message that alone exceeds the limit to its end, keeping its type', async () => {
    const { open } = await setup();
    const strategy = await open({ maxTokenLimit: 40 });
    const long = `${'Here is a long story about dumplings and noodles. '.repeat(20)}那么，我应该先做哪一道菜？`;
    await strategy.save({ message: new HumanMessage(long), turn: 1 });
    const { messages } = await strategy.load({ query: long, turn: 1 });
    expect(contextTokens(messages)).toBeLessThanOrEqual(40);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.getType()).toBe('human');
    expect(long.endsWith(String(messages[0]!.content))).toBe(true);
    expect(String(messages[0]!.content)).toContain('我应该先做哪一道菜');
    await strategy.close();
  });

  it('cuts oversized tool results but keeps them with their call', async () => {
    const { open } = await setup();
    const strategy = await open({ maxTokenLimit: 60 });
    await strategy.save({ message: new HumanMessage('find recipes'), turn: 1 });
    await strategy.save({
      message: new AIMessage({
        content: '',
        tool_calls: [{ id: 'c1', name: 'search', args: { q: 'tofu' }, type: 'tool_call' }],
      }),
      turn: 1,
    });
    await strategy.save({
      message: new ToolMessage({ content: 'tofu recipe, '.repeat(80), tool_call_id: 'c1', name: 'search' }),
      turn: 1,
    });
    const { messages } = await strategy.load({ query: 'x', turn: 1 });
    expect(contextTokens(messages)).toBeLessThanOrEqual(60);
    expect(messages.map((message) => message.getType())).toEqual(['ai', 'tool']);
    expectToolPairs(messages);
    await strategy.close();
  });

  it('in async mode summarises off the hot path from a durable queue, and a new process resumes pending jobs', async () => {
    const { dir, open } = await setup();
    const stuck = new GatedModel();
    const limit = 80;
    const options = { maxTokenLimit: limit, maxSummaryTokens: 40, summarize: 'async' };
    const crashed = await open(options, 'sync', stuck);
    const facts = [
      'Lin lives in Hangzhou.',
      'Maya is allergic to shrimp.',
      '王芳喜欢清蒸鱼。',
      'Omar drives a green van.',
      'Sofia plays the cello.',
      'The party is on Friday.',
      '李雷住在成都。',
      'The cake needs six eggs.',
      'Maya brings the wine.',
      'Lin owns a red kettle.',
    ];
    for (const [index, fact] of facts.entries()) {
      await exchange(crashed, index + 1, fact, 'OK.');
      // Pending folds are out of the context, so the bound holds while they wait.
      expect(contextTokens((await crashed.load({ query: 'x', turn: index + 1 })).messages)).toBeLessThanOrEqual(limit);
    }
    expect(stuck.calls).toBe(1); // one fold in flight, never finishing: the process "dies" with it
    const pending = (rows(dir, 'SELECT count(*) AS n FROM jobs') as { n: number }).n;
    expect(pending).toBeGreaterThan(1);
    expect(rows(dir, 'SELECT version FROM summary')).toEqual({ version: 0 });

    const resumed = await open(options, 'sync');
    expect((await resumed.load({ query: 'x', turn: 11 })).messages.map((message) => message.content)).not.toContain(
      'Lin lives in Hangzhou.',
    );
    await resumed.flush!();
    expect(rows(dir, 'SELECT count(*) AS n FROM jobs')).toEqual({ n: 0 });
    // One write per resumed job, plus any fold the grown summary caused.
    expect((rows(dir, 'SELECT version FROM summary') as { version: number }).version).toBeGreaterThanOrEqual(pending);
    const { messages } = await resumed.load({ query: 'x', turn: 11 });
    expect(contextTokens(messages)).toBeLessThanOrEqual(limit);
    const summaryText = String(messages[0]!.content);
    expect(summaryText.startsWith(SUMMARY_PREFIX)).toBe(true);
    expect(facts.filter((fact) => summaryText.includes(fact)).length).toBeGreaterThan(1);
    const row = rows(dir, 'SELECT version, text FROM summary');
    stuck.release(); // the dead process's call returns late: its job is gone, it writes nothing
    await crashed.flush!();
    expect(rows(dir, 'SELECT version, text FROM summary')).toEqual(row);
    await crashed.close();
    await resumed.close();
  });
});
