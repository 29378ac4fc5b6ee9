/**
 * Which commits skip their own fsync (harness/core/sqlite.ts `commitDerived`): only writes that
 * reshape what an earlier fsynced commit made durable. A saved message never goes through it.
 */
import { HumanMessage } from '@langchain/core/messages';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { bm25 } from '../../strategies/bm25.js';
import { entity } from '../../strategies/entity.js';
import { summary } from '../../strategies/summary.js';
import { commitDerived } from '../../harness/core/sqlite.js';
import { exchange, strategyScratch } from './conformance.js';

vi.mock('../../harness/core/sqlite.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../harness/core/sqlite.js')>();
  return { ...actual, commitDerived: vi.fn(actual.commitDerived) };
});

const derived = vi.mocked(commitDerived);

describe('commits without an fsync of their own (mode sync)', () => {
  beforeEach(() => {
    derived.mockClear();
  });

  describe('bm25', () => {
    const scratch = strategyScratch(bm25);
    it("a probe's move of the exchange before it into the exchange table; saved messages commit in full", async () => {
      const strategy = await scratch.open();
      await exchange(strategy, 1, 'My cat is called Mochi.', 'Nice name!');
      expect(derived).not.toHaveBeenCalled(); // two saves: two full commits
      await strategy.load({ query: 'What is my cat called?', turn: 2 }); // a probe: no user message saved
      expect(derived).toHaveBeenCalledTimes(1);
      await strategy.save({ message: new HumanMessage('And my dog?'), turn: 2 });
      await strategy.load({ query: 'And my dog?', turn: 2 });
      expect(derived).toHaveBeenCalledTimes(1); // the user message's commit stored nothing derived
    });
  });

  describe('entity', () => {
    const scratch = strategyScratch(entity);
    it("a job's entity summaries, after the reply and its queued job committed in full", async () => {
      const strategy = await scratch.open();
      await strategy.save({ message: new HumanMessage('My sister Lin lives in Hangzhou.'), turn: 1 });
      expect(derived).not.toHaveBeenCalled();
      await exchange(strategy, 2, 'Lin has a cat called Mochi.', 'Noted.');
      await strategy.flush?.();
      expect(derived).toHaveBeenCalled();
    });
  });

  describe('summary', () => {
    const scratch = strategyScratch(summary);
    it("a background fold of the summary, from messages and a job committed in full (a synchronous fold joins the next message's commit)", async () => {
      const strategy = await scratch.open({ summarize: 'async' });
      for (let turn = 1; turn <= 6; turn++)
        await exchange(strategy, turn, `On day ${turn} I walked ${turn} km by the lake.`, 'Sounds lovely.');
      await strategy.flush?.();
      expect(derived).toHaveBeenCalled();
    });
  });
});
