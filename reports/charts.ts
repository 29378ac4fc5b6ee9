/**
 * PNG charts, rendered server-side: chart.js on @napi-rs/canvas (Skia, no system libraries).
 * A bundled CJK font is registered so Chinese scenario and strategy names render everywhere.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createCanvas, GlobalFonts, type Canvas } from '@napi-rs/canvas';
import { BasicPlatform, Chart, registerables, type ChartConfiguration, type Plugin } from 'chart.js';
import { PACKAGE_ROOT } from '../harness/core/package-info.js';
import type { RunResult } from '../harness/results/schema.js';
import { logTickLabel, type ChartSpec } from './chart-style.js';
import { chartSpecs } from './chart-specs.js';
import { drawPointLabels } from './point-labels.js';

/** The bundled font (a GB2312 subset of Noto Sans SC, OFL): Latin and common Chinese in one family. */
export const CHART_FONT_FILE = path.join(PACKAGE_ROOT, 'fonts', 'MembenchCJKSans-Regular.otf');
export const CHART_FONT_FAMILY = 'Membench CJK Sans';

let prepared: { fontFamily: string } | undefined;

/** Registers chart.js components and the font once per process; falls back to system fonts if the file is missing. */
export function prepareCharts(): { fontFamily: string } {
  if (prepared) return prepared;
  Chart.register(...registerables);
  const registered =
    existsSync(CHART_FONT_FILE) && GlobalFonts.registerFromPath(CHART_FONT_FILE, CHART_FONT_FAMILY) !== null;
  const fontFamily = registered ? `"${CHART_FONT_FAMILY}", sans-serif` : 'sans-serif';
  Chart.defaults.font.family = fontFamily;
  Chart.defaults.color = '#333333';
  prepared = { fontFamily };
  return prepared;
}

/** PNGs are opaque: a white background behind everything chart.js draws. */
const whiteBackground: Plugin = {
  id: 'membench-white-background',
  beforeDraw(chart) {
    const { ctx, width, height } = chart;
    ctx.save();
    ctx.globalCompositeOperation = 'destination-over';
    ctx.fillStyle = '#ffffff';
    ctx.fillRect(0, 0, width, height);
    ctx.restore();
  },
};

/** The names beside a scatter chart's points (datasets carrying `pointLabel`). */
const pointLabels: Plugin = { id: 'membench-point-labels', afterDatasetsDraw: drawPointLabels };

/**
 * One chart drawn on a canvas at its spec's size; `encode` turns the canvas into PNG bytes (or
 * starts to: `canvas.encode` takes the pixels when called, so the chart is released at once).
 */
function drawnChart<T>(spec: ChartSpec, encode: (canvas: Canvas) => T): T {
  prepareCharts();
  const canvas = createCanvas(spec.width, spec.height);
  const config = structuredClone(spec.config) as ChartConfiguration;
  for (const scale of Object.values(
    (config.options?.scales ?? {}) as Record<
      string,
      { type?: string; ticks?: { callback?: (value: number | string) => string } }
    >,
  )) {
    if (scale.type === 'logarithmic')
      scale.ticks = { ...scale.ticks, callback: (value) => logTickLabel(Number(value)) };
  }
  const chart = new Chart(canvas.getContext('2d') as unknown as ConstructorParameters<typeof Chart>[0], {
    ...config,
    platform: BasicPlatform,
    options: { ...config.options, responsive: false, animation: false, devicePixelRatio: 1 },
    plugins: [...(config.plugins ?? []), pointLabels, whiteBackground],
  });
  try {
    return encode(canvas);
  } finally {
    chart.destroy();
  }
}

/** One chart as PNG bytes at its spec's size. */
export function renderChartPng(spec: ChartSpec): Buffer {
  return drawnChart(spec, (canvas) => canvas.toBuffer('image/png'));
}

/** Every chart of a run as `[file name, PNG]`, file names `<chart id>.png`. */
export function renderCharts(result: RunResult): [string, Buffer][] {
  return chartSpecs(result).map((spec) => [`${spec.id}.png`, renderChartPng(spec)]);
}

/** The specs' charts as `[file name, PNG]`, each PNG encoded on libuv's thread pool while the next chart is drawn. */
export function encodeCharts(specs: readonly ChartSpec[]): Promise<[string, Buffer][]> {
  return Promise.all(
    specs.map((spec) =>
      drawnChart(spec, (canvas) =>
        canvas.encode('png').then((png: Buffer): [string, Buffer] => [`${spec.id}.png`, png]),
      ),
    ),
  );
}

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
 * renderCharts's files, the same bytes, drawn in a worker thread (encodeCharts there): drawing is
 * chart.js laying out and painting on the JavaScript thread, ~70 ms a chart, and a run's other
 * reports and its console summary are rendered meanwhile on the main thread, with the other core
 * idle at the end of a run. Where no worker entry is built, drawn here. What `membench run` writes.
 */
export function renderChartsInParallel(result: RunResult): Promise<[string, Buffer][]> {
  return encodeChartsInWorker(chartSpecs(result));
}

/** encodeCharts in a worker thread when there is a worker entry (chartWorkerEntry), else here. */
export function encodeChartsInWorker(specs: readonly ChartSpec[]): Promise<[string, Buffer][]> {
  const entry = chartWorkerEntry();
  if (entry === null || specs.length === 0) return encodeCharts(specs);
  chartWorkerStats.started++;
  return new Promise((resolve, reject) => {
    const worker = new Worker(entry);
    let settled = false;
    const settle = (done: () => void): void => {
      if (settled) return;
      settled = true;
      done();
      void worker.terminate();
    };
    worker.once('message', (reply: ChartWorkerReply) =>
      settle(() =>
        'error' in reply
          ? reject(new Error(`drawing the charts failed: ${reply.error}`))
          : resolve(
              reply.pngs.map(([name, png]): [string, Buffer] => [
                name,
                Buffer.from(png.buffer, png.byteOffset, png.byteLength),
              ]),
            ),
      ),
    );
    worker.once('error', (error) => settle(() => reject(new Error(`drawing the charts failed: ${error.message}`))));
    worker.once('exit', (code) =>
      settle(() => reject(new Error(`the chart worker exited (code ${code}) before answering`))),
    );
    worker.postMessage(specs);
  });
}
