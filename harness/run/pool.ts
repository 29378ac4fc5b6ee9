/**
 * The cell pool: N forked worker processes, each running one cell at a time. Results come back
 * as they finish (the caller orders them); a worker that dies mid-cell turns that cell into an
 * error result with its exit code and signal, and a fresh worker takes its place.
 */
import { performance } from 'node:perf_hooks';
import { failedCell, needsProcesses, type CellTask, type ProviderSettings } from './cell.js';
import { loadLimitMs, timeoutMessage, UNTIMED_PHASES } from './cell-timeout.js';
import { isLiveProvider } from '../models/index.js';
import type { CellResult } from '../results/schema.js';
import {
  forkPoolWorker,
  takePrestarted,
  type PoolWorker,
  type RunCellRequest,
  type WireScenario,
} from './pool-workers.js';
import { isShelved, loadScenario, type PlannedScenario } from './scenario-shelf.js';

/**
 * Scenarios the pool sent to its workers (tests count them: one per question and worker, not per
 * cell), and AgentDemand messages (one to each other worker that has a cell, per cell needing agent processes handed out).
 */
export const poolStats = { scenariosSent: 0, demandsSent: 0 };

/**
 * Which pending task a worker holding scenario `held` takes next: a cell of that scenario (no copy
 * to send); else the first cell of a scenario no other worker holds, so that the cells of a
 * question a worker has begun are left to it; else the first.
 */
export function nextTask(
  pending: readonly PoolTask[],
  held: PlannedScenario | undefined,
  heldElsewhere: ReadonlySet<PlannedScenario>,
): number {
  if (pending.length === 0) return -1;
  const same = held === undefined ? -1 : pending.findIndex((item) => item.task.scenario === held);
  if (same >= 0) return same;
  const free = pending.findIndex((item) => !heldElsewhere.has(item.task.scenario));
  return free >= 0 ? free : 0;
}

/** How many cells a fresh worker replays before its first timed cell. */
export const WARM_UP_CELLS = 8;

/**
 * The cells a fresh worker replays, untimed and discarded, before its first cell. A fresh worker is
 * cold: V8 has not optimised its code, its memos of words, normal forms and token counts are empty,
 * its heaps and SQLite's page caches are still growing, and its first cell loads what every cell
 * uses (the tokenizer's ranks, better-sqlite3, a segmenter's dictionary). On a LongMemEval_S-shaped
 * file that made a worker's first cells take up to 8× the median cell, and its first twenty cells
 * twice it. The replays are cells spread over what is left of the run (its own text and
 * strategies, not one cell again: a replay of the very cell it then times would find its own words
 * in the memos). They are run only where a replay costs nothing but CPU (no live model or
 * embedder: an agent-process cell is skipped by the worker itself) and only when the run leaves
 * each worker ten times as many cells, so that they add at most a tenth to its cells.
 */
export function warmUpTasks(
  pending: readonly PoolTask[],
  workers: number,
  settings: Pick<ProviderSettings, 'modelProvider' | 'embedderProvider'>,
): PoolTask['task'][] {
  if (isLiveProvider(settings.modelProvider) || isLiveProvider(settings.embedderProvider)) return [];
  if (pending.length < WARM_UP_CELLS * 10 * workers) return [];
  return Array.from(
    { length: WARM_UP_CELLS },
    (_, slot) => pending[Math.floor(((slot + 0.5) * pending.length) / WARM_UP_CELLS)]!.task,
  );
}

/** Thrown by a run whose AbortSignal fired: finished cells are kept, nothing else is started. */
export class RunInterrupted extends Error {
  constructor() {
    super('run interrupted');
    this.name = 'RunInterrupted';
  }
}

/** A worker that dies this many times before saying it is ready means the pool itself is broken. */
const MAX_START_FAILURES = 3;

/** One cell to run, by its index in the caller's list; its scenario may be on the run's shelf (scenario-shelf.ts). */
export interface PoolTask {
  index: number;
  task: Omit<CellTask, 'scenario'> & { scenario: PlannedScenario };
}

