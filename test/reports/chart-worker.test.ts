/**
 * The built charts module draws a run's charts in a worker thread (what `membench run` and
 * `membench report` write): the same PNG bytes as drawing them in the caller's thread.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type * as ChartThread from '../../reports/chart-thread.js';
import type * as Charts from '../../reports/charts.js';
import { builtModule } from '../helpers/built.js';
import { ROOT } from '../cli/helpers.js';
import { smallRun } from './fixture.js';

/** A canvas of no pixels: the PNG encoder refuses it. */
const NO_PIXELS = {
  id: 'empty',
  title: 'empty',
  width: 0,
  height: 0,
  config: { type: 'bar' as const, data: { labels: [], datasets: [] } },
};

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
    await expect(new thread.ChartDrawer().draw([NO_PIXELS])).rejects.toThrow(
      /^drawing the charts failed: .*no pixels/u,
    );
  });

  it('a drawer started ahead draws once, in its own worker, the same bytes; asked again, or after close, it refuses', async () => {
    const thread = await builtModule<typeof ChartThread>('reports/chart-thread.js');
    const result = smallRun();
    const before = thread.chartWorkerStats.started;
    const drawer = new thread.ChartDrawer();
    const closed = new thread.ChartDrawer();
    expect(thread.chartWorkerStats.started - before).toBe(2); // started when made, not when asked
    closed.close();
    const drawn = await thread.renderChartsInParallel(result, drawer);
    expect(thread.chartWorkerStats.started - before).toBe(2);
    const here = (await builtModule<typeof Charts>('reports/charts.js')).renderCharts(result);
    expect(drawn.map(([name, png]) => [name, png.toString('base64')])).toEqual(
      here.map(([name, png]) => [name, png.toString('base64')]),
    );
    await expect(drawer.draw([])).rejects.toThrow('a chart drawer draws once');
    await expect(closed.draw([])).rejects.toThrow('a chart drawer draws once');
    drawer.close(); // after it drew: harmless
    expect(await new thread.ChartDrawer().draw([])).toEqual([]); // a run with no chart: nothing drawn, its worker ended
  });

  it('a drawer whose thread ended before it was asked says so when asked, instead of waiting for ever', async () => {
    const thread = await builtModule<typeof ChartThread>('reports/chart-thread.js');
    const drawer = new thread.ChartDrawer();
    await drawer.worker!.terminate();
    await expect(drawer.draw([NO_PIXELS])).rejects.toThrow(/^the chart worker exited \(code \d+\) before answering$/u);
  });

  it('a drawer never asked to draw keeps no process alive: a program that made one exits, its worker up', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-drawer-'));
    try {
      const program = path.join(dir, 'makes-a-drawer.mjs');
      const module = pathToFileURL(path.join(ROOT, 'dist/reports/chart-thread.js')).href;
      // Held alive (an interval) until its worker is up; then only the idle worker could hold it.
      await writeFile(
        program,
        `const { ChartDrawer, chartWorkerStats } = await import(${JSON.stringify(module)});
const hold = setInterval(() => undefined, 1000);
const drawer = new ChartDrawer();
drawer.worker.once('online', () => { console.log('online', chartWorkerStats.started); clearInterval(hold); });
drawer.worker.once('error', (error) => { console.log('error', error.message); clearInterval(hold); });`,
      );
      // Bounded: a program an idle worker keeps alive fails the test and is killed, not left behind.
      const { stdout } = await promisify(execFile)(process.execPath, [program], { timeout: 30_000 });
      expect(stdout.trim()).toBe('online 1');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
