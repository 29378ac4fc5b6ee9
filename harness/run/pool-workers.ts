/**
 * The cell pool's worker processes: their entry, how one is forked, and workers forked ahead of a
 * run (prestartPoolWorker). A pool worker loads the run's modules before it says it is ready
 * (~0.27 s alone); `membench run` spent its first ~0.8 s on one core (its own modules, the
 * config, the scenarios, the plan) with the other idle, and only then forked its workers and waited
 * for them. One forked when the command starts loads while it plans, and the pool takes it
 * (takePrestarted) instead of forking one of its own. This module loads no run code: it is what the CLI
 * imports first.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { deserialize } from 'node:v8';
import { ForkedWorker, type WorkerEntry } from '../process/worker.js';
import type { CellResult } from '../results/schema.js';
import type { CellTask, ProviderSettings } from './cell.js';

/**
 * The pool → worker message: one cell and the providers' settings (the same for every cell of a
 * run). The cell's scenario travels apart, and only when it is not the one the worker was sent last:
 * a dataset's question (~0.6 MB of text) is run by several cells (both units, both rankers) and
 * the pool gives them to the worker that holds it (`nextTask`), so it is copied once, not per cell.
 */
export interface RunCellRequest {
  type: 'run';
  index: number;
  task: Omit<CellTask, 'scenario'>;
  /** The cell's scenario; absent: the scenario of the worker's previous cell. */
  scenario?: WireScenario;
  settings: ProviderSettings;
  /** A fresh worker's first cell only: cells it replays first, untimed and discarded (warmUpTasks). */
  warmUp?: WireTask[];
  /** Where the run has cells that need agent processes: how many no worker has yet (AgentDemand). */
  queuedAgentCells?: number;
}

/**
 * A scenario as the pool sends it: the object, or (a dataset's question, shelved on disk while the
 * run plans and runs: scenario-shelf.ts) its bytes as v8.serialize wrote them, read from the shelf
 * and deserialized by the worker alone.
 */
export type WireScenario = CellTask['scenario'] | Uint8Array;

/** A cell task as the pool sends it. */
export type WireTask = Omit<CellTask, 'scenario'> & { scenario: WireScenario };

/** The scenario a worker was sent, as an object. */
export const fromWire = (scenario: WireScenario): CellTask['scenario'] =>
  scenario instanceof Uint8Array ? (deserialize(scenario) as CellTask['scenario']) : scenario;

/**
 * Pool → every worker, each time a cell that needs agent processes is handed out: how many such
 * cells no worker has yet, so a worker forks no more warm spares than the cells left could open
 * (spares.ts setQueuedAgentCells). A worker that starts later learns it with its first cell.
 */
export interface AgentDemand {
  type: 'demand';
  queuedAgentCells: number;
}

/** Pool → worker. */
export type ToPoolEntry = RunCellRequest | AgentDemand;

/**
 * Worker → pool: `ready` once it listens, then the phases of each cell as it goes, then one `result` per cell;
 * or `uncaught`, an exception nothing awaited (a strategy's timer that throws): the cell fails with it, the worker is replaced.
 */
export type FromPoolEntry =
  | { type: 'ready' }
  | { type: 'phase'; index: number; phase: string }
  | { type: 'result'; index: number; result: CellResult }
  | { type: 'uncaught'; index: number; error: string };

export type PoolWorker = ForkedWorker<ToPoolEntry, FromPoolEntry>;

/** Node flags of every worker: `gc()`, for the full collections it runs between cells (pool-entry.ts). */
const WORKER_FLAGS = ['--expose-gc'];

/**
 * The worker entry: under dist, the bundled one (dist/cli/pool-entry.mjs, from scripts/bundle-cli.mjs:
 * a few files to load instead of hundreds of modules) when it was built, else the compiled JS; the TS
 * source (through tsx) under the test runner.
 */
function workerEntry(): WorkerEntry {
  const bundled = fileURLToPath(new URL('../../cli/pool-entry.mjs', import.meta.url));
  if (import.meta.url.endsWith('.js') && existsSync(bundled)) return { file: bundled, execArgv: WORKER_FLAGS };
  const js = fileURLToPath(new URL('./pool-entry.js', import.meta.url));
  if (existsSync(js)) return { file: js, execArgv: WORKER_FLAGS };
  return {
    file: fileURLToPath(new URL('./pool-entry.ts', import.meta.url)),
    execArgv: [...WORKER_FLAGS, '--import', 'tsx'],
  };
}

/** Forks one pool worker, in its own process group (a terminal's Ctrl-C reaches only the harness, which kills the group). */
export function forkPoolWorker(): PoolWorker {
  return new ForkedWorker<ToPoolEntry, FromPoolEntry>({
    entry: workerEntry(),
    detached: true,
    isReady: (message) => message.type === 'ready',
  });
}

/** The worker forked ahead of a run and not yet taken, with the environment it was forked under. */
let prestarted: { worker: PoolWorker; env: NodeJS.ProcessEnv } | undefined;

/** How many workers forked ahead a pool took (the tests' view). */
export const prestartStats = { taken: 0 };

/**
 * Forks one pool worker now, for the pool of the run this process is about to make. One: a run's
 * first cell waits for it, and the cores are free while this process plans; more would take a core
 * from that planning, and a run of one cell would fork them for nothing (measured on 2 cores: two
 * ahead made a one-cell run no faster and cost ~0.3 s of CPU, one ahead took it from ~1.2 to ~1.0 s).
 * It keeps nothing alive: a command that fails before its run exits as it would, and the worker
 * with it (a pool worker exits when its channel closes); releasePrestarted kills one no pool took.
 * Returned for a caller that waits for it (the tests).
 */
export function prestartPoolWorker(): PoolWorker {
  releasePrestarted();
  const worker = forkPoolWorker();
  worker.hold(false);
  prestarted = { worker, env: { ...process.env } };
  return worker;
}

/**
 * The prestarted worker, alive, for a pool to use (held again: it keeps the run alive now); none
 * when the environment changed since it was forked (a child inherits it at its fork: it would run
 * under another), and it is killed then.
 */
export function takePrestarted(): PoolWorker | undefined {
  const held = prestarted;
  prestarted = undefined;
  if (held === undefined || !held.worker.alive) return undefined;
  if (!isDeepStrictEqual(held.env, { ...process.env })) {
    void held.worker.kill({ group: true });
    return undefined;
  }
  held.worker.hold(true);
  prestartStats.taken++;
  return held.worker;
}

/** Kills the prestarted worker when no pool took it (a command that failed, or ran no cell). */
export function releasePrestarted(): void {
  if (prestarted) void prestarted.worker.kill({ group: true });
  prestarted = undefined;
}
