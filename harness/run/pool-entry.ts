/**
 * The pool child's entry (it exports nothing): runs the cells the pool sends, one at a time, and sends each CellResult back.
 * Cells that need agent processes fork their own from here. The worker exits when the pool
 * disconnects (or is SIGKILLed with its whole process group by an interrupted run).
 */
import { getHeapStatistics } from 'node:v8';
import { failedCell, needsProcesses, openProviders, runCell, type CellTask, type Providers } from './cell.js';
import { loadStrategyDefinition } from '../../strategies/loader.js';
import type { CellResult } from '../results/schema.js';
import { LOADING, WARMING } from './cell-timeout.js';
import { fromWire, type FromPoolEntry, type RunCellRequest, type ToPoolEntry, type WireTask } from './pool-workers.js';
import { setQueuedAgentCells } from '../process/spares.js';
import { thrownText } from '../agent/strategy-contract.js';
import { errorMessage } from '../core/errors.js';
import { stdoutToStderr } from '../core/stdout-to-stderr.js';

let opened: { providers: Providers; close: () => void } | undefined;

/**
 * Replays the warm-up cells (pool.ts warmUpTasks) and discards them; their dirs are never kept.
 * A cell that needs agent processes would warm those, not this process: skipped.
 */
async function warmUp(wired: readonly WireTask[], providers: Providers): Promise<void> {
  for (const { scenario, ...rest } of wired) {
    const task: CellTask = { ...rest, scenario: fromWire(scenario) };
    if (needsProcesses(task.scenario, providers)) continue;
    running.id = task.id;
    running.strategy = task.strategy.source;
    try {
      const definition = await loadStrategyDefinition(task.strategy.source);
      await runCell({ ...task, definition }, { ...providers, keepCellDirs: false, warmUp: true });
    } catch {
      // A warm-up cell that fails fails again in its own run, where it is recorded.
    }
  }
}

/** The scenario of the last cell: the pool sends a scenario only when it changes (pool.ts RunCellRequest). */
let heldScenario: CellTask['scenario'] | undefined;

async function run(message: RunCellRequest): Promise<CellResult> {
  heldScenario = message.scenario !== undefined ? fromWire(message.scenario) : heldScenario;
  // The pool sends a fresh worker's first cell with its scenario: a worker that holds none is a pool bug.
  if (heldScenario === undefined) throw new Error(`cell ${message.task.id} came without its scenario`);
  const cell: CellTask = { ...message.task, scenario: heldScenario };
  running.index = message.index;
  running.id = cell.id;
  running.strategy = cell.strategy.source;
  try {
    opened ??= openProviders(message.settings);
    send({ type: 'phase', index: message.index, phase: LOADING });
    const definition = await loadStrategyDefinition(cell.strategy.source);
    if (message.warmUp) {
      send({ type: 'phase', index: message.index, phase: WARMING });
      await warmUp(message.warmUp, opened.providers);
      running.id = cell.id;
      running.strategy = cell.strategy.source;
    }
    // Phases go to the pool as the cell moves on: if it hangs, the pool knows where.
    return await runCell({ ...cell, definition }, opened.providers, (phase) =>
      send({ type: 'phase', index: message.index, phase }),
    );
  } catch (error) {
    return failedCell(cell, errorMessage(error));
  }
}

function send(message: FromPoolEntry): void {
  // The pool may already be gone (an interrupted run): nothing to tell then.
  if (process.connected) process.send?.(message, undefined, {}, () => undefined);
}

/** Growth of the heap in use past which a worker collects between cells. */
const COLLECT_AFTER_BYTES = 64 * 1024 * 1024;
/** The heap in use after this worker's last full collection between cells. */
let settledHeap = 0;

/**
 * A full collection between cells, outside every cell's time, once the heap grew by half (or 64 MiB)
 * since the last: otherwise V8 starts one in the middle of whichever cell meets its limit, and its
 * marking (on helper threads too) costs that cell several times a median cell's CPU for garbage a
 * hundred cells left. Only where the pool started the worker with `--expose-gc`.
 */
function collectBetweenCells(): void {
  if (typeof globalThis.gc !== 'function') return;
  // V8's own figure: process.memoryUsage() also reads the resident set from /proc at every call.
  const used = getHeapStatistics().used_heap_size;
  if (used < settledHeap + Math.max(COLLECT_AFTER_BYTES, settledHeap / 2)) return;
  globalThis.gc();
  settledHeap = getHeapStatistics().used_heap_size;
}

/** The cell this worker runs (its index; its id and the strategy running, a warm-up cell's included), for an exception nothing awaited. */
const running: { index?: number; id?: string; strategy?: string } = {};

// The strategy's console.log goes to stderr, led by the cell's id: the pool's stdout is membench's own.
stdoutToStderr(() => running.id ?? 'pool worker');

/**
 * An exception no strategy call awaited (a timer that throws, a promise nobody catches): Node would
 * print its stack and exit, and the pool would know only that the worker died. The pool is told the
 * error instead, fails the cell with it and replaces this worker (its state is not to be trusted).
 */
function uncaught(what: string, error: unknown): void {
  const text = `${what} in strategy ${running.strategy ?? '(none loaded)'}: ${thrownText(error)}`;
  if (running.index !== undefined) return send({ type: 'uncaught', index: running.index, error: text });
  // Between cells no cell can carry it: said in one line, and the worker goes as Node would have it go.
  process.stderr.write(`membench: ${text} (after its cell had finished)\n`);
  process.exit(1);
}
process.on('uncaughtException', (error) => uncaught('uncaught exception', error));
process.on('unhandledRejection', (reason) => uncaught('unhandled promise rejection', reason));

let queue = Promise.resolve();
process.on('message', (message: ToPoolEntry) => {
  // The pool's count of cells left that need agent processes applies at once, to the cell running now too.
  if (message.queuedAgentCells !== undefined) setQueuedAgentCells(message.queuedAgentCells);
  if (message.type === 'demand') return;
  queue = queue.then(async () => {
    const result = await run(message);
    running.index = undefined;
    send({ type: 'result', index: message.index, result });
    collectBetweenCells();
  });
});
process.on('disconnect', () => {
  opened?.close();
  process.exit(0);
});
send({ type: 'ready' });
