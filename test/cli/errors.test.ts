import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { flagLayer, type SharedArgs } from '../../harness/cli/common.js';
import { fileSystemProblem } from '../../harness/core/errors.js';
import { membench, ROOT } from './helpers.js';

const errno = (code: string, file?: string): NodeJS.ErrnoException =>
  Object.assign(new Error(`${code}: boom`), { code, ...(file ? { path: file } : {}) });

describe('file-system errors', () => {
  it('become plain messages naming the path: bad paths exit 2, a full disk exits 1 with its hint', () => {
    expect(fileSystemProblem(errno('ENOSPC', '/runs/a/cells/3.json'), 'resume it')).toMatchObject({
      message: 'no space left on the device holding /runs/a/cells/3.json: resume it',
      exitCode: 1,
    });
    expect(fileSystemProblem(errno('EEXIST', '/runs/file'))).toMatchObject({
      message: '/runs/file already exists and is not a directory (a file?): choose another path',
      exitCode: 2,
    });
    expect(fileSystemProblem(errno('ENOTDIR', '/dev/null/x'))).toMatchObject({
      message: '/dev/null/x: a part of this path is a file, not a directory: choose another path',
      exitCode: 2,
    });
    expect(fileSystemProblem(errno('EACCES', '/root/x'))?.exitCode).toBe(2);
    expect(fileSystemProblem(new Error('not from the file system'))).toBeUndefined();
  });
});

describe('a command whose work never settles', () => {
  it('exits 1 with a message instead of quietly', async () => {
    const script = `import { handled } from ${JSON.stringify(path.join(ROOT, 'harness/cli/errors.ts'))}; await handled(() => new Promise(() => undefined))({});`;
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        ['--import', 'tsx', '--input-type=module', '-e', script],
        { cwd: ROOT },
        (_error, _stdout, stderr) => resolve({ code: child.exitCode, stderr }),
      );
    });
    expect(result.stderr).toContain(
      'membench: internal error (please report it): the command stopped with its work unfinished (a promise that never settled)',
    );
    expect(result.code).toBe(1);
  });
});

describe('a numeric flag with a bad value', () => {
  // run's and tune's shared flags, parsed in this process: the message names the flag and the text typed.
  it.each([
    [{ trials: 'abc' }, '--trials abc: expected a whole number from 1 to 1000'],
    [{ trials: '' }, '--trials needs a value: expected a whole number from 1 to 1000'],
    [{ workers: '1.5' }, '--workers 1.5: expected a whole number from 1 to 1024'],
    [{ seed: 'abc' }, '--seed abc: expected a whole number from 0 to 4294967295'],
    [{ limit: 'ten' }, '--limit ten: expected a whole number >= 1'],
    [{ stretch: '1e400' }, '--stretch 1e400: expected a whole number from 1 to 100000'],
    [{ 'crash-fuzz': 'x' }, '--crash-fuzz x: expected a whole number from 0 to 10000'],
    [{ 'cell-timeout': '5s' }, '--cell-timeout 5s: expected a number from 1 to 604800'],
    [{ concurrency: 'many' }, '--concurrency many: expected a whole number from 1 to 1024'],
    [{ timeout: '1m' }, '--timeout 1m: expected a number from 1 to 3600000'],
    [{ retries: 'three' }, '--retries three: expected a whole number from 0 to 100'],
    [{ 'retrieval-k': '5,x' }, '--retrieval-k 5,x: expected whole numbers >= 1'],
  ])('run %j', (flags, message) => {
    expect(() => flagLayer(flags as unknown as SharedArgs)).toThrow(message);
  });

  // One flag per command through the built CLI: the same wording on stderr, exit 2, no stack trace.
  it.each([
    [['run', '--trials', 'abc'], '--trials abc: expected a whole number from 1 to 1000'],
    [['run', '--recall-threshold', 'high'], '--recall-threshold high: expected a share between 0 and 1'],
    [['tune', '-s', 'window', '-p', 'k', '--values', '1,2', '--target-recall', 'abc'], '--target-recall abc:'],
    [['judge', 'results.json', '--retries', 'abc'], '--retries abc: expected a whole number from 0 to 100'],
    [['report', 'results.json', '--recall-threshold', '2'], '--recall-threshold 2: expected a share between 0 and 1'],
    [['merge', 'a', 'b', '--recall-threshold', 'abc'], '--recall-threshold abc:'],
    [['compare', 'a', 'b', '--max-recall-drop', 'abc'], '--max-recall-drop abc: expected a number >= 0'],
    [['import', 'locomo', 'file.json', '--limit', 'abc'], '--limit abc: expected a whole number >= 1'],
    [['bench', '--questions', 'abc'], '--questions abc: expected a whole number >= 1'],
    [['serve', '--port', 'http'], '--port http: expected a whole number from 0 to 65535'],
    [['validate', 'a.yaml', '--max-bytes', '1MB'], '--max-bytes 1MB: expected a whole number >= 1'],
  ])('membench %j', async (args, message) => {
    const result = await membench(args);
    expect(result.stderr).toContain(`membench: ${message}`);
    expect(result.stderr).not.toMatch(/NaN|\n\s+at /u);
    expect(result.code).toBe(2);
  });
});
