/**
 * What a long message costs a lexical cell: its text is segmented once per process (the cells of a
 * run over the same conversation share its terms, per tokenizer), with the whole text's terms; and
 * saving it counts no tokens (no context is built on save).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../../../harness/core/random.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { HashedEmbedder, OfflineModel } from '../../../harness/models/index.js';
import { bm25 } from '../../../strategies/bm25.js';
import { LexicalRetriever } from '../../../strategies/shared/lexical-retriever.js';
import { LEXICAL_TOKENIZERS, segmenterFor } from '../../../strategies/shared/segmenters.js';

const CHARS = 10_000;

/** Long texts that defeat word cutting, each different from any other test's (the terms are shared by the process). */
function longTexts(seed: number): { chinese: string; emoji: string; mixed: string } {
  const next = seededRandom(seed);
  const drawn = (from: number, span: number): string =>
    Array.from({ length: CHARS }, () => String.fromCharCode(from + Math.floor(next() * span))).join('');
  const emoji = ['😀', '🎉', '👍🏽', '🇫🇷', '❤️'];
  return {
    chinese: drawn(0x4e00, 3000),
    emoji: Array.from({ length: CHARS / 4 }, () => emoji[Math.floor(next() * emoji.length)]).join(''),
    mixed: Array.from({ length: CHARS / 20 }, (_, i) =>
      i % 3 === 0 ? `kayak${i} Tacoma ` : i % 3 === 1 ? drawn(0x4e00, 3000).slice(0, 12) : '👍🏽🎉 ',
    ).join(''),
  };
}

const retriever = (tokenizer: (typeof LEXICAL_TOKENIZERS)[number]): LexicalRetriever =>
  new LexicalRetriever({ tokenizer, recencyWeight: 0, halfLife: 20 });

describe('lexical terms, once per process', () => {
  it.each(Object.entries(longTexts(101)))(
    'a %s message seen by an earlier retriever is not segmented again, and its terms are the whole text’s',
    async (_kind, text) => {
      const first = retriever('jieba');
      const [own] = await first.features([text]);
      expect(first.segmentedChars).toBe(text.length);
      expect(own!.terms).toBe(segmenterFor('jieba')(text).join(' '));

      // A later cell over the same conversation (another unit or ranker): the same terms, no segmenting.
      const later = retriever('jieba');
      const [again] = await later.features([text]);
      expect(later.segmentedChars).toBe(0);
      expect(again!.terms).toBe(own!.terms);
    },
  );

  it('keeps each tokenizer’s terms apart', async () => {
    const { mixed } = longTexts(202);
    for (const tokenizer of LEXICAL_TOKENIZERS) {
      const [features] = await retriever(tokenizer).features([mixed]);
      expect(features!.terms).toBe(segmenterFor(tokenizer)(mixed).join(' '));
    }
  });
});

describe('saving into bm25', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-process-terms-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['turn', 'session'])('counts no tokens with unit=%s: tokens are counted only for a context', async (unit) => {
    const tokens = new TokenCounter('gpt-4o');
    const strategy = bm25.create(
      {
        dir,
        tokens,
        model: new OfflineModel(),
        embedder: new HashedEmbedder(64),
        durability: 'none',
        seed: 1,
        now: () => new Date(0),
      },
      bm25.options.parse({ unit }),
    );
    await strategy.open();
    try {
      let turn = 0;
      for (const text of Object.values(longTexts(303))) {
        turn++;
        await strategy.save({ message: new HumanMessage(text), turn, stepId: `s${turn}`, session: turn });
        await strategy.save({ message: new AIMessage('Noted.'), turn, stepId: `s${turn}`, session: turn });
      }
      expect(tokens.encodeCalls).toBe(0);
    } finally {
      await strategy.close();
    }
  });
});
