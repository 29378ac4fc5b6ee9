import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { entityKey } from '../../strategies/stores/entity-store.js';
import type { ChatModel, ChatRequest, ChatResponse } from '../../harness/models/types.js';
import { entity, EntityStrategy, parseEntityNames } from '../../strategies/entity.js';
import type { DurabilityMode, MemoryStrategy } from '../../strategies/types.js';
import { describeConformance, exchange, makeHarness, type Harness } from './conformance.js';

describeConformance({ ...entity, name: 'entity (async)', defaultDurability: 'async' });
describeConformance({ ...entity, name: 'entity (exit)', defaultDurability: 'exit' });

const text = (messages: readonly BaseMessage[]): string =>
  messages.map((message) => String(message.content)).join('\n');

/** Wraps the harness model: can fail, or hold calls of some tasks until released, to stage races and crashes. */
class ScriptedModel implements ChatModel {
  readonly id = 'scripted';
  readonly offline = true;
  failing = false;
  held = 0;
  private holding = new Set<ChatRequest['task']>();
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;

  constructor(private readonly inner: ChatModel) {}

  hold(...tasks: ChatRequest['task'][]): void {
    this.holding = new Set(tasks);
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.holding.clear();
    this.open?.();
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    if (this.failing) throw new Error('model unreachable');
    if (this.holding.has(request.task)) {
      this.held++;
      await this.gate;
    }
    return this.inner.chat(request);
  }
}

