/**
 * `unit=session` on bm25, vector and hybrid: a conversation session's exchanges (by the opaque
 * session number of MemoryEvent) are ranked as one document, kept across a reopen; the exchange
 * before a question with no user message after it is rankable; a store refuses another `index`;
 * a load segments only the exchanges it has not seen.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { HashedEmbedder, OfflineModel } from '../../../harness/models/index.js';
import { bm25 } from '../../../strategies/bm25.js';
import { ExchangeMemory, type RankedDocument, type RankedKey } from '../../../strategies/shared/exchange-memory.js';
import { LexicalRetriever } from '../../../strategies/shared/lexical-retriever.js';
import { hybrid } from '../../../strategies/hybrid.js';
import type { MemoryStrategy } from '../../../strategies/types.js';
import { vector } from '../../../strategies/vector.js';
import { strategyScratch } from '../conformance.js';

/** One exchange of `session`, its step id `s{turn}`. */
async function said(
  strategy: MemoryStrategy,
  session: number,
  turn: number,
  user: string,
  reply = 'Noted, thanks for telling me.',
): Promise<void> {
  await strategy.save({ message: new HumanMessage(user), turn, stepId: `s${turn}`, session });
  await strategy.save({ message: new AIMessage(reply), turn, stepId: `s${turn}`, session });
}

/**
 * Three sessions. The question's two rare words ("kayak", "Tacoma") sit in two different
 * exchanges of session 1; session 2 has one exchange with "kayak". As session documents, session 1
 * holds both words; session 0 holds neither.
 */
async function conversation(strategy: MemoryStrategy): Promise<void> {
  await said(strategy, 0, 1, 'Can you suggest a pasta recipe for tonight?');
  await said(strategy, 0, 2, 'What is a good stretch after running?');
  await said(strategy, 1, 3, 'I bought a used kayak last weekend.');
  await said(strategy, 1, 4, 'The seller drove it over from Tacoma.');
  await said(strategy, 1, 5, 'Any tips for a rainy weekend?');
  await said(strategy, 2, 6, 'My nephew keeps talking about kayak races.');
  await said(strategy, 2, 7, 'What should I cook for a picnic?');
}

const QUESTION = 'Where did my kayak come from, Tacoma?';

describe.each([bm25, vector, hybrid])('$name unit=session', (definition) => {
  const scratch = strategyScratch(definition, () => new HashedEmbedder(512));

  it('ranks sessions as documents: one item per session, holding every exchange of it', async () => {
    const strategy = await scratch.open({ unit: 'session', index: 'user', k: 1, recentExchanges: 0 });
    await conversation(strategy);
    const { retrieved, messages } = await strategy.load({ query: QUESTION, turn: 8, rankDepth: 10 });
    expect(retrieved![0]!.stepIds).toEqual(['s3', 's4', 's5']);
    expect(retrieved![1]!.stepIds).toEqual(['s6', 's7']);
    // bm25 returns only documents holding a query term; the vector ranks every session.
    expect(retrieved!.slice(2).map((item) => item.stepIds)).toEqual(retrieved!.length > 2 ? [['s1', 's2']] : []);
    // k=1 session: the context holds the whole of session 1 and nothing of the others.
    const context = messages.map((message) => String(message.content)).join('\n');
    expect(context).toContain('Tacoma');
    expect(context).toContain('rainy weekend');
    expect(context).not.toContain('nephew');
  });

  it('keeps session numbers across a reopen (they are stored with the exchanges)', async () => {
    const writer = await scratch.open({ unit: 'session', index: 'user', recentExchanges: 0 });
    await conversation(writer);
    await writer.save({ message: new HumanMessage('bye'), turn: 8, stepId: 's8', session: 2 });
    await writer.close();
    const reopened = await scratch.open({ unit: 'session', index: 'user', recentExchanges: 0 });
    const { retrieved } = await reopened.load({ query: QUESTION, turn: 9, rankDepth: 10 });
    expect(retrieved![0]!.stepIds).toEqual(['s3', 's4', 's5']);
  });
});