/** A scenario as a worker is sent it: a shelved one goes as its bytes, which the worker deserializes. */
const onWire = (scenario: PlannedScenario): WireScenario => (isShelved(scenario) ? scenario.bytes() : scenario);

/** A task with its scenario at hand, for the error cell the pool records itself. */
const loadedTask = (task: PoolTask['task']): CellTask => ({ ...task, scenario: loadScenario(task.scenario) });

/** How many workers, what they build their providers from, and where results go. */
export interface PoolOptions {
  workers: number;
  /** A cell running longer is recorded as timed out (with the phase it was in) and its worker killed. */
  cellTimeoutMs: number;
  settings: ProviderSettings;
  signal?: AbortSignal;
  /** Called once per cell as it finishes, one call at a time. */
  onResult: (index: number, result: CellResult) => Promise<void>;
}

interface Slot {
  worker: PoolWorker;
  /** Whether it was sent a cell yet (its first cell carries the warm-up). */
  used?: boolean;
  /** The scenario it was sent last (it keeps it for the next cell that runs it). */
  held?: PlannedScenario;
  busy?: PoolTask;
  /** Where the busy cell is, as its worker last said. */
  phase?: string;
  /** Fires when the busy cell is over its time limit. */
  timer?: NodeJS.Timeout;
  /** When the busy cell was sent. */
  started?: number;
}

