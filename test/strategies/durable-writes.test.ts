/**
 * What a turn costs in durable writes, counted (never timed): SQLite commits read from the WAL
 * files and fsyncs of atomic file writes, per turn of each built-in strategy in `sync`. One commit
 * per saved message is the floor; a strategy pays more only for model-made state it keeps
 * durably in a write of its own (an entity extraction, a memory file).
 */
import { rm } from 'node:fs/promises';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { DurableWriteCounter } from '../../harness/core/commit-count.js';
import type { ChatModel, ChatRequest } from '../../harness/models/types.js';
import { generateFiller } from '../../harness/scenarios/filler.js';
import { findStrategy } from '../../strategies/index.js';
import { FileIndexStrategy } from '../../strategies/file-index.js';
import type { MemoryStrategy } from '../../strategies/types.js';
import { makeHarness, type Harness } from './conformance.js';

/** A model that counts its calls by task. */
function countingModel(inner: ChatModel): ChatModel & { calls: Record<string, number> } {
  const calls: Record<string, number> = {};
  return {
    id: inner.id,
    offline: inner.offline,
    calls,
    chat: (request: ChatRequest) => {
      calls[request.task] = (calls[request.task] ?? 0) + 1;
      return inner.chat(request);
    },
  };
}

interface TurnWrites {
  commits: number;
  fileSyncs: number;
  /** Maintenance calls the turn made, by task. */
  calls: Record<string, number>;
  /** Memory files the turn wrote (file-index). */
  memoryFiles: number;
}

const memoryFilesWritten = (strategy: MemoryStrategy): number =>
  strategy instanceof FileIndexStrategy ? (strategy.store?.stats.fileWrites ?? 0) : 0;

describe('durable writes per turn (sync)', () => {
  let harness: Harness | undefined;
  let strategy: MemoryStrategy | undefined;
  afterEach(async () => {
    await strategy?.close();
    if (harness) await rm(harness.dir, { recursive: true, force: true });
  });

  /** Plays `turns` agent turns (save user, load, save reply) after a warm-up, counting each one's writes. */
  async function playCounted(
    name: string,
    turns: number,
    options: Record<string, unknown> = {},
  ): Promise<TurnWrites[]> {
    const definition = findStrategy(name)!;
    harness = await makeHarness(definition);
    const base = harness.context('sync');
    const model = countingModel(base.model);
    strategy = definition.create({ ...base, model }, definition.options.parse(options));
    await strategy.open();
    const exchanges = generateFiller(turns + 5, { seed: 3, language: 'mixed' });
    const counter = new DurableWriteCounter(harness.dir);
    const out: TurnWrites[] = [];
    for (const [index, exchange] of exchanges.entries()) {
      const before = { ...model.calls };
      const filesBefore = memoryFilesWritten(strategy);
      const turn = index + 1;
      await strategy.save({ message: new HumanMessage(exchange.user), turn });
      await strategy.load({ query: exchange.user, turn });
      await strategy.save({ message: new AIMessage(exchange.assistant), turn });
      const writes = counter.take();
      const calls = Object.fromEntries(
        Object.entries(model.calls)
          .map(([task, count]) => [task, count - (before[task] ?? 0)])
          .filter(([, count]) => Number(count) > 0),
      );
      if (index >= 5) out.push({ ...writes, calls, memoryFiles: memoryFilesWritten(strategy) - filesBefore });
    }
    return out;
  }

  it.each(['buffer', 'window', 'vector'])('%s: one commit per message, nothing else', async (name) => {
    const turns = await playCounted(name, 12);
    expect(turns.map((turn) => [turn.commits, turn.fileSyncs])).toEqual(turns.map(() => [2, 0]));
  });

  it.each([
    ['summary', {}],
    ['summary-buffer', { maxTokenLimit: 300 }],
  ])(
    '%s: one commit per message, folds included (a fold claims without a commit; its result joins the next one)',
    async (name, options) => {
      const turns = await playCounted(name, 12, options);
      expect(turns.some((turn) => (turn.calls.summarize ?? 0) > 0)).toBe(true);
      for (const turn of turns) expect([turn.commits, turn.fileSyncs]).toEqual([2, 0]);
    },
  );

  it('entity: the reply and its extraction job are one commit; the extraction is the third', async () => {
    const turns = await playCounted('entity', 12);
    for (const turn of turns) {
      expect(turn.calls['extract-entities']).toBe(1);
      expect(turn.commits).toBe(3);
    }
  });

  it('file-index: one commit per message; two fsyncs per memory file written, none for MEMORY.md or the cursor', async () => {
    const turns = await playCounted('file-index', 12);
    const store = (strategy as FileIndexStrategy).store!;
    expect(turns.some((turn) => turn.memoryFiles > 0)).toBe(true);
    expect(turns.map((turn) => [turn.commits, turn.fileSyncs])).toEqual(turns.map((turn) => [2, 2 * turn.memoryFiles]));
    const filesBefore = store.stats.fileWrites;
    const counter = new DurableWriteCounter(harness!.dir);
    await (strategy as FileIndexStrategy).remember({ content: 'My locker code is 4711.' });
    expect(counter.take()).toEqual({ commits: 0, fileSyncs: 2 });
    expect(store.stats.fileWrites - filesBefore).toBe(1);
  });
});
