/**
 * The built charts module draws a run's charts in a worker thread (what `membench run` and
 * `membench report` write): the same PNG bytes as drawing them in the caller's thread.
 */
import { describe, expect, it } from 'vitest';
import type * as ChartThread from '../../reports/chart-thread.js';
import type * as Charts from '../../reports/charts.js';
import { builtModule } from '../helpers/built.js';
import { smallRun } from './fixture.js';

describe('charts drawn in a worker thread', () => {
  it('starts one worker for a run and gets back the bytes renderCharts draws in this thread, in the same order', async () => {
    const thread = await builtModule<typeof ChartThread>('reports/chart-thread.js');
    expect(thread.chartWorkerEntry()).toMatch(/chart-worker\.m?js$/u);
    const result = smallRun();
    const before = thread.chartWorkerStats.started;
    const fromWorker = await thread.renderChartsInParallel(result);
    expect(thread.chartWorkerStats.started - before).toBe(1);
    const here = (await builtModule<typeof Charts>('reports/charts.js')).renderCharts(result);
    expect(fromWorker.map(([name]) => name)).toEqual(here.map(([name]) => name));
    for (const [index, [name, png]] of fromWorker.entries()) {
      expect(Buffer.isBuffer(png), name).toBe(true);
      expect(png.equals(here[index]![1]), name).toBe(true);
    }
  });

  it('rejects with the drawing error, naming it, instead of hanging or exiting', async () => {
    const thread = await builtModule<typeof ChartThread>('reports/chart-thread.js');
    // A canvas of no pixels: the PNG encoder refuses it.
    const spec = {
      id: 'empty',
      title: 'empty',
      width: 0,
      height: 0,
      config: { type: 'bar' as const, data: { labels: [], datasets: [] } },
    };
    await expect(thread.encodeChartsInWorker([spec])).rejects.toThrow(/^drawing the charts failed: .*no pixels/u);
  });
});
