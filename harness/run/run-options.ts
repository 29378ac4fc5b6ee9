/**
 * What `runBenchmark` takes (RunOptions), what it reports as it goes (ProgressEvent), where a
 * resumable run keeps its cells (CellStore), and the run's defaults.
 */
import type { LiveProviderSettings } from './cell.js';
import type { CellResult } from '../results/schema.js';
import type { Protocol } from '../results/protocols.js';
import type { Shard } from '../results/shard.js';
import type { DurabilityMode } from '../../strategies/types.js';

/** Where the default run prices the durability modes: a crash after every acknowledged memory (the sync-or-async question). */
export const DEFAULT_PRICED_SCENARIOS: readonly string[] = ['remember-then-crash'];

export interface RunOptions {
  /** Strategy names (default: every built-in). */
  strategies?: readonly string[];
  /** Built-in scenario names or file paths (default: every built-in). */
  scenarios?: readonly string[];
  /** `--param` values: `window.k=2,4,8`. */
  params?: readonly string[];
  seed?: number;
  trials?: number;
  /** `offline` (default) or `openai:NAME`. */
  model?: string;
  /** `hashed` (default) or `openai:NAME`. */
  embedder?: string;
  /** Model name whose tokenizer counts tokens (default: the model's name). */
  tokenizer?: string;
  /** Base URL, key, concurrency, timeout, retries and temperature for `openai:` providers. */
  live?: LiveProviderSettings;
  /** Response cache for live models: a file path, `false` for none (default: .membench/cache.sqlite). */
  cache?: string | false;
  /** Datasets to import and run directly: `locomo:FILE` or `longmemeval:FILE`. */
  datasets?: readonly string[];
  /** With `datasets`: the first N conversations / questions. */
  datasetLimit?: number;
  /** `--question ID`: only these questions / conversations of the datasets (ids as reports show them, or the file's own). */
  questions?: readonly string[];
  /** With `datasets`: an errata file correcting or dropping gold answers at import (docs/judging.md). */
  errata?: string;
  /** With `datasets`: a YAML file of templates for how LoCoMo's temporal and adversarial questions are asked (docs/datasets.md). */
  questionPrompts?: string;
  /** Stretch every selected scenario to this many user turns with filler (probes kept); names become `NAME~N`. */
  stretch?: number;
  /** Resolves relative scenario and strategy module paths (default: the process's cwd). */
  cwd?: string;
  /** Kill agent processes at this many seeded random crash points per cell (implies processes). */
  crashFuzz?: number;
  /** Run every cell's agent in child processes, even without faults. */
  isolate?: boolean;
  /** Durability modes applied to every strategy not given one by `--param S.durability=` (default: each strategy's own). */
  durabilities?: readonly DurabilityMode[];
  /**
   * Scenarios on which every strategy also runs in its other durability modes, so the report can
   * price sync, async, exit and none (save latency beside what each lost). Default: the crash
   * scenarios of DEFAULT_PRICED_SCENARIOS when the run names no scenario and no durability; [] for none.
   */
  priceDurability?: readonly string[];
  /**
   * Idempotency keys on tool effects: `on`, `off`, `both` — cells whose scenario has
   * side-effecting tools and runs in processes are run with and without keys — or `one` (the
   * default): that contrast for one strategy only (CONTRAST_STRATEGY, else the run's first), the
   * others with keys. A duplicated effect is the harness's tool-call recovery, not the strategy's.
   */
  idempotency?: IdempotencyChoice;
  /** Keep each cell's temp dir (for debugging a strategy's files). */
  keepCellDirs?: boolean;
  /** Record where each cell's time went (`phases` in each cell result; `--profile`). */
  profile?: boolean;
  /** Worker processes running cells at once (default 1: every cell in this process, one after another). */
  workers?: number;
  /** Run only this shard of the planned cells. */
  shard?: Shard;
  /** Persists finished cells and hands back those of an earlier, interrupted attempt. */
  store?: CellStore;
  /** Aborting stops the run: no new cell starts, running workers are killed, the run rejects with RunInterrupted. */
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  onWarning?: (message: string) => void;
  /** Injected clock of the run's header (`startedAt`), for tests; the strategies' clock is `ProviderSettings.clock`. */
  now?: () => Date;
  /** The k of retrieval metrics (default 1, 5, 10; under a protocol, the paper's): recall_any@k, recall_all@k, NDCG@k. */
  retrievalK?: readonly number[];
  /**
   * `--protocol`: a paper's own retrieval protocol (harness/results/protocols.ts). It sets the
   * paper's k, ranks the whole store at each probe, sets the knobs the paper's corpus needs on the
   * strategies that have them (`index=user` for LongMemEval; a `--param` may narrow them, one that
   * contradicts them is refused), and scores every ranking by the paper's rules beside membench's
   * own figures. It applies to its paper's dataset only (harness/run/protocol-fit.ts).
   */
  protocol?: Protocol;
  /** Keep each probe's whole ranking in results.json (default: the top 50, cut after scoring). */
  keepRankings?: boolean;
  /** With `protocol`: cells of strategies that rank replay whole (answers, durable stores) instead of ranking only (harness/run/rank-only.ts). */
  protocolFull?: boolean;
  /** A cell running longer than this is stopped and recorded as an error naming the phase it hung in (default DEFAULT_CELL_TIMEOUT_MS). */
  cellTimeoutMs?: number;
  /**
   * Run cells in pool worker processes even with one worker (the CLI does): strategy code never
   * runs in this process, so one that blocks, hangs or calls process.exit costs only its cell.
   */
  cellProcesses?: boolean;
}

/** `index` is the cell's position among this run's `cells` (a shard's own, when sharded); `finished` counts cells an earlier attempt already ran. */
export type ProgressEvent =
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

export const DEFAULT_SEED = 42;

/** How `--idempotency` spreads the with / without keys contrast over a run's strategies. */
export type IdempotencyChoice = 'on' | 'off' | 'both' | 'one';

/** The strategy that runs the with / without idempotency keys contrast under `--idempotency one` (the default), when the run has it. */
export const CONTRAST_STRATEGY = 'buffer';

/** Half an hour: far beyond any built-in cell offline; long live-model conversations may need --cell-timeout. */
export const DEFAULT_CELL_TIMEOUT_MS = 30 * 60 * 1000;
/** Where live model responses are cached unless `--no-cache` or `--cache FILE` says otherwise. */
export const DEFAULT_CACHE_FILE = '.membench/cache.sqlite';
