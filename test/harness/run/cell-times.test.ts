/** scripts/cell-times.mjs: the spread of a run's cells, in wall time and in CPU, read from results.json. */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SCRIPT = path.resolve(import.meta.dirname, '../../../scripts/cell-times.mjs');

describe('cell-times.mjs', () => {
  it('prints the median, the slowest and the cells above (not at) 5x the median, for each timing a cell records', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-cell-times-'));
    try {
      const cells = [10, 10, 12, 60, 61].map((durationMs, index) => ({
        id: `cell-${index}`,
        durationMs,
        ...(index < 4 ? { cpuMs: durationMs / 2 } : {}),
      }));
      await writeFile(path.join(dir, 'results.json'), JSON.stringify({ cells }));
      const lines = execFileSync(process.execPath, [SCRIPT, dir, '1'], { encoding: 'utf8' }).trim().split('\n');
      expect(lines).toEqual([
        'durationMs: 5 cells, median 12.0 ms, max 61.0 ms (5.1x), 1 above 5x the median',
        '  61.0 ms (5.1x)  cell-4',
        'cpuMs: 4 cells, median 5.5 ms, max 30.0 ms (5.5x), 1 above 5x the median',
        '  30.0 ms (5.5x)  cell-3',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
