/**
 * `RunOptions`, what `runBenchmark` takes: the settings of harness/run/settings.ts in their groups
 * (the matrix: what to run; the providers; the execution), each field typed from its row, plus the
 * hooks a program passes in. Nothing here is written by hand but the hooks.
 */
import type { LiveProviderSettings } from '../models/openai.js';
import type { CellResult } from '../results/schema.js';
import type { SettingGroup, SettingKey, Settings, SettingValue } from './settings.js';

/** Lists are taken read-only: a caller's `as const` array fits. */
type Loose<V> = V extends readonly (infer Item)[] ? readonly Item[] : V;

/** A row's RunOptions field: `option` when it has one, else its key. */
type FieldOf<K extends SettingKey> = Settings[K] extends { option: infer Name extends string } ? Name : K;

/** The fields of one group, typed from the table (rows that set a `live` field live under `live`). */
type GroupOptions<G extends SettingGroup> = {
  -readonly [K in SettingKey as Settings[K] extends { group: G }
    ? Settings[K] extends { live: string }
      ? never
      : FieldOf<K>
    : never]?: Loose<SettingValue<K>>;
};

/** What to run: strategies, params, scenarios, datasets, seed, trials, faults, durability, scoring. */
export type RunMatrix = GroupOptions<'matrix'>;

/** The model, the embedder, the tokenizer, the response cache, and how a live endpoint is reached (`live`). */
export type RunProviders = GroupOptions<'providers'> & {
  /** Base URL, key, concurrency, timeout, retries and temperature for `openai:` providers. */
  live?: LiveProviderSettings;
};

/** How the cells run: workers, agent and worker processes, time limits, kept dirs and rankings, shard, profile. */
export type RunExecution = GroupOptions<'execution'>;

/** `index` is the cell's position among this run's `cells` (a shard's own, when sharded); `finished` counts cells an earlier attempt already ran. */
export type ProgressEvent =
  /** While a `--dataset` is imported, before the cells are planned: its bytes read so far (`dataset` as given: `longmemeval:FILE`). */
  | { type: 'import'; dataset: string; read: number; total: number }
  /** `units`: every planned cell's strategy setting and scenario group, so progress can count a dataset's questions per strategy. */
  | { type: 'start'; cells: number; finished: number; units: { setting: string; group?: string; done: boolean }[] }
  | { type: 'cell'; index: number; cells: number; result: CellResult };

/** Where a resumable run keeps its finished cells (see harness/run/run-dir.ts). Positions are indexes into the whole plan. */
export interface CellStore {
  /** Called once the matrix is planned: checks it is the store's matrix and returns the cells already finished. */
  open(plan: { digest: string; ids: readonly string[] }): Promise<ReadonlyMap<number, CellResult>>;
  /** Called as each cell finishes, before its progress event. */
  save(position: number, result: CellResult): Promise<void>;
}

/** What a program passes in besides settings: where finished cells go, how to stop the run, what it hears. */
export interface RunHooks {
  /** Persists finished cells and hands back those of an earlier, interrupted attempt. */
  store?: CellStore;
  /** Aborting stops the run: no new cell starts, running workers are killed, the run rejects with RunInterrupted. */
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  onWarning?: (message: string) => void;
  /** Injected clock, for tests (cells in pool workers use the real clock). */
  now?: () => Date;
}

/** Everything `runBenchmark` takes: the four groups side by side (every field optional). */
export type RunOptions = RunMatrix & RunProviders & RunExecution & RunHooks;

/** How `--idempotency` spreads the with / without keys contrast over a run's strategies. */
export type IdempotencyChoice = SettingValue<'idempotency'>;
