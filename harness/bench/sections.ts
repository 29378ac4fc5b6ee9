/** What `membench bench` can run and its default sizes, apart from the sections' code so the CLI can describe its flags without loading them. */

/** The sections `--only` selects. */
export const BENCH_SECTIONS = [
  'floors',
  'save-load',
  'recovery',
  'langchain',
  'vector',
  'suite',
  'dataset',
  'hostile',
  'aa',
  'protocol',
] as const;

/** Questions of the "protocol" section's LongMemEval_S-shaped file, and in quick mode. */
export const PROTOCOL_QUESTIONS = 50;
export const QUICK_PROTOCOL_QUESTIONS = 5;

/** Questions of the "dataset scale" section's LongMemEval_S-shaped file (`--questions`), and in quick mode. */
export const DATASET_QUESTIONS = 50;
export const QUICK_DATASET_QUESTIONS = 5;
export type BenchSection = (typeof BENCH_SECTIONS)[number];

/** History lengths measured by default (`--sizes`), and in quick mode. */
export const DEFAULT_SIZES = [10, 100, 1000, 10_000];
export const QUICK_SIZES = [10, 100, 1000];
