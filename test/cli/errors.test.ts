import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileSystemProblem } from '../../harness/core/errors.js';
import { ROOT } from './helpers.js';

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
