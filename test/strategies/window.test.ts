import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { TokenCounter } from '../../harness/core/tokens.js';
import { trimToTokens, windowStart } from '../../strategies/shared/trimming.js';
import { window } from '../../strategies/window.js';
import { exchange, makeHarness, type Harness } from './conformance.js';

const human = (text: string) => new HumanMessage(text);
const ai = (text: string) => new AIMessage(text);
const call = (id: string) =>
  new AIMessage({ content: '', tool_calls: [{ id, name: 'lookup', args: {}, type: 'tool_call' }] });
const result = (id: string) => new ToolMessage({ content: `result ${id}`, tool_call_id: id });

const humanPositions = (messages: readonly BaseMessage[]) =>
  messages.flatMap((message, index) => (message.getType() === 'human' ? [index] : []));

describe('windowStart', () => {
  const messages = [human('a'), ai('A'), human('b'), call('1'), result('1'), ai('B'), human('c'), ai('C')];
  it('starts at the K-th last user message', () => {
    expect(windowStart(messages, humanPositions(messages), 1)).toBe(6);
    expect(windowStart(messages, humanPositions(messages), 2)).toBe(2);
    expect(windowStart(messages, humanPositions(messages), 5)).toBe(0);
  });
  it('never starts on an orphan tool message', () => {
    const orphaned = [result('0'), ai('x'), human('a')];
    expect(windowStart(orphaned, humanPositions(orphaned), 9)).toBe(1);
  });
});

describe('trimToTokens', () => {
  const counter = new TokenCounter('gpt-4o');
  it('drops whole units from the front and keeps a tool call with its results', () => {
    const messages = [
      human('first question here'),
      call('1'),
      result('1'),
      result('1b'),
      ai('answer one'),
      human('second'),
      ai('two'),
    ];
    for (let limit = 1; limit <= counter.countMessages(messages) + 5; limit++) {
      const cut = trimToTokens(messages, 0, limit, counter);
      const kept = messages.slice(cut);
      expect(kept[0]?.getType()).not.toBe('tool');
      if (kept.length > 1)
        expect(counter.countMessages(kept)).toBeLessThanOrEqual(
          Math.max(limit, counter.countMessages(messages.slice(-1))),
        );
    }
  });
  it('keeps every unit that fits: one unit more would exceed the limit', () => {
    const messages = [
      human('first question here'),
      call('1'),
      result('1'),
      result('1b'),
      ai('answer one'),
      human('second'),
      ai('two'),
      human('third one'),
      ai('three'),
    ];
    // Unit starts: a tool result stays with the call before it.
    const unitStarts = messages.flatMap((message, index) => (message.getType() === 'tool' ? [] : [index]));
    for (let limit = 1; limit <= counter.countMessages(messages) + 5; limit++) {
      const cut = trimToTokens(messages, 0, limit, counter);
      const before = unitStarts.filter((index) => index < cut).at(-1);
      if (before !== undefined)
        expect(counter.countMessages(messages.slice(before)), `limit ${limit}`).toBeGreaterThan(limit);
      // Exactly at the limit still fits.
      expect(
        trimToTokens(messages, 0, counter.countMessages(messages.slice(cut)), counter),
        `limit ${limit}`,
      ).toBeLessThanOrEqual(cut);
    }
    expect(trimToTokens(messages, 0, counter.countMessages(messages), counter)).toBe(0);
    expect(trimToTokens(messages, 0, counter.countMessages(messages.slice(5)), counter)).toBe(5);
  });
  it('keeps the last unit even when it alone exceeds the limit', () => {
    const messages = [human('a'), call('1'), result('1')];
    expect(trimToTokens(messages, 0, 1, counter)).toBe(1);
  });
});

describe('window strategy', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    if (harness) await rm(harness.dir, { recursive: true, force: true });
  });

  it('keeps the last k exchanges and forgets earlier ones', async () => {
    harness = await makeHarness(window, { k: 2 });
    const strategy = harness.create();
    await strategy.open();
    await exchange(strategy, 1, 'My dog is Rex.', 'OK.');
    await exchange(strategy, 2, 'I live in Lyon.', 'OK.');
    await exchange(strategy, 3, 'I like tea.', 'OK.');
    const { messages } = await strategy.load({ query: 'x', turn: 4 });
    expect(messages.map((message) => message.content)).toEqual(['I live in Lyon.', 'OK.', 'I like tea.', 'OK.']);
    await strategy.close();
  });

  it('bounds the context by maxTokens', async () => {
    harness = await makeHarness(window, { k: 100, maxTokens: 40 });
    const strategy = harness.create();
    await strategy.open();
    for (let turn = 1; turn <= 30; turn++) {
      await exchange(strategy, turn, `turn ${turn}: the weather is fine today`, 'Noted.');
      const { messages } = await strategy.load({ query: 'x', turn });
      expect(harness.tokens.countMessages(messages)).toBeLessThanOrEqual(40);
    }
    await strategy.close();
  });

  it('rebuilds its exchange index on reopen', async () => {
    harness = await makeHarness(window, { k: 1 });
    let strategy = harness.create();
    await strategy.open();
    await exchange(strategy, 1, 'one', 'A');
    await exchange(strategy, 2, 'two', 'B');
    await strategy.close();
    strategy = harness.create();
    await strategy.open();
    expect((await strategy.load({ query: 'x', turn: 3 })).messages.map((message) => message.content)).toEqual([
      'two',
      'B',
    ]);
    await strategy.close();
  });

  it('rejects bad knobs through its schema', () => {
    expect(window.options.safeParse({ k: 0 }).success).toBe(false);
    expect(window.options.safeParse({ k: 'abc' }).success).toBe(false);
    expect(window.options.safeParse({ q: 1 }).success).toBe(false);
  });
});
