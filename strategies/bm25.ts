/**
 * `bm25`: every exchange indexed in an SQLite FTS5 table and ranked with FTS5's bm25() — the
 * lexical baseline that leads LLM-free retrieval on LongMemEval. Chinese has no spaces, so text
 * is segmented before it reaches FTS5 (the `tokenizer` knob: jieba with its bundled dictionary,
 * CJK character bigrams, or Intl.Segmenter), and queries are segmented the same way.
 *
 * The exchange lifecycle (pending messages, several writers on one dir, the durability modes,
 * the `mid_memory_write` crash point inside an exchange's transaction) is ExchangeMemory's
 * (shared/exchange-memory.ts) over `bm25.sqlite`; the index is LexicalRetriever's
 * (shared/lexical-retriever.ts). Top-k, recency weighting and the verbatim recent exchanges work
 * as in `vector`.
 *
 * `ranker: okapi-paper` ranks instead as the LongMemEval paper's code does (shared/okapi-paper.ts:
 * rank_bm25's BM25Okapi over text split at single spaces, built afresh for each question, every
 * document ranked), over each message as the dataset gives it; `tokenizer` and `recencyWeight` do
 * not apply to it.
 */
import { z } from 'zod';
import { ExchangeMemory } from './shared/exchange-memory.js';
import { LexicalRetriever } from './shared/lexical-retriever.js';
import { retrievalKnobs, tokenizerKnob } from './shared/knobs.js';
import { OkapiPaperRetriever } from './shared/okapi-paper.js';
import { jiebaCutsOf, preloadJieba } from './shared/segmenters.js';
import { defineStrategy } from './types.js';

/** Which BM25 ranks: `fts5`, SQLite FTS5's bm25() over segmented, stemmed terms; `okapi-paper`, the LongMemEval paper's BM25Okapi over space-split text. */
export const BM25_RANKERS = ['fts5', 'okapi-paper'] as const;

/** The knobs users tune: the shared retrieval knobs plus the tokenizer and the ranker. */
export const bm25Options = z
  .object({ ...retrievalKnobs, tokenizer: tokenizerKnob, ranker: z.enum(BM25_RANKERS).default('fts5') })
  .strict();
export type Bm25Options = z.output<typeof bm25Options>;

/** The registry entry for `bm25`. */
export const bm25 = defineStrategy({
  name: 'bm25',
  kind: 'retrieval',
  ranks: 'terms',
  description:
    'every exchange in an SQLite FTS5 index, bm25-ranked top-k; Chinese segmented (jieba, CJK bigrams or Intl.Segmenter)',
  options: bm25Options,
  defaultDurability: 'sync',
  keepsVerbatim: true,
  crashPoints: ['mid_memory_write'],
  preload: preloadJieba,
  preloadShared: jiebaCutsOf,
  create: (context, options) =>
    new ExchangeMemory(
      context,
      options,
      options.ranker === 'okapi-paper' ? new OkapiPaperRetriever() : new LexicalRetriever(options),
      'bm25.sqlite',
    ),
});
