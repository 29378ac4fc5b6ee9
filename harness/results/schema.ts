/** The results data model: what `results.json` holds and every reporter reads. */
import type { ModelUsage } from '../models/index.js';
import type { Distribution, RecallSummary } from '../core/metrics.js';
import type { ProbeRecord, TurnRecord } from '../agent/loop.js';
import type { DurabilityResult } from '../process/crashes.js';
import type { LedgerCounts } from '../agent/ledger.js';
import type { MatrixRow, ModePrice } from './durability-matrix.js';
import type { ProbeCategory } from '../scenarios/format.js';
import type { DurabilityMode } from '../../strategies/types.js';

/** Bumped whenever a field changes meaning or disappears. */
export const RESULTS_SCHEMA_VERSION = 1;

export interface RunHeader {
  schemaVersion: number;
  membenchVersion: string;
  gitCommit: string | null;
  nodeVersion: string;
  platform: string;
  seed: number;
  trials: number;
  model: string;
  /** True when answers and maintenance come from the offline reference model, not a live LLM. */
  offlineModel: boolean;
  embedder: string;
  tokenizer: { model: string; encoding: string };
  strategies: { name: string; label: string; options: Record<string, unknown>; durability: DurabilityMode }[];
  scenarios: { name: string; source: string; steps: number }[];
  startedAt: string;
  durationMs: number;
}

export interface CellTokens {
  /** Sum over turns of what the strategy loaded for each model call. */
  contextTotal: number;
  contextMeanPerTurn: number;
  contextMax: number;
  maintenance: number;
  maintenanceCalls: number;
  answer: number;
  reply: number;
}

export interface CellResult {
  id: string;
  scenario: string;
  strategy: string;
  label: string;
  options: Record<string, unknown>;
  durability: DurabilityMode;
  trial: number;
  seed: number;
  status: 'ok' | 'error';
  error?: string;
  tokens: CellTokens;
  recall: RecallSummary;
  recallByCategory: Partial<Record<ProbeCategory, RecallSummary>>;
  /** Per turn in the agent process; `modelMs` covers live model calls only (cache hits excluded). */
  latency: { loadMs: Distribution; saveMs: Distribution; modelMs: Distribution };
  usage: ModelUsage;
  /** Side effects the ledger recorded (duplicates counted, not guessed). */
  effects: LedgerCounts;
  /** Crashes, recoveries and invariants, for cells run in agent processes. */
  faults?: DurabilityResult;
  /** Peak resident set size (MiB) of the process that replayed the cell (agent processes included). */
  peakRssMb: number;
  turns: TurnRecord[];
  probes: ProbeRecord[];
  durationMs: number;
}

export interface RunResult {
  header: RunHeader;
  cells: CellResult[];
  /** Strategy × durability mode × crash point, for cells run with faults (empty otherwise). */
  durabilityMatrix: MatrixRow[];
  /** Each durability mode's price (save latency) beside its losses. */
  durabilityPrices: ModePrice[];
}

/** Field names that hold measured time: the only fields allowed to differ between two runs with one seed. */
export const TIMING_KEYS: ReadonlySet<string> = new Set(['startedAt', 'durationMs', 'loadMs', 'saveMs', 'latency', 'saveP50', 'saveP95', 'peakRssMb']);

/** A copy of `value` without timing fields (for reproducibility checks and `compare`). */
export function withoutTiming<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, inner: unknown) => (TIMING_KEYS.has(key) ? undefined : inner))) as T;
}
