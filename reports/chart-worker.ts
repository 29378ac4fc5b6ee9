/**
 * The chart worker thread (ChartDrawer, chart-thread.ts): loads the drawing and registers its font
 * as it starts, then draws and encodes the chart specs it is sent, answers with the PNGs (or the
 * error) and is done.
 */
import { parentPort } from 'node:worker_threads';
import type { ChartSpec } from './chart-style.js';
import { encodeCharts, prepareCharts } from './chart-draw.js';
import type { ChartWorkerReply } from './chart-thread.js';
import { errorMessage } from '../harness/core/errors.js';

const port = parentPort!;
prepareCharts();
port.once('message', (specs: ChartSpec[]) => {
  encodeCharts(specs).then(
    (pngs) => port.postMessage({ pngs } satisfies ChartWorkerReply),
    (error: unknown) => port.postMessage({ error: errorMessage(error) } satisfies ChartWorkerReply),
  );
});
