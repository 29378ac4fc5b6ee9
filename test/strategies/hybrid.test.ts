/** `hybrid`: reciprocal rank fusion of bm25 and vector rankings over one store. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { HashedEmbedder } from '../../harness/models/index.js';
import { FusedRetriever, hybrid } from '../../strategies/hybrid.js';
import type { ExchangeRetriever, RankRequest, RankedKey } from '../../strategies/shared/exchange-memory.js';
import { exchange, strategyScratch } from './conformance.js';

/** A retriever that ranks the keys it was given, in that order. */
function fixedRanking(keys: number[]): ExchangeRetriever {
  return {
    needs: { vectors: false, terms: false },
    identity: () => ({}),
    open: () => undefined,
    features: async (texts) => texts.map(() => ({})),
    add: () => undefined,
    settle: () => undefined,
    rank: async (request: RankRequest): Promise<RankedKey[]> =>
      keys.slice(0, request.n).map((key, i) => ({ key, score: keys.length - i })),
    rankDocuments: async (_query, _documents, n): Promise<RankedKey[]> =>
      keys.slice(0, n).map((key, i) => ({ key, score: keys.length - i })),
    flush: () => undefined,
    close: () => undefined,
  };
}

const request = (n: number): RankRequest => ({
  query: 'q',
  turn: 10,
  n,
  below: Infinity,
  keys: [1, 2, 3, 4],
  searchable: 4,
  turnOf: () => 1,
});

describe('FusedRetriever', () => {
  it('scores each key by the sum of weight / (fusionK + rank)', async () => {
    const fused = new FusedRetriever(
      [
        { retriever: fixedRanking([1, 2, 3]), weight: 1 },
        { retriever: fixedRanking([3, 4]), weight: 2 },
      ],
      60,
    );
    const ranked = await fused.rank(request(4));
    const expected = new Map([
      [1, 1 / 61],
      [2, 1 / 62],
      [3, 1 / 63 + 2 / 61],
      [4, 2 / 62],
    ]);
    expect(ranked.map((item) => item.key)).toEqual([3, 4, 1, 2]);
    for (const item of ranked) expect(item.score).toBeCloseTo(expected.get(item.key)!, 12);
    expect(await fused.rank(request(2))).toHaveLength(2);
  });

  it('with one weight at 0 ranks as the other retriever alone', async () => {
    const fused = new FusedRetriever(
      [
        { retriever: fixedRanking([1, 2, 3]), weight: 0 },
        { retriever: fixedRanking([3, 1]), weight: 1 },
      ],
      60,
    );
    expect((await fused.rank(request(4))).map((item) => item.key)).toEqual([3, 1]);
  });
});

const FRUITS = [
  'apricot',
  'banana',
  'cherry',
  'damson',
  'elderberry',
  'fig',
  'grape',
  'huckleberry',
  'kiwi',
  'lemon',
  'mango',
  'nectarine',
];
const QUESTION = 'Which shelf holds the grape jam?';
const memoryOf = (messages: readonly BaseMessage[]): string =>
  messages[0]?.getType() === 'system' ? String(messages[0].content) : '';

const scratch = strategyScratch(hybrid, () => new HashedEmbedder(256));
const open = scratch.open;

describe('hybrid', () => {
  it('keeps each exchange once, with its vector and its terms, and reopens without re-indexing', async () => {
    const first = await open({ k: 1, recentExchanges: 0 });
    for (const [index, fruit] of FRUITS.entries())
      await exchange(first, index + 1, `Shelf ${index + 1} holds the ${fruit} jam.`, 'OK.');
    await first.save({ message: new HumanMessage(QUESTION), turn: 13 });
    expect(memoryOf((await first.load({ query: QUESTION, turn: 13 })).messages)).toContain(
      'Shelf 7 holds the grape jam',
    );
    await first.close();
    expect((await readdir(scratch.dir)).filter((name) => name.endsWith('.sqlite'))).toEqual(['hybrid.sqlite']);
    const db = new Database(path.join(scratch.dir, 'hybrid.sqlite'), { readonly: true });
    expect(
      db.prepare('SELECT count(*) FROM exchanges WHERE vector IS NOT NULL AND terms IS NOT NULL').pluck().get(),
    ).toBe(12);
    db.close();
    const reopened = await open({ k: 1, recentExchanges: 0 });
    expect(memoryOf((await reopened.load({ query: QUESTION, turn: 13 })).messages)).toContain(
      'Shelf 7 holds the grape jam',
    );
  });

  it('exit: ranks held exchanges from both indexes, and finds them after a clean close', async () => {
    const writer = await open({ k: 1, recentExchanges: 0 }, 'exit');
    for (const [index, fruit] of FRUITS.entries())
      await exchange(writer, index + 1, `Shelf ${index + 1} holds the ${fruit} jam.`, 'OK.');
    await writer.save({ message: new HumanMessage(QUESTION), turn: 13 });
    expect(memoryOf((await writer.load({ query: QUESTION, turn: 13 })).messages)).toContain('grape');
    await writer.close();
    const reader = await open({ k: 1, recentExchanges: 0 }, 'exit');
    expect(memoryOf((await reader.load({ query: QUESTION, turn: 13 })).messages)).toContain('grape');
  });

  it('refuses weights that are both 0', () => {
    expect(() => hybrid.options.parse({ bm25Weight: 0, vectorWeight: 0 })).toThrow(/both be 0/u);
  });
});
