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
 */
import { z } from 'zod';
import { ExchangeMemory } from './shared/exchange-memory.js';
import { LexicalRetriever } from './shared/lexical-retriever.js';
import { retrievalKnobs, tokenizerKnob } from './shared/knobs.js';
import { preloadJieba } from './shared/segmenters.js';
import { defineStrategy } from './types.js';

/** The knobs users tune: the shared retrieval knobs plus the tokenizer. */
export const bm25Options = z.object({ ...retrievalKnobs, tokenizer: tokenizerKnob }).strict();
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
  create: (context, options) => new ExchangeMemory(context, options, new LexicalRetriever(options), 'bm25.sqlite'),
});
