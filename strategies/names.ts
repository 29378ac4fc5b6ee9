/**
 * The names of the built-in strategies, in registry order, without their code: the CLI's flag
 * descriptions list them without loading a strategy (and so SQLite or hnswlib). strategies/index.ts
 * holds the definitions and refuses to load if its list and this one differ.
 */
export const BUILTIN_STRATEGY_NAMES = [
  'buffer',
  'window',
  'summary',
  'summary-buffer',
  'vector',
  'entity',
  'file-index',
  'bm25',
  'hybrid',
] as const;
