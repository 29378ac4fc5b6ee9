/**
 * A pool worker: runs the cells the pool sends, one at a time, and sends each CellResult back.
 * Cells that need agent processes fork their own from here. The worker exits when the pool
 * disconnects (or is SIGKILLed with its whole process group by an interrupted run).
 */
import { failedCell, openProviders, runCell, type CellTask, type ProviderSettings, type Providers } from './cell.js';
import { loadStrategyDefinition } from '../../strategies/loader.js';
import type { CellResult } from '../results/schema.js';

/** The pool → worker message: one cell and the providers' settings (the same for every cell of a run). */
export interface RunCellMessage {
  type: 'run';
  index: number;
  task: CellTask;
  settings: ProviderSettings;
}

/** Worker → pool: `ready` once it listens, then one `result` per cell. */
export type FromCellWorker = { type: 'ready' } | { type: 'result'; index: number; result: CellResult };

let opened: { providers: Providers; close: () => void } | undefined;

async function run(message: RunCellMessage): Promise<CellResult> {
  try {
    opened ??= openProviders(message.settings);
    const definition = await loadStrategyDefinition(message.task.spec.source);
    return await runCell({ ...message.task, definition }, opened.providers);
  } catch (error) {
    return failedCell(message.task, error instanceof Error ? error.message : String(error));
  }
}

function send(message: FromCellWorker): void {
  // The pool may already be gone (an interrupted run): nothing to tell then.
  if (process.connected) process.send?.(message, undefined, {}, () => undefined);
}

let queue = Promise.resolve();
process.on('message', (message: RunCellMessage) => {
  queue = queue.then(async () => send({ type: 'result', index: message.index, result: await run(message) }));
});
process.on('disconnect', () => {
  opened?.close();
  process.exit(0);
});
send({ type: 'ready' });
