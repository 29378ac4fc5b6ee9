/** scripts/cell-times.mjs: the spread of a run's cells, in wall time and in CPU, read from results.json. */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../../../scripts/cell-times.mjs');

/** The lines cell-times.mjs prints (top 1) for a results.json holding `cells`. */
async function cellTimes(cells: object[]): Promise<string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-cell-times-'));
  try {
    await writeFile(path.join(dir, 'results.json'), JSON.stringify({ cells }));
    return execFileSync(process.execPath, [SCRIPT, dir, '1'], { encoding: 'utf8' }).trim().split('\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('cell-times.mjs', () => {
  it('prints the median, the slowest and the cells above (not at) 5x the median, for each timing a cell records', async () => {
    const cells = [10, 10, 12, 60, 61].map((durationMs, index) => ({
      id: `cell-${index}`,
      durationMs,
      ...(index < 4 ? { cpuMs: durationMs / 2 } : {}),
    }));
    expect(await cellTimes(cells)).toEqual([
      'durationMs: 5 cells, median 12.0 ms, max 61.0 ms (5.1x), 1 above 5x the median',
      '  61.0 ms (5.1x)  cell-4',
      'cpuMs: 4 cells, median 5.5 ms, max 30.0 ms (5.5x), 1 above 5x the median',
      '  30.0 ms (5.5x)  cell-3',
    ]);
  });

  it("also sums each scenario's cells, so a question whose first cell did the shared work is not taken for a slow one", async () => {
    // Three questions whose first cell segments for the others (40 + 10s), one pathological (4 x 100).
    const costs = { q1: [40, 10, 10, 10], q2: [40, 10, 10, 10], q3: [40, 10, 10, 10], q4: [100, 100, 100, 100] };
    const cells = Object.entries(costs).flatMap(([scenario, times]) =>
      times.map((durationMs, index) => ({ id: `${scenario}/${index}`, scenario, durationMs })),
    );
    expect(await cellTimes(cells)).toEqual([
      'durationMs: 16 cells, median 10.0 ms, max 100.0 ms (10.0x), 4 above 5x the median',
      '  100.0 ms (10.0x)  q4/0',
      'durationMs by scenario: 4 scenarios, median 70.0 ms, max 400.0 ms (5.7x), 1 above 5x the median',
      '  400.0 ms (5.7x)  q4',
      'cpuMs: no cell records it',
    ]);
  });
});
