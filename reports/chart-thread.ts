/**
 * A run's PNG charts drawn in a worker thread (chart-worker.ts) where one is built, else here. This
 * module does not load the drawing (chart.js, the canvas, the font: ~0.1 s): a run's own thread
 * never draws when the worker is built, and loads the drawing only where it is not.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { RunResult } from '../harness/results/schema.js';
import type { ChartSpec } from './chart-style.js';
import { chartSpecs } from './chart-specs.js';

/** How many chart worker threads this process started (the tests' view of where charts were drawn). */
export const chartWorkerStats = { started: 0 };

/**
 * The chart worker's entry: under dist, the bundled one (dist/cli/chart-worker.mjs, from
 * scripts/bundle-cli.mjs) when it was built, else the compiled JS; none for the TS sources (a
 * worker thread does not take tsx's loader in Node 20): the test runner draws in its own thread.
 */
export function chartWorkerEntry(): string | null {
  if (!import.meta.url.endsWith('.js')) return null;
  const bundled = fileURLToPath(new URL('../cli/chart-worker.mjs', import.meta.url));
  if (existsSync(bundled)) return bundled;
  const js = fileURLToPath(new URL('./chart-worker.js', import.meta.url));
  return existsSync(js) ? js : null;
}

/** What the chart worker answers: the PNGs, or why it could not draw them. */
export type ChartWorkerReply = { pngs: [string, Uint8Array][] } | { error: string };

/**
 * A chart worker started ahead of the charts it will draw (`membench run` starts one when its run
 * starts): the thread loads the drawing (chart.js, the canvas, the font: ~0.3 s) while the cells
 * run, so at the end of the run it only draws. A short run's end waited for that load: the main
 * thread had its reports written and sat idle. It keeps nothing alive until it is asked to draw,
 * and draws once; `close` ends one that was not asked (a run that failed or was interrupted).
 */
export class ChartDrawer {
  /** Its thread (null where no worker entry is built: it draws in the caller's). */
  readonly worker: Worker | null;
  /** Why it cannot draw: its thread failed or ended (before it was asked, or while it drew). */
  private failure: Error | undefined;
  /** The draw waiting for the thread's answer. */
  private waiting: ((error: Error) => void) | undefined;
  private done = false;

  constructor() {
    const entry = chartWorkerEntry();
    this.worker = entry === null ? null : new Worker(entry);
    if (!this.worker) return;
    chartWorkerStats.started++;
    this.worker.unref();
    // Whenever they come, before the draw or during it: the draw, now or later, fails with them.
    this.worker.once('error', (error) => this.fail(`drawing the charts failed: ${error.message}`));
    this.worker.once('exit', (code) => this.fail(`the chart worker exited (code ${code}) before answering`));
  }

  private fail(message: string): void {
    this.failure ??= new Error(message);
    this.waiting?.(this.failure);
    this.waiting = undefined;
  }

  /** encodeCharts's PNGs for `specs`, from the worker (here, where none is built); once per drawer. */
  draw(specs: readonly ChartSpec[]): Promise<[string, Buffer][]> {
    if (this.done) return Promise.reject(new Error('a chart drawer draws once'));
    this.done = true;
    const worker = this.worker;
    if (specs.length === 0) {
      this.close();
      return Promise.resolve([]);
    }
    if (worker === null) return import('./chart-draw.js').then((draw) => draw.encodeCharts(specs));
    if (this.failure) return Promise.reject(this.failure);
    worker.ref();
    return new Promise((resolve, reject) => {
      this.waiting = reject;
      worker.once('message', (reply: ChartWorkerReply) => {
        this.waiting = undefined;
        void worker.terminate();
        if ('error' in reply) return reject(new Error(`drawing the charts failed: ${reply.error}`));
        resolve(
          reply.pngs.map(([name, png]): [string, Buffer] => [
            name,
            Buffer.from(png.buffer, png.byteOffset, png.byteLength),
          ]),
        );
      });
      worker.postMessage(specs);
    });
  }

  /** Ends the worker: one never asked to draw (a run that failed), or one whose drawing nobody waits for any more. */
  close(): void {
    this.done = true;
    if (this.worker) void this.worker.terminate();
  }
}

/**
 * renderCharts's files (charts.ts), the same bytes, drawn in a worker thread (encodeCharts there):
 * drawing is chart.js laying out and painting on the JavaScript thread, ~70 ms a chart, and a run's
 * other reports and its console summary are rendered meanwhile on the main thread, with the other
 * core idle at the end of a run. In `drawer`'s worker when given (started ahead), else a new one;
 * where no worker entry is built, drawn here. What `membench run` writes.
 */
export function renderChartsInParallel(result: RunResult, drawer = new ChartDrawer()): Promise<[string, Buffer][]> {
  const drawn = drawer.draw(chartSpecs(result));
  // Started before other work that may fail first: a failure here is the awaiting caller's, never an unhandled rejection.
  drawn.catch(() => undefined);
  return drawn;
}
