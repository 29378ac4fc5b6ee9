/**
 * MEMBENCH_CELL_SCHED (harness/run/cell-sched.ts): each cell's own thread's time on a CPU and
 * waiting for one, and its collection pauses, one line per cell; scripts/cell-sched.mjs reads them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCellSchedule, type CellSchedule } from '../../../harness/run/cell-sched.js';
import { runBenchmark, runCell } from '../../../harness/run/runner.js';
import { offlineProviders } from '../../helpers/offline-providers.js';
import { plannedCells } from '../../helpers/planned.js';

const SCRIPT = path.resolve(import.meta.dirname, '../../../scripts/cell-sched.mjs');
const linux = existsSync('/proc/thread-self/schedstat');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'membench-cell-sched-'));
});
afterEach(async () => {
  delete process.env.MEMBENCH_CELL_SCHED;
  await rm(dir, { recursive: true, force: true });
});

const readLines = async (file: string): Promise<CellSchedule[]> =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as CellSchedule);

describe('MEMBENCH_CELL_SCHED', () => {
  it('is off unless a file is named', () => {
    expect(startCellSchedule('')).toBeUndefined();
    expect(startCellSchedule(undefined)).toBeUndefined();
  });

  it.skipIf(!linux)("writes the cell's thread time, its wait for a CPU and its collection pauses", async () => {
    const file = path.join(dir, 'cells.jsonl');
    const finish = startCellSchedule(file)!;
    // At least 30 ms of this process's CPU and ~80 MB of young garbage (scavenges).
    const cpu = process.cpuUsage();
    let kept = 0;
    for (let round = 0; round < 2000 || process.cpuUsage(cpu).user < 30_000; round++)
      kept += Array.from({ length: 1000 }, (_, i) => ({ i })).length;
    expect(kept).toBeGreaterThan(0);
    await finish('cell-a', 123, 45);
    const [line] = await readLines(file);
    expect(line).toMatchObject({ id: 'cell-a', wallMs: 123, cpuMs: 45 });
    // Its thread ran for most of the process's 30 ms (helper threads took some); waiting is whatever the machine made it.
    expect(line!.threadMs).toBeGreaterThan(10);
    expect(line!.waitMs).toBeGreaterThanOrEqual(0);
    expect(line!.gc.minor).toBeGreaterThan(0);
    expect(line!.gcMs).toBeCloseTo(
      Object.values(line!.gc).reduce((sum, pause) => sum + pause, 0),
      6,
    );
  });

  it.skipIf(!linux)("writes no line for a worker's warm-up replay: it is discarded", async () => {
    const file = path.join(dir, 'warm-up.jsonl');
    process.env.MEMBENCH_CELL_SCHED = file;
    const { plans } = await plannedCells({ strategies: ['buffer'], scenarios: ['recipes-en'] });
    await runCell(plans[0]!, { ...offlineProviders(), warmUp: true });
    expect(existsSync(file)).toBe(false);
    await runCell(plans[0]!, offlineProviders());
    expect((await readLines(file)).map((line) => line.id)).toEqual([plans[0]!.id]);
  });

  it.skipIf(!linux)('writes one line for each cell of a run, by id', async () => {
    const file = path.join(dir, 'run.jsonl');
    process.env.MEMBENCH_CELL_SCHED = file;
    const result = await runBenchmark({ scenarios: ['recipes-en'], strategies: ['buffer', 'window'] });
    const lines = await readLines(file);
    expect(lines.map((line) => line.id)).toEqual(result.cells.map((cell) => cell.id));
    expect(lines.map((line) => line.wallMs)).toEqual(result.cells.map((cell) => cell.durationMs));
  });
});

describe('cell-sched.mjs', () => {
  it('splits the slow cells into those slow on their own thread and those that waited for a CPU', async () => {
    const file = path.join(dir, 'cells.jsonl');
    const cell = (id: string, wallMs: number, threadMs: number, waitMs: number, gc: Record<string, number> = {}) => ({
      id,
      wallMs,
      cpuMs: threadMs,
      threadMs,
      waitMs,
      gc,
      gcMs: Object.values(gc).reduce((sum, pause) => sum + pause, 0),
    });
    const cells = [
      cell('a', 10, 6, 2),
      cell('b', 10, 6, 2),
      cell('c', 11, 6, 3),
      cell('busy', 60, 7, 50),
      cell('slow', 80, 70, 5, { minor: 30 }),
    ];
    await writeFile(file, `${cells.map((line) => JSON.stringify(line)).join('\n')}\n`);
    expect(execFileSync(process.execPath, [SCRIPT, file, '2'], { encoding: 'utf8' }).trim().split('\n')).toEqual([
      '5 cells; median wall 11.0 ms: its thread on a CPU 6.0 ms, waiting for one 3.0 ms, collecting 0.0 ms',
      'above 5x the median: 2 in wall time, 1 in thread time (1 of the former only waited longer)',
      '  wall 80.0 ms (7.3x): thread 70.0 ms (11.7x), waited 5.0 ms, collecting minor 30.0 ms  slow',
      '  wall 60.0 ms (5.5x): thread 7.0 ms (1.2x), waited 50.0 ms  busy',
    ]);
  });

  it('names the file and line of a line that is not JSON, and exits 2', async () => {
    const file = path.join(dir, 'bad.jsonl');
    await writeFile(file, '{"id":"a"}\nnot json\n');
    const run = spawnSync(process.execPath, [SCRIPT, file], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`${file}:2: not a JSON line\n`);
  });
});