/** Runs every task in the pool; rejects with RunInterrupted (after killing the workers) when the signal fires. */
export function runInPool(tasks: readonly PoolTask[], options: PoolOptions): Promise<void> {
  // `tasks` is read here only, never by a closure: a dispatched task (and its scenario) is let go once its cell is over.
  const pending = [...tasks];
  const count = tasks.length;
  // The cells that need agent processes, by index (one check per scenario, remembered weakly: the
  // pool lets a scenario go with its last cell), and how many of them no worker has yet.
  const checked = new WeakMap<PlannedScenario, boolean>();
  const agentTasks = new Set<number>();
  for (const { index, task } of pending) {
    let need = checked.get(task.scenario);
    if (need === undefined) checked.set(task.scenario, (need = needsProcesses(task.scenario, options.settings)));
    if (need) agentTasks.add(index);
  }
  let queuedAgentCells = agentTasks.size;
  const agentCells = queuedAgentCells > 0;
  const slots = new Set<Slot>();
  let remaining = count;
  let startFailures = 0;
  let finished = false;
  let delivered = Promise.resolve();

  return new Promise<void>((resolve, reject) => {
    const settle = async (error?: Error): Promise<void> => {
      if (finished) return;
      finished = true;
      options.signal?.removeEventListener('abort', onAbort);
      for (const slot of slots) {
        clearTimeout(slot.timer);
        // An idle worker exits on its own once disconnected (it closes its response cache first).
        if (error) void slot.worker.kill({ group: true });
        else slot.worker.disconnect();
      }
      await Promise.all([...slots].map((slot) => slot.worker.exited));
      if (error) return reject(error);
      delivered.then(() => resolve(), reject);
    };
    const onAbort = (): void => void settle(new RunInterrupted());
    if (options.signal?.aborted) return void settle(new RunInterrupted());
    options.signal?.addEventListener('abort', onAbort);

    const deliver = (index: number, result: CellResult): void => {
      delivered = delivered.then(() => options.onResult(index, result));
      delivered.catch((error: unknown) => void settle(error instanceof Error ? error : new Error(String(error))));
      if (--remaining === 0) void settle();
    };

    const dispatch = (slot: Slot): void => {
      const heldElsewhere = new Set<PlannedScenario>();
      for (const other of slots) if (other !== slot && other.held !== undefined) heldElsewhere.add(other.held);
      const at = nextTask(pending, slot.held, heldElsewhere);
      const next = at < 0 ? undefined : pending.splice(at, 1)[0];
      slot.busy = next;
      slot.phase = undefined;
      if (!next) return slot.worker.disconnect();
      const warmUp = slot.used ? [] : warmUpTasks(pending, options.workers, options.settings);
      slot.used = true;
      if (agentTasks.has(next.index)) {
        queuedAgentCells--;
        for (const other of slots)
          if (other !== slot && other.used) {
            other.worker.send({ type: 'demand', queuedAgentCells });
            poolStats.demandsSent++;
          }
      }
      const { scenario, ...task } = next.task;
      const send = scenario !== slot.held;
      if (send) poolStats.scenariosSent++;
      slot.held = scenario;
      const message: RunCellRequest = {
        type: 'run',
        index: next.index,
        task,
        ...(send ? { scenario: onWire(scenario) } : {}),
        settings: options.settings,
        ...(warmUp.length > 0 ? { warmUp: warmUp.map((item) => ({ ...item, scenario: onWire(item.scenario) })) } : {}),
        ...(agentCells ? { queuedAgentCells } : {}),
      };
      slot.worker.busy();
      slot.worker.send(message);
      slot.started = performance.now();
      arm(slot, next, loadLimitMs(options.cellTimeoutMs));
    };
    /**
     * Records the slot's cell as failed now, in the phase it was in (a timeout, an exception its
     * worker could not tie to an await); killing the worker (and its agent processes) frees the
     * slot, and its exit spawns a fresh one.
     */
    const failNow = (slot: Slot, task: PoolTask, error: (phase: string) => string): void => {
      clearTimeout(slot.timer);
      slot.busy = undefined;
      const phase = slot.phase ?? 'start';
      deliver(
        task.index,
        failedCell(loadedTask(task.task), error(phase), performance.now() - (slot.started ?? 0), phase),
      );
      void slot.worker.kill({ group: true });
    };
    /** (Re)starts the busy cell's clock: past `limitMs` the cell is recorded as timed out in the phase it was in. */
    const arm = (slot: Slot, task: PoolTask, limitMs: number): void => {
      clearTimeout(slot.timer);
      slot.timer = setTimeout(() => failNow(slot, task, (phase) => timeoutMessage(limitMs, phase)), limitMs);
    };
    const free = (slot: Slot): void => {
      clearTimeout(slot.timer);
      slot.busy = undefined;
      slot.worker.idle();
    };

    /** A worker into the pool: a fresh one, or one forked ahead of the run (which may have said it was ready already). */
    const spawn = (worker: PoolWorker = forkPoolWorker()): void => {
      const slot: Slot = { worker };
      slots.add(slot);
      worker.onMessage((message) => {
        if (finished) return;
        if (message.type === 'ready') return dispatch(slot);
        if (message.type === 'phase' && slot.busy?.index === message.index) {
          // The cell's own limit starts once its strategy is loaded and the worker warmed up (see loadLimitMs).
          if (UNTIMED_PHASES.has(slot.phase ?? '') && !UNTIMED_PHASES.has(message.phase))
            arm(slot, slot.busy, options.cellTimeoutMs);
          slot.phase = message.phase;
          return;
        }
        if (message.type === 'uncaught' && slot.busy?.index === message.index)
          return failNow(slot, slot.busy, () => message.error);
        if (message.type === 'result' && slot.busy?.index === message.index) {
          free(slot);
          deliver(message.index, message.result);
          if (!finished) dispatch(slot);
        }
      });
      worker.onExit(({ code, signal }) => {
        slots.delete(slot);
        clearTimeout(slot.timer);
        if (finished) return;
        const lost = slot.busy;
        const where = slot.phase ?? 'start';
        if (lost)
          deliver(
            lost.index,
            failedCell(
              loadedTask(lost.task),
              `the pool worker running this cell exited unexpectedly in ${where} (exit code ${code}, signal ${signal}): a strategy that calls process.exit, or a crash in native code?`,
              0,
              where,
            ),
          );
        else if (!worker.cameUp && ++startFailures >= MAX_START_FAILURES)
          return void settle(
            new Error(`pool workers keep dying before they start (last: exit code ${code}, signal ${signal})`),
          );
        if (!finished && pending.length > 0) spawn();
      });
      if (worker.cameUp) dispatch(slot);
    };

    if (count === 0) return void settle();
    const size = Math.max(1, Math.min(options.workers, count));
    const ahead = takePrestarted();
    if (ahead) spawn(ahead);
    for (let i = ahead ? 1 : 0; i < size; i++) spawn();
  });
}
