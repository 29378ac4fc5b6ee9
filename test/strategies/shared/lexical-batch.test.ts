/**
 * An in-memory lexical index (modes `exit` and `none`, and session documents) takes its rows in
 * one transaction per update, not one commit per row: FTS5 writes its pending terms once per
 * transaction. The rankings are the same as when each row commits alone.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LexicalRetriever } from '../../../strategies/shared/lexical-retriever.js';
import { ExchangeStore } from '../../../strategies/stores/exchange-store.js';
import { LexicalIndex } from '../../../strategies/stores/lexical-index.js';

const TEXTS = Array.from({ length: 40 }, (_, i) =>
  i % 4 === 0 ? `我妹妹在院子里种了番茄 ${i}` : `we moved the savings account number ${i} to the new bank`,
);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'membench-lexical-batch-'));
});
afterEach(async () => {
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** Each LexicalIndex.add: `before` sees it first (it may throw), then the row is added. */
function onAdd(before: (index: LexicalIndex, key: number) => void): void {
  const add = LexicalIndex.prototype.add;
  vi.spyOn(LexicalIndex.prototype, 'add').mockImplementation(function (this: LexicalIndex, key, terms) {
    before(this, key);
    add.call(this, key, terms);
  });
}

/** Whether each LexicalIndex.add ran inside a transaction, in call order. */
function watchAdds(): boolean[] {
  const inside: boolean[] = [];
  onAdd((index) => inside.push(index.inTransaction));
  return inside;
}

/** Makes the add of row `failing` throw, as a full disk would. */
function failAdd(failing: number): void {
  onAdd((_, key) => {
    if (key === failing) throw new Error('disk full');
  });
}

const KEYS = TEXTS.map((_, index) => index + 1);
/** A ranking at turn 41 over every exchange, no recency. */
const REQUEST = {
  query: '番茄',
  n: 3,
  turn: 41,
  below: Infinity,
  keys: KEYS,
  searchable: KEYS.length,
  turnOf: (key: number) => key,
};
const DOCUMENTS = TEXTS.map((text, index) => ({ key: index + 1, text }));

const retriever = () => new LexicalRetriever({ tokenizer: 'jieba', recencyWeight: 0, halfLife: 20 });

/** A retriever over an in-memory (mode `none`) store in `file` holding every text as an exchange. */
async function withExchanges(file: string): Promise<LexicalRetriever> {
  const opened = retriever();
  opened.open(new ExchangeStore(dir, 'none', { file, vectors: false, terms: true }));
  (await opened.features(TEXTS)).forEach((feature, index) => opened.add(index + 1, feature));
  return opened;
}

describe('in-memory lexical index', () => {
  it('indexes the exchanges a ranking finds unindexed in one transaction', async () => {
    const opened = await withExchanges('store.sqlite');
    const inside = watchAdds();
    const ranked = await opened.rank(REQUEST);
    expect(inside).toEqual(TEXTS.map(() => true));
    expect(ranked.map(({ key }) => key)).toEqual([37, 33, 29]);
    opened.close();
  });

  it('indexes session documents in one transaction, and ranks them as row-by-row commits do', async () => {
    const ranking = retriever();
    const inside = watchAdds();
    const ranked = await ranking.rankDocuments('番茄 savings', DOCUMENTS, 10);
    expect(inside).toEqual(TEXTS.map(() => true));
    vi.restoreAllMocks();

    const alone = LexicalIndex.inMemory();
    const features = await ranking.features(TEXTS);
    features.forEach((feature, index) => alone.add(index + 1, feature.terms ?? ''));
    expect(alone.inTransaction).toBe(false);
    const query = (await ranking.features(['番茄 savings']))[0]!.terms!.split(' ');
    expect(ranked).toEqual(alone.search(query, 10));
    alone.close();
    ranking.close();
  });

  it('forgets the documents of an update that failed and rolled back: the next ranking indexes them again', async () => {
    const ranking = retriever();
    failAdd(30);
    await expect(ranking.rankDocuments('番茄 savings', DOCUMENTS, 10)).rejects.toThrow('disk full');
    vi.restoreAllMocks();
    const fresh = retriever();
    expect(await ranking.rankDocuments('番茄 savings', DOCUMENTS, 10)).toEqual(
      await fresh.rankDocuments('番茄 savings', DOCUMENTS, 10),
    );
    fresh.close();
    ranking.close();
  });

  it('keeps the exchanges of an indexing that failed and rolled back unindexed: the next ranking indexes them', async () => {
    const opened = await withExchanges('store.sqlite');
    failAdd(30);
    await expect(opened.rank(REQUEST)).rejects.toThrow('disk full');
    vi.restoreAllMocks();
    const fresh = await withExchanges('fresh.sqlite');
    expect(await opened.rank(REQUEST)).toEqual(await fresh.rank(REQUEST));
    fresh.close();
    opened.close();
  });
});
