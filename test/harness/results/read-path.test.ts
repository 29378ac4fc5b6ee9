/** Where a results file is read from: a run dir or a file, and never a pipe or a device, which would block or fill memory. */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readResults } from '../../../harness/results/read.js';

describe('readResults', () => {
  let dir = '';
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a results.json that is a FIFO or a link to a device, given as the file or as its run dir', async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-read-path-'));
    const fifo = path.join(dir, 'fifo');
    const zero = path.join(dir, 'zero');
    await mkdir(fifo);
    await mkdir(zero);
    execFileSync('mkfifo', [path.join(fifo, 'results.json')]);
    await symlink('/dev/zero', path.join(zero, 'results.json'));
    for (const target of [fifo, path.join(fifo, 'results.json'), zero, path.join(zero, 'results.json')])
      await expect(readResults(target)).rejects.toThrow(
        `${path.join(target.endsWith('results.json') ? path.dirname(target) : target, 'results.json')}: not a regular file`,
      );
  });

  it('says an empty path is empty (it said ": no such file or directory")', async () => {
    await expect(readResults(' ')).rejects.toThrow(
      'the results path is empty (an unset variable?): give a run dir or its results.json',
    );
  });
});
