/**
 * The run's timing calibration (harness/core/calibration.ts) commits to a SQLite file under TMPDIR:
 * the first write a run makes there. On a real tmpfs that is full, or fills up while the run goes
 * on (skipped where mounting one is not allowed: it needs root and a permitting container).
 */
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startCalibration } from '../../../harness/core/calibration.js';
import { tinyTmpfs } from '../../helpers/tmpfs.js';

const tmpfs = tinyTmpfs('1m', 'membench-calibration-tmpfs-');

const savedTmpdir = process.env.TMPDIR;
afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
  vi.useRealTimers();
  if (tmpfs.at) rmSync(path.join(tmpfs.at, 'ballast'), { force: true });
});

/** Fills the tmpfs to its last byte with one file. */
function fill(at: string): void {
  try {
    writeFileSync(path.join(at, 'ballast'), Buffer.alloc(2 * 1024 * 1024, 1));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
}

describe('the calibration on a temp dir without room', () => {
  it('full from the start: says the file, TMPDIR and what to do (not an internal error), and leaves no dir', async (context) => {
    if (!tmpfs.at) return context.skip(tmpfs.why);
    fill(tmpfs.at);
    process.env.TMPDIR = tmpfs.at;
    const failed = await startCalibration({ periodic: false, samples: 2 }).then(
      () => undefined,
      (error: unknown) => error as Error & { code?: string },
    );
    expect(failed?.code).toBe('FILE_SYSTEM');
    expect(failed?.message).toMatch(
      new RegExp(
        `^no space left for ${tmpfs.at}/membench-run-${process.pid}-calibration-[^/]+/calibration\\.sqlite \\(database or disk is full\\): it is under TMPDIR \\(${tmpfs.at}\\)`,
        'u',
      ),
    );
    expect(readdirSync(tmpfs.at)).toEqual(['ballast']);
  });

  it('filling up under the run: its rounds stop (a timer that throws would end membench), stop() gives the samples taken', async (context) => {
    if (!tmpfs.at) return context.skip(tmpfs.why);
    process.env.TMPDIR = tmpfs.at;
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const calibration = await startCalibration({ periodic: true, samples: 3 });
    vi.advanceTimersByTime(2000);
    fill(tmpfs.at);
    // The rounds now fail to commit: each would throw out of its timer.
    expect(() => vi.advanceTimersByTime(5000)).not.toThrow();
    expect(vi.getTimerCount()).toBe(0);
    const taken = await calibration.stop();
    expect(taken.samples).toBe(3 + 2);
    expect(taken.commitMs).toBeGreaterThan(0);
    expect(readdirSync(tmpfs.at)).toEqual(['ballast']);
  });
});
