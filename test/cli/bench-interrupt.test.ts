/**
 * `membench bench` stopped by SIGINT or SIGTERM (Ctrl-C, a cancelled CI job) while its suite's
 * `membench run` is going: that run ends too (it went on as an orphan), the bench's temp dirs go
 * (membench-suite-* stayed in TMPDIR), and the bench says so and exits 130.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { processAlive } from '../../harness/core/processes.js';
import { tempDir } from '../helpers/temp-dir.js';
import { startMembench, until } from './helpers.js';

/** The lock of the suite's run in `temp` once its cells have started (its plan written), or undefined. */
function suiteRunLock(temp: string): string | undefined {
  const suite = readdirSync(temp).find((name) => name.startsWith('membench-suite-'));
  if (suite === undefined) return undefined;
  const dir = path.join(temp, suite);
  return existsSync(path.join(dir, 'plan.json')) && existsSync(path.join(dir, '.membench.lock'))
    ? path.join(dir, '.membench.lock')
    : undefined;
}

describe('bench stopped by a signal', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s ends the suite run it started and removes its temp dirs, exit 130',
    { timeout: 120_000 },
    async (signal) => {
      const temp = await tempDir('membench-bench-stop-');
      const bench = startMembench(['bench', '--only', 'suite', '--quick', '--workers', '1'], {
        env: { TMPDIR: temp },
      });
      await until(() => suiteRunLock(temp) !== undefined, bench);
      expect(bench.hasExited()).toBe(false);
      const run = JSON.parse(readFileSync(suiteRunLock(temp)!, 'utf8')) as { pid: number };
      expect(processAlive(run.pid)).toBe(true);

      bench.child.kill(signal);
      const { code } = await bench.exited;
      expect(code).toBe(130);
      expect(bench.stderr()).toContain('interrupted: stopping the bench (nothing written)\n');
      expect(bench.stderr()).not.toMatch(/internal error|\n\s+at /u);
      expect(processAlive(run.pid)).toBe(false);
      expect(readdirSync(temp)).toEqual([]);
    },
  );
});
