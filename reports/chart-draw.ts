/**
 * Drawing charts: chart.js on @napi-rs/canvas (Skia, no system libraries), a spec at a time. A
 * bundled CJK font is registered so Chinese scenario and strategy names render everywhere. What the
 * chart worker thread loads (chart-worker.ts): no results code, only the specs it is sent.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createCanvas, GlobalFonts, type Canvas } from '@napi-rs/canvas';
import { BasicPlatform, Chart, registerables, type ChartConfiguration, type Plugin } from 'chart.js';
import { PACKAGE_ROOT } from '../harness/core/package-info.js';
import { logTickLabel, type ChartSpec } from './chart-style.js';
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