describe.each([bm25, vector, hybrid])('$name unit=message', (definition) => {
  const scratch = strategyScratch(definition, () => new HashedEmbedder(512));

  it('ranks each message alone, the user message and its reply under their own ids', async () => {
    const strategy = await scratch.open({ unit: 'message', k: 1, recentExchanges: 0 });
    await said(strategy, 0, 1, 'What is a good stretch after running?', 'Try a calf stretch against a wall.');
    await said(strategy, 0, 2, 'Where should I store my kayak?', 'A dry garage in Tacoma would do.');
    const { retrieved } = await strategy.load({ query: 'Is Tacoma a good garage town?', turn: 3, rankDepth: 10 });
    expect(retrieved![0]!.stepIds).toEqual(['s2r']);
    expect(retrieved!.every((item) => item.stepIds.length === 1 && /^s[12][ur]$/u.test(item.stepIds[0]!))).toBe(true);
    expect(new Set(retrieved!.map((item) => item.stepIds[0])).size).toBe(retrieved!.length);
  });
});

describe.each([bm25, vector, hybrid])('$name: the exchange before a question', (definition) => {
  const scratch = strategyScratch(definition);

  it('is rankable when no user message follows it', async () => {
    const strategy = await scratch.open({ recentExchanges: 0, k: 3 });
    await said(strategy, 0, 1, 'What is a good stretch after running?');
    await said(strategy, 0, 2, 'I bought a used kayak from a seller in Tacoma.');
    const { retrieved } = await strategy.load({ query: QUESTION, turn: 3, rankDepth: 10 });
    expect(retrieved!.map((item) => item.stepIds).flat()).toContain('s2');
    expect(retrieved![0]!.stepIds).toEqual(['s2']);
  });
});

describe('bm25 store identity', () => {
  const scratch = strategyScratch(bm25);

  it('refuses to reopen a store with another index knob, naming both', async () => {
    const writer = await scratch.open({ index: 'user' });
    await said(writer, 0, 1, 'I bought a used kayak.');
    await writer.close();
    await expect(scratch.open({ index: 'exchange' })).rejects.toThrow(/indexed with user, not exchange/u);
  });
});

/** The real lexical retriever, recording the documents each ranking was handed. */
class RecordingRetriever extends LexicalRetriever {
  readonly handed: (readonly RankedDocument[])[] = [];
  override rankDocuments(query: string, documents: readonly RankedDocument[], n: number): Promise<RankedKey[]> {
    this.handed.push(documents);
    return super.rankDocuments(query, documents, n);
  }
}

describe('bm25 unit=session: the cost of a load', () => {
  it('segments each exchange once: a grown session re-reads only its new exchange, an unchanged one nothing', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-session-cost-'));
    const retriever = new RecordingRetriever({ tokenizer: 'jieba', recencyWeight: 0, halfLife: 20 });
    const memory = new ExchangeMemory(
      {
        dir,
        tokens: new TokenCounter('offline'),
        model: new OfflineModel(),
        embedder: new HashedEmbedder(64),
        durability: 'none',
        seed: 1,
        now: () => new Date(0),
      },
      { k: 2, recentExchanges: 0, index: 'user', unit: 'session' },
      retriever,
      'bm25.sqlite',
    );
    try {
      await memory.open();
      const long = 'My kayak came from a seller in Tacoma. '.repeat(500);
      await said(memory, 0, 1, 'What is a good stretch after running?');
      await said(memory, 1, 2, long);
      const first = await memory.load({ query: QUESTION, turn: 3 });
      expect(first.retrieved![0]!.stepIds).toEqual(['s2']);
      // The long message was segmented once, when it was saved: the session documents reused its terms.
      expect(retriever.segmentedChars).toBeLessThan(long.length + 200);
      const grown = retriever.segmentedChars;
      await said(memory, 1, 3, 'And a paddle from the same shop.');
      await memory.load({ query: QUESTION, turn: 4 });
      // Session 1 grew: only its new exchange (and the query) were segmented, not its long message again.
      expect(retriever.segmentedChars - grown).toBeLessThan(200);
      const unchanged = retriever.segmentedChars;
      await memory.load({ query: QUESTION, turn: 4 });
      expect(retriever.segmentedChars - unchanged).toBeLessThanOrEqual(QUESTION.length);
      // Unchanged sessions are handed over as the same objects, found by identity; the grown one is new.
      const [atFirst, atGrown, atUnchanged] = retriever.handed;
      expect(atGrown![0]).toBe(atFirst![0]);
      expect(atGrown![1]).not.toBe(atFirst![1]);
      expect(atUnchanged![1]).toBe(atGrown![1]);
    } finally {
      await memory.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
