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

/** Whether each LexicalIndex.add ran inside a transaction, in call order. */
function watchAdds(): boolean[] {
  const inside: boolean[] = [];
  const add = LexicalIndex.prototype.add;
  vi.spyOn(LexicalIndex.prototype, 'add').mockImplementation(function (this: LexicalIndex, key, terms) {
    inside.push(this.inTransaction);
    add.call(this, key, terms);
  });
  return inside;
}

describe('in-memory lexical index', () => {
  it('indexes the exchanges a ranking finds unindexed in one transaction', async () => {
    const retriever = new LexicalRetriever({ tokenizer: 'jieba', recencyWeight: 0, halfLife: 20 });
    retriever.open(new ExchangeStore(dir, 'none', { file: 'store.sqlite', vectors: false, terms: true }));
    const features = await retriever.features(TEXTS);
    features.forEach((feature, index) => retriever.add(index + 1, feature));
    const inside = watchAdds();
    const keys = TEXTS.map((_, index) => index + 1);
    const ranked = await retriever.rank({
      query: '番茄',
      n: 3,
      turn: 41,
      below: Infinity,
      keys,
      searchable: keys.length,
      turnOf: (key) => key,
    });
    expect(inside).toEqual(TEXTS.map(() => true));
    expect(ranked.map(({ key }) => key)).toEqual([37, 33, 29]);
    retriever.close();
  });

  it('indexes session documents in one transaction, and ranks them as row-by-row commits do', async () => {
    const documents = TEXTS.map((text, index) => ({ key: index + 1, text }));
    const retriever = new LexicalRetriever({ tokenizer: 'jieba', recencyWeight: 0, halfLife: 20 });
    const inside = watchAdds();
    const ranked = await retriever.rankDocuments('番茄 savings', documents, 10);
    expect(inside).toEqual(TEXTS.map(() => true));
    vi.restoreAllMocks();

    const alone = LexicalIndex.inMemory();
    const [features] = await Promise.all([retriever.features(TEXTS)]);
    features.forEach((feature, index) => alone.add(index + 1, feature.terms ?? ''));
    expect(alone.inTransaction).toBe(false);
    const query = (await retriever.features(['番茄 savings']))[0]!.terms!.split(' ');
    expect(ranked).toEqual(alone.search(query, 10));
    alone.close();
    retriever.close();
  });

  it('forgets the documents of an update that failed and rolled back: the next ranking indexes them again', async () => {
    const documents = TEXTS.map((text, index) => ({ key: index + 1, text }));
    const retriever = new LexicalRetriever({ tokenizer: 'jieba', recencyWeight: 0, halfLife: 20 });
    const add = LexicalIndex.prototype.add;
    vi.spyOn(LexicalIndex.prototype, 'add').mockImplementation(function (this: LexicalIndex, key, terms) {
      if (key === 30) throw new Error('disk full');
      add.call(this, key, terms);
    });
    await expect(retriever.rankDocuments('番茄 savings', documents, 10)).rejects.toThrow('disk full');
    vi.restoreAllMocks();
    const fresh = new LexicalRetriever({ tokenizer: 'jieba', recencyWeight: 0, halfLife: 20 });
    expect(await retriever.rankDocuments('番茄 savings', documents, 10)).toEqual(
      await fresh.rankDocuments('番茄 savings', documents, 10),
    );
    fresh.close();
    retriever.close();
  });

  it('keeps the exchanges of an indexing that failed and rolled back unindexed: the next ranking indexes them', async () => {
    const keys = TEXTS.map((_, index) => index + 1);
    const request = {
      query: '番茄',
      n: 3,
      turn: 41,
      below: Infinity,
      keys,
      searchable: keys.length,
      turnOf: (key: number) => key,
    };
    const opened = async (name: string) => {
      const retriever = new LexicalRetriever({ tokenizer: 'jieba', recencyWeight: 0, halfLife: 20 });
      retriever.open(new ExchangeStore(dir, 'none', { file: name, vectors: false, terms: true }));
      (await retriever.features(TEXTS)).forEach((feature, index) => retriever.add(index + 1, feature));
      return retriever;
    };
    const retriever = await opened('store.sqlite');
    const add = LexicalIndex.prototype.add;
    vi.spyOn(LexicalIndex.prototype, 'add').mockImplementation(function (this: LexicalIndex, key, terms) {
      if (key === 30) throw new Error('disk full');
      add.call(this, key, terms);
    });
    await expect(retriever.rank(request)).rejects.toThrow('disk full');
    vi.restoreAllMocks();
    const fresh = await opened('fresh.sqlite');
    expect(await retriever.rank(request)).toEqual(await fresh.rank(request));
    fresh.close();
    retriever.close();
  });
});
