/**
 * The bounds of every numeric run setting, in one table read by the config file's schema and by
 * the runner's check of its options (so flags, config keys and library callers meet the same
 * limits, worded the same way). A value outside them is bad input, exit 2, before any cell runs.
 */
import { MembenchError } from '../core/errors.js';
import { checkNumber, SEED_RANGE, type NumberRange } from '../core/numbers.js';

const whole = (min: number, max: number = Number.MAX_SAFE_INTEGER): NumberRange => ({ whole: true, min, max });

/** Ranges by config key. The seed's is the generator's too. */
export const RUN_LIMITS = {
  seed: SEED_RANGE,
  trials: whole(1, 1000),
  workers: whole(1, 1024),
  limit: whole(1),
  // As long as a `filler` step may be: further growth curves run out of memory, not into insight.
  stretch: whole(1, 100_000),
  crashFuzz: whole(0, 10_000),
  recallThreshold: { whole: false, min: 0, max: 1, words: 'a share between 0 and 1' },
  concurrency: whole(1, 1024),
  /** Live request timeout, ms. */
  timeout: { whole: false, min: 1, max: 3_600_000 },
  retries: whole(0, 100),
  /** Per-cell time limit, seconds (a week at most). */
  cellTimeout: { whole: false, min: 1, max: 604_800 },
} as const satisfies Record<string, NumberRange>;

/** What the run options the runner checks look like (a subset of RunOptions, kept structural to avoid an import cycle). */
export interface NumericRunOptions {
  seed?: number;
  trials?: number;
  workers?: number;
  datasets?: readonly string[];
  datasetLimit?: number;
  stretch?: number;
  crashFuzz?: number;
  cellTimeoutMs?: number;
  live?: { concurrency?: number; timeoutMs?: number; maxRetries?: number };
}

/** Refuses out-of-range numeric options, naming the flag that sets each (exit 2). */
export function checkRunNumbers(options: NumericRunOptions): void {
  const check = (flag: string, value: number | undefined, range: NumberRange): void => {
    if (value !== undefined) checkNumber(flag, value, range);
  };
  check('--seed', options.seed, RUN_LIMITS.seed);
  check('--trials', options.trials, RUN_LIMITS.trials);
  check('--workers', options.workers, RUN_LIMITS.workers);
  check('--limit', options.datasetLimit, RUN_LIMITS.limit);
  check('--stretch', options.stretch, RUN_LIMITS.stretch);
  check('--crash-fuzz', options.crashFuzz, RUN_LIMITS.crashFuzz);
  check(
    '--cell-timeout',
    options.cellTimeoutMs === undefined ? undefined : options.cellTimeoutMs / 1000,
    RUN_LIMITS.cellTimeout,
  );
  check('--concurrency', options.live?.concurrency, RUN_LIMITS.concurrency);
  check('--timeout', options.live?.timeoutMs, RUN_LIMITS.timeout);
  check('--retries', options.live?.maxRetries, RUN_LIMITS.retries);
  if (options.datasetLimit !== undefined && !options.datasets?.length) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--limit ${options.datasetLimit} applies to --dataset imports only: name a dataset (--dataset locomo:FILE), or drop --limit`,
    );
  }
}
