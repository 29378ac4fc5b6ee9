/**
 * What kind of memory a strategy is, in the words the bench and the reports use, so that neither
 * lists strategy names: each definition declares its traits (strategies/types.ts) and a run
 * writes them into results.json's header beside each strategy setting.
 */
import { z } from 'zod';

/**
 * What the context holds besides the prompt: `full-history` every message; `window` the most
 * recent ones; `summary` a model-written summary of the conversation (with or without recent
 * messages); `retrieval` past exchanges ranked against the query; `extraction` notes or memory
 * files derived from the conversation.
 */
export const STRATEGY_KINDS = ['full-history', 'window', 'summary', 'retrieval', 'extraction'] as const;
export type StrategyKind = (typeof STRATEGY_KINDS)[number];

/** How a retrieving strategy ranks: by embedding similarity, by terms (bm25), or both fused. */
export const RANKINGS = ['embeddings', 'terms', 'fused'] as const;
export type Ranking = (typeof RANKINGS)[number];

/** Where a strategy persists: a SQLite database (its durable write is a commit) or plain files (a durable file write). */
export const STORAGES = ['sqlite', 'files'] as const;
export type Storage = (typeof STORAGES)[number];

/** The traits of one strategy as results.json records them (absent in files written before they existed). */
export const strategyTraitsSchema = z.object({
  kind: z.enum(STRATEGY_KINDS),
  /** The messages reach the context as they were said (no summary or extraction rewrote them). */
  keepsVerbatim: z.boolean(),
  storage: z.enum(STORAGES),
  ranks: z.enum(RANKINGS).optional(),
  /** It calls the model on every turn by design (summary), so its per-turn cost is not held to the storage floor. */
  callsModelEveryTurn: z.boolean(),
});
export type StrategyTraits = z.infer<typeof strategyTraitsSchema>;