describe('entity strategy', () => {
  let harness: Harness | undefined;
  const open: MemoryStrategy[] = [];
  afterEach(async () => {
    for (const strategy of open.splice(0)) await strategy.close().catch(() => undefined);
    if (harness) await rm(harness.dir, { recursive: true, force: true });
    harness = undefined;
    vi.restoreAllMocks();
  });

  async function start(
    options: Record<string, unknown> = {},
    durability: DurabilityMode = 'sync',
    model?: ChatModel,
  ): Promise<EntityStrategy> {
    harness ??= await makeHarness(entity, options);
    const context = harness.context(durability);
    const strategy = entity.create(
      model ? { ...context, model } : context,
      entity.options.parse(options),
    ) as EntityStrategy;
    await strategy.open();
    open.push(strategy);
    return strategy;
  }

  async function fillers(strategy: MemoryStrategy, from: number, count: number, zh = false): Promise<void> {
    for (let turn = from; turn < from + count; turn++) {
      if (zh) await exchange(strategy, turn, `第${turn}轮闲聊：今天的天气还不错，适合散步。`, '好的。');
      else
        await exchange(
          strategy,
          turn,
          `Filler exchange ${turn}: the forecast says light rain over the harbour.`,
          'Sounds fine.',
        );
    }
  }

  it('recalls an early entity fact after 30 filler exchanges when the query names it (English)', async () => {
    const strategy = await start();
    await exchange(strategy, 1, 'My cat is called Mochi and she loves salmon.', 'Mochi sounds lovely.');
    await fillers(strategy, 2, 30);
    const { messages } = await strategy.load({ query: 'What does Mochi like to eat?', turn: 32 });
    expect(messages[0]!.getType()).toBe('system'); // the fact comes from the entity summary, not the recent window
    expect(String(messages[0]!.content)).toContain('salmon');
    expect(text(messages.slice(1))).not.toContain('salmon');
  });

  it('recalls an early entity fact after 30 filler exchanges when the query names it (Chinese)', async () => {
    const strategy = await start();
    await exchange(strategy, 1, '我的猫叫小白，它最喜欢吃鱼。', '小白真可爱。');
    await fillers(strategy, 2, 30, true);
    await strategy.save({ message: new HumanMessage('小白喜欢吃什么？'), turn: 32 });
    const { messages } = await strategy.load({ query: '小白喜欢吃什么？', turn: 32 });
    expect(String(messages[0]!.content)).toContain('吃鱼');
    expect(text(messages.slice(1))).not.toContain('吃鱼');
    expect(text(messages)).toContain('小白喜欢吃什么？');
  });

  it('ranks entities named in the query first, then by term overlap, ties by recency, and injects at most k', async () => {
    const strategy = await start({ k: 2 });
    await exchange(strategy, 1, 'Rex is a dog and he chews bones all day.', 'OK.');
    await exchange(strategy, 2, 'Mochi is a cat and she loves salmon.', 'OK.');
    await exchange(strategy, 3, 'Lola is a parrot and she loves salmon too.', 'OK.');
    const named = await strategy.load({ query: 'Does Rex like salmon?', turn: 4 });
    const system = String(named.messages[0]!.content);
    expect(system.indexOf('- Rex:')).toBeGreaterThan(-1);
    expect(system.indexOf('- Rex:')).toBeLessThan(system.indexOf('- Lola:'));
    expect(system).not.toContain('- Mochi:'); // k = 2: Rex (named), then the most recent salmon lover
    const unnamed = String((await strategy.load({ query: 'who chews bones?', turn: 4 })).messages[0]!.content);
    expect(unnamed.split('\n')[1]).toMatch(/^- Rex:/u);
  });

  it('keeps one entity per normalised name and bumps its version on every write', async () => {
    const strategy = await start();
    await exchange(strategy, 1, 'Mochi is my cat.', 'OK.');
    expect(strategy.store.get('mochi')?.version).toBe(1);
    await exchange(strategy, 2, 'Mochi is three years old.', 'OK.');
    await exchange(strategy, 3, 'Mochi sleeps on the sofa.', 'OK.');
    const record = strategy.store.get('ＭＯＣＨＩ')!; // NFKC + case fold
    expect(record.version).toBe(3);
    expect(record.summary).toContain('sofa');
    expect(entityKey("Mochi's")).toBe(entityKey('mochi'));
  });

  it('refuses a compare-and-set from an old version, in memory and in the file', async () => {
    const strategy = await start();
    await exchange(strategy, 1, 'Mochi is my cat.', 'OK.');
    await exchange(strategy, 2, 'Mochi is three years old.', 'OK.');
    const stale = strategy.store.compareAndSet({ name: 'Mochi', summary: 'Mochi is a dog.', turn: 3 }, 1);
    expect(stale).toBeUndefined();
    expect(strategy.store.compareAndSet({ name: 'Mochi', summary: 'Mochi is a new cat.', turn: 3 }, 0)).toBeUndefined();
    expect(strategy.store.get('Mochi')?.summary).not.toContain('dog');
    const fresh = strategy.store.compareAndSet({ name: 'Mochi', summary: 'Mochi is a grey cat.', turn: 3 }, 2);
    expect(fresh?.version).toBe(3);
    const db = new Database(path.join(harness!.dir, 'entities.sqlite'), { readonly: true });
    expect(db.prepare('SELECT summary, version FROM entities WHERE name = ?').get('mochi')).toEqual({
      summary: 'Mochi is a grey cat.',
      version: 3,
    });
    db.close();
  });

  it('never lets a job queued before a correction overwrite it (async)', async () => {
    harness = await makeHarness(entity);
    const model = new ScriptedModel(harness.context().model);
    const strategy = await start({}, 'async', model);
    model.hold('extract-entities', 'summarize-entity');
    await exchange(strategy, 1, 'Mochi only eats salmon.', 'OK.'); // queued; its job waits for the model
    expect(strategy.store.get('Mochi')).toBeUndefined();
    strategy.store.compareAndSet({ name: 'Mochi', summary: 'Mochi now only eats tuna.', turn: 2 }, 0);
    model.release();
    await strategy.flush();
    expect(strategy.store.get('Mochi')?.summary).toBe('Mochi now only eats tuna.');
    expect(strategy.store.staleWrites).toBeGreaterThan(0);
  });

  it('refuses the write of a job whose entity was corrected while its model call ran', async () => {
    harness = await makeHarness(entity);
    const model = new ScriptedModel(harness.context().model);
    const strategy = await start({}, 'async', model);
    await exchange(strategy, 1, 'Mochi is my cat.', 'OK.');
    await strategy.flush();
    model.hold('summarize-entity');
    await exchange(strategy, 2, 'Mochi only eats salmon.', 'OK.');
    await vi.waitFor(() => expect(model.held).toBeGreaterThan(0));
    const version = strategy.store.get('Mochi')!.version;
    expect(
      strategy.store.compareAndSet({ name: 'Mochi', summary: 'Mochi now only eats tuna.', turn: 3 }, version)?.version,
    ).toBe(version + 1);
    model.release();
    await strategy.flush();
    expect(strategy.store.get('Mochi')).toMatchObject({ summary: 'Mochi now only eats tuna.', version: version + 1 });
    expect(strategy.store.staleWrites).toBeGreaterThan(0);
  });

  it('keeps queued extraction in a durable queue when the model fails, and finishes it after reopening', async () => {
    harness = await makeHarness(entity);
    const model = new ScriptedModel(harness.context().model);
    model.failing = true;
    const first = await start({}, 'async', model);
    await exchange(first, 1, 'Lin lives in Hangzhou.', 'OK.');
    await expect(first.flush()).rejects.toThrow('model unreachable');
    await expect(first.close()).rejects.toThrow('model unreachable');
    model.failing = false;
    const second = await start({}, 'async', model);
    await second.flush();
    expect(second.store.get('Lin')?.summary).toContain('Hangzhou');
  });

  it('survives close and reopen with its entities and versions (sync)', async () => {
    const first = await start();
    await exchange(first, 1, 'Mochi is my cat.', 'OK.');
    await exchange(first, 2, 'Mochi is three years old.', 'OK.');
    await first.close();
    const second = await start();
    expect(second.store.get('Mochi')?.version).toBe(2);
    await exchange(second, 3, 'Mochi sleeps on the sofa.', 'OK.');
    expect(second.store.get('Mochi')?.version).toBe(3);
    const { messages } = await second.load({ query: 'How old is Mochi?', turn: 4 });
    expect(text(messages)).toContain('three years old');
  });

  it('writes entities only on close in exit mode', async () => {
    const strategy = await start({}, 'exit');
    await exchange(strategy, 1, 'Mochi is my cat.', 'OK.');
    const rows = () => {
      const db = new Database(path.join(harness!.dir, 'entities.sqlite'), { readonly: true });
      const count = (db.prepare('SELECT count(*) AS n FROM entities').get() as { n: number }).n;
      db.close();
      return count;
    };
    expect(strategy.store.get('Mochi')?.version).toBe(1);
    expect(rows()).toBe(0);
    await strategy.close();
    expect(rows()).toBeGreaterThan(0);
    const reopened = await start({}, 'exit');
    expect(reopened.store.get('Mochi')?.version).toBe(1);
  });

  it('reports its queue, its persisted texts, and reaches the mid_summary crash point inside a job', async () => {
    harness = await makeHarness(entity);
    const points: string[] = [];
    const model = new ScriptedModel(harness.context().model);
    const context = { ...harness.context('async'), model, checkpoint: (point: string) => points.push(point) };
    const strategy = entity.create(context, entity.options.parse({})) as EntityStrategy;
    open.push(strategy);
    await strategy.open();
    model.hold('extract-entities');
    await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'OK.');
    expect(strategy.pendingJobs()).toBe(1);
    model.release();
    await strategy.flush();
    expect(strategy.pendingJobs()).toBe(0);
    expect(points).toContain('mid_summary');
    expect((await strategy.snapshot()).join('\n')).toMatch(/Lin: .*Hangzhou/u);
  });

  it('writes no file in durability mode none', async () => {
    const strategy = await start({}, 'none');
    await exchange(strategy, 1, 'Mochi is my cat.', 'OK.');
    expect(strategy.store.get('Mochi')?.version).toBe(1);
    await strategy.close();
    expect(existsSync(path.join(harness!.dir, 'entities.sqlite'))).toBe(false);
  });

  it('keeps the exchange in progress plus recentExchanges complete ones, never starting on a tool message', async () => {
    const strategy = await start({ recentExchanges: 1, k: 0 });
    await exchange(strategy, 1, 'first question', 'first answer');
    await strategy.save({ message: new HumanMessage('look it up'), turn: 2 });
    await strategy.save({
      message: new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'lookup', args: {}, type: 'tool_call' }] }),
      turn: 2,
    });
    await strategy.save({
      message: new ToolMessage({ content: 'found', tool_call_id: 'c1', name: 'lookup' }),
      turn: 2,
    });
    const during = (await strategy.load({ query: 'x', turn: 2 })).messages;
    expect(during.map((message) => message.getType())).toEqual(['human', 'ai', 'human', 'ai', 'tool']);
    await strategy.save({ message: new AIMessage('It says found.'), turn: 2 });
    const after = (await strategy.load({ query: 'x', turn: 3 })).messages;
    expect(after.map((message) => message.content)).toEqual(['look it up', '', 'found', 'It says found.']);
  });

  it('reads no whole table and re-tokenises nothing per turn: cost per turn stays flat as entities pile up', async () => {
    const strategy = await start();
    const statement = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as {
      get: (...args: unknown[]) => unknown;
      all: (...args: unknown[]) => unknown[];
    };
    let rowsRead = 0;
    const originalGet = statement.get;
    const originalAll = statement.all;
    vi.spyOn(statement, 'get').mockImplementation(function (this: unknown, ...args: unknown[]) {
      const row = originalGet.apply(this, args);
      if (row !== undefined) rowsRead++;
      return row;
    });
    vi.spyOn(statement, 'all').mockImplementation(function (this: unknown, ...args: unknown[]) {
      const rows = originalAll.apply(this, args);
      rowsRead += rows.length;
      return rows;
    });
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const guest = (turn: number) => `Zed${letters[turn % 26]}${letters[Math.floor(turn / 26)]}`;
    const cost = async (from: number) => {
      const before = { rows: rowsRead, encode: harness!.tokens.encodeCalls, segment: segment.mock.calls.length };
      for (let turn = from; turn < from + 10; turn++) {
        await exchange(strategy, turn, `${guest(turn)} brings a salad with walnuts.`, 'Lovely.');
        await strategy.load({ query: `What does ${guest(turn)} bring?`, turn });
      }
      return {
        rows: rowsRead - before.rows,
        encode: harness!.tokens.encodeCalls - before.encode,
        segment: segment.mock.calls.length - before.segment,
      };
    };
    const early = await cost(1);
    await cost(11);
    await cost(21);
    const late = await cost(31);
    expect(strategy.store.size).toBeGreaterThanOrEqual(40);
    expect(late.rows).toBeLessThanOrEqual(10); // one ticket row per exchange, no table scans
    expect(late.encode).toBeLessThanOrEqual(early.encode * 1.2);
    expect(late.segment).toBeLessThanOrEqual(early.segment * 1.2);
  });
});

describe('parseEntityNames', () => {
  it('reads JSON arrays, fenced JSON and plain lists', () => {
    expect(parseEntityNames('["Mochi", "杭州"]')).toEqual(['Mochi', '杭州']);
    expect(parseEntityNames('Here:\n```json\n["Lin"]\n```')).toEqual(['Lin']);
    expect(parseEntityNames('Mochi, Lin\n- 小白')).toEqual(['Mochi', 'Lin', '小白']);
    expect(parseEntityNames('NONE')).toEqual([]);
  });
});

describe('entity options', () => {
  it('rejects bad knobs through its schema', () => {
    expect(entity.options.safeParse({ k: -1 }).success).toBe(false);
    expect(entity.options.safeParse({ recentExchanges: 'x' }).success).toBe(false);
    expect(entity.options.safeParse({ q: 1 }).success).toBe(false);
    expect(entity.options.parse({})).toMatchObject({ k: 3, recentExchanges: 1 });
  });
});
