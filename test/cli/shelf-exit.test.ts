/**
 * A run's scenario shelf (harness/run/scenario-shelf.ts) holds a dataset's questions on disk, gigabytes
 * for a file of LongMemEval_M's size: a process that exits without closing it (a second Ctrl-C
 * exits at once) still removes it, rather than leave it to the next run to reclaim.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';

const SHELF = pathToFileURL(path.resolve(import.meta.dirname, '../../dist/harness/run/scenario-shelf.js')).href;

describe('the scenario shelf of a process that exits', () => {
  it('is removed by process.exit without a close', async () => {
    const tmp = await tempDir('membench-shelf-exit-');
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { ScenarioShelf } = await import(${JSON.stringify(SHELF)});
         new ScenarioShelf().put({ name: 'x', source: 'x.yaml', steps: [] }, 0);
         process.stdout.write(String((await import('node:fs')).readdirSync(process.env.TMPDIR).length));
         process.exit(3);`,
      ],
      { env: { ...process.env, TMPDIR: tmp }, encoding: 'utf8' },
    );
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe('1'); // the shelf's dir, while the process lives
    expect(child.status).toBe(3);
    expect(readdirSync(tmp)).toEqual([]);
  });
});
