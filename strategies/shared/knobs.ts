/** Option schemas several strategies share, so each strategy file composes its options without importing another strategy. */
import { z } from 'zod';
import { LEXICAL_TOKENIZERS } from './segmenters.js';

/** The knobs every exchange-retrieving strategy shares (`vector`, `bm25`, `hybrid`). */
export const retrievalKnobs = {
  /** Earlier exchanges retrieved per model call. */
  k: z.coerce.number().int().min(1).default(4),
  /** 0 ranks by relevance alone; w > 0 ranks by (1 - w) * relevance + w * 2^(-age / halfLife). */
  recencyWeight: z.coerce.number().min(0).max(1).default(0),
  /** Turns after which the recency bonus has halved. */
  halfLife: z.coerce.number().positive().default(20),
  /** Most recent complete exchanges always included verbatim (not counted in k). */
  recentExchanges: z.coerce.number().int().min(0).default(1),
  /**
   * What an exchange is found by: `exchange`, its user message and reply; `user`, its user
   * message alone (LongMemEval's retrieval indexes user turns only; `--protocol longmemeval` sets it).
   */
  index: z.enum(['exchange', 'user']).default('exchange'),
  /**
   * What one ranked document is: `turn`, one exchange; `session`, a conversation session's
   * exchanges joined (LongMemEval's session granularity; `--protocol longmemeval` runs both).
   */
  unit: z.enum(['turn', 'session']).default('turn'),
};

/** The knobs of embedding retrieval (`vector`, and `hybrid`'s vector half). */
export const embeddingKnobs = {
  /** Below this many stored exchanges search is exact brute force (faster than HNSW when small). */
  exactBelow: z.coerce.number().int().min(0).default(256),
  /** Retrieved exchanges must be more similar than this to the query (cosine). */
  minSimilarity: z.coerce.number().min(-1).max(1).default(0),
  /** The index file is rewritten once this many (and at least a quarter of the index) are unsaved. */
  persistEvery: z.coerce.number().int().min(1).default(256),
};

/** How text becomes index terms (`bm25`, and `hybrid`'s lexical half): `jieba` (default: it recalled best on the Chinese built-ins), `bigram` or `intl`. */
export const tokenizerKnob = z.enum(LEXICAL_TOKENIZERS).default('jieba');
