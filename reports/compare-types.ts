/** What `compare` decides with and returns: its thresholds, one checked figure, the whole comparison. */

/** The gates a head run must pass against its base. */
export interface CompareThresholds {
  /** Largest allowed drop of context recall, absolute (0.05 = five points). */
  maxRecallDrop: number;
  /** Largest allowed growth of context or maintenance tokens, relative (0.10 = +10%). */
  maxTokenIncrease: number;
  /**
   * Largest allowed head/base ratio of a cell's load or save time, each run's times divided by its
   * own calibration: a slowdown regresses only when its whole interval lies above this.
   */
  maxLatencyRatio: number;
  /** p50 differences below this many ms are always noise. */
  minLatencyMs: number;
  /**
   * The family-wise false-alarm rate the latency judgement aims for: over all latency figures of one
   * comparison (Bonferroni), the chance that any is flagged when each is exactly `maxLatencyRatio`
   * times slower; identical code sits far below the limit, so it is flagged far more rarely.
   */
  latencyFalseAlarm: number;
  /**
   * True compares latency, false skips it; `same-machine` (the default) compares it only when both
   * headers name the same machine: a baseline timed elsewhere (the committed one) says nothing
   * about this machine's speed, so its slowdowns would be false regressions.
   */
  latency: boolean | 'same-machine';
  /**
   * False (the default): a base cell missing from head, or a head cell in error, is a regression,
   * so a CI run that crashed half-way never reads as "OK". True lists them without failing.
   */
  allowMissing: boolean;
}

export const DEFAULT_THRESHOLDS: CompareThresholds = {
  maxRecallDrop: 0.05,
  maxTokenIncrease: 0.1,
  maxLatencyRatio: 2,
  minLatencyMs: 1,
  latencyFalseAlarm: 0.01,
  latency: 'same-machine',
  allowMissing: false,
};

/**
 * The range of each numeric threshold (`latencyFalseAlarm` is a share strictly between 0 and 1,
 * checked beside it): the flags and `compareRuns` check the same. A recall drop is a share of
 * probes: above 1 no drop could exceed it, and the gate could never fail.
 */
export const THRESHOLD_RANGES = {
  maxRecallDrop: { min: 0, max: 1 },
  maxTokenIncrease: { min: 0, max: Number.MAX_SAFE_INTEGER },
  maxLatencyRatio: { min: 1, max: Number.MAX_SAFE_INTEGER },
  minLatencyMs: { min: 0, max: Number.MAX_SAFE_INTEGER },
  latencyFalseAlarm: { min: 0, max: Number.MAX_SAFE_INTEGER },
} as const satisfies Partial<Record<keyof CompareThresholds, { min: number; max: number }>>;

/** The thresholds applied: `latency` resolved to whether latency was compared. */
export type AppliedThresholds = CompareThresholds & { latency: boolean };

/**
 * What a check concluded: `noise` a change the test cannot tell from chance; `ungated` a figure of
 * a nondeterministic cell (concurrent sessions), shown but never failing; `n/a` nothing to judge.
 */
export type CheckVerdict = 'ok' | 'improved' | 'noise' | 'ungated' | 'regression' | 'n/a';

/** One metric of one cell (or of the whole run) checked. */
export interface MetricCheck {
  metric: string;
  base: string;
  head: string;
  change: string;
  limit: string;
  verdict: CheckVerdict;
  note?: string;
}

export interface CellComparison {
  id: string;
  checks: MetricCheck[];
  /** The cell ran concurrent sessions in either run: only its invariants, losses and status are gated. */
  nondeterministic?: true;
}

export interface Comparison {
  thresholds: AppliedThresholds;
  /** Header differences that make numbers less comparable (tokenizer, model, seed...). */
  notes: string[];
  cells: CellComparison[];
  /** Cell ids only in head (new) / only in base (missing: a regression unless `allowMissing`). */
  added: string[];
  removed: string[];
  /** Head cells in error (a regression unless `allowMissing`; one that was ok in base always is). */
  errored: string[];
  /** Totals over the cells both runs measured. */
  overall: MetricCheck[];
  /** Every regressed check with its cell id (`overall` for run totals). */
  regressions: { cell: string; check: MetricCheck }[];
}

export const EPSILON = 1e-9;
export const signed = (value: number, digits = 2): string =>
  `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(digits)}`;
export const percent = (value: number): string => (Number.isFinite(value) ? `${signed(value * 100, 1)}%` : '+∞');
