/**
 * A run's PNG charts drawn in this thread: its chart specs (chart-specs.ts) drawn by chart-draw.ts
 * (what the library exports). A run draws them in a worker thread (chart-thread.ts).
 */
import { assertRunResult } from '../harness/results/read.js';
import type { RunResult } from '../harness/results/schema.js';
import { renderChartPng } from './chart-draw.js';
import { chartSpecs } from './chart-specs.js';

export { CHART_FONT_FAMILY, CHART_FONT_FILE, encodeCharts, prepareCharts, renderChartPng } from './chart-draw.js';

/** Every chart of a run as `[file name, PNG]`, file names `<chart id>.png`. */
export function renderCharts(result: RunResult): [string, Buffer][] {
  assertRunResult(result, 'renderCharts');
  // A copy each: Chart.js writes its defaults into the config it draws, and the specs are shared (chartSpecs).
  return chartSpecs(result).map((spec) => [`${spec.id}.png`, renderChartPng(structuredClone(spec))]);
}
