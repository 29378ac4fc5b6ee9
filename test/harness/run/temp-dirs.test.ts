import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCalibration } from '../../../harness/core/calibration.js';
import { runBenchmark } from '../../../harness/run/runner.js';
import { reclaimAbandonedTempDirs } from '../../../harness/run/temp-dirs.js';

/** The pid of a process that has exited (so no process has it, for now). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.on('exit', resolve));
  return child.pid!;
}

describe('cell temp dirs', () => {
  it('of runs whose process is gone are reclaimed; live runs and kept dirs are left alone', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'membench-temp-root-'));
    const dead = await deadPid();
    const names = [
      `membench-run-${dead}-abc`,
      `membench-run-${process.pid}-def`,
      `membench-kept-${dead}-ghi`,
      'unrelated',
    ];
    for (const name of names) await mkdir(path.join(root, name, 'cell'), { recursive: true });
    expect(await reclaimAbandonedTempDirs(root)).toEqual([path.join(root, `membench-run-${dead}-abc`)]);
    expect(readdirSync(root).sort()).toEqual(names.slice(1).sort());
    await rm(root, { recursive: true, force: true });
  });

  it("of a run's timing calibration are named as the run's, so a killed run's calibration dir is reclaimed too", async () => {
    const before = new Set(readdirSync(os.tmpdir()));
    const calibration = await startCalibration({ periodic: false, samples: 1 });
    const made = readdirSync(os.tmpdir()).filter((name) => !before.has(name));
    expect(made).toEqual([expect.stringMatching(new RegExp(`^membench-run-${process.pid}-`, 'u'))]);
    await calibration.stop();
    expect(readdirSync(os.tmpdir()).filter((name) => !before.has(name))).toEqual([]);
  });

  it('are kept with --keep-cell-dirs, named after their cells, and the run says where', async () => {
    const warnings: string[] = [];
    await runBenchmark({
      scenarios: ['recipes-en'],
      strategies: ['buffer', 'window'],
      keepCellDirs: true,
      onWarning: (warning) => warnings.push(warning),
    });
    const kept = warnings
      .map((warning) => /^kept the cell dirs in (\S+) \(one per cell, named after the cell id\)$/u.exec(warning)?.[1])
      .find(Boolean);
    expect(kept).toMatch(/membench-kept-\d+-/u);
    expect(existsSync(kept!)).toBe(true);
    expect(
      readdirSync(kept!)
        .map((name) => name.replace(/-[^-]+$/u, ''))
        .sort(),
    ).toEqual(['recipes-en_buffer', 'recipes-en_window_k_2_']);
    await rm(kept!, { recursive: true, force: true });
  });
});
