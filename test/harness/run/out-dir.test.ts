/** The output dir: made level by level (a path under /proc once made Node's recursive mkdir spin for ever); the root and the home dir refused. */
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeDirs } from '../../../harness/core/fs.js';
import { MembenchError } from '../../../harness/core/errors.js';
import { ensureOutDir } from '../../../harness/run/out-lock.js';
import { tempDirSync } from '../../helpers/temp-dir.js';
import { thrown } from '../../helpers/thrown.js';

describe('makeDirs', () => {
  it('makes every missing level and returns the first it made, as mkdir -p', () => {
    const root = tempDirSync('membench-make-dirs-');
    expect(makeDirs(path.join(root, 'a', 'b', 'c'))).toBe(path.join(root, 'a'));
    expect(statSync(path.join(root, 'a', 'b', 'c')).isDirectory()).toBe(true);
    expect(makeDirs(path.join(root, 'a', 'b'))).toBeUndefined();
  });

  it('names the level a file blocks', () => {
    const root = tempDirSync('membench-make-dirs-');
    writeFileSync(path.join(root, 'file'), '');
    expect((thrown(() => makeDirs(path.join(root, 'file', 'x'))) as NodeJS.ErrnoException).code).toBe('ENOTDIR');
  });
});

describe('ensureOutDir', () => {
  it.runIf(existsSync('/proc/self'))(
    'refuses a dir the kernel will not make under /proc, at once, with exit code 2',
    () => {
      const error = thrown(() => ensureOutDir('/proc/membench-out/run'));
      expect(error).toBeInstanceOf(MembenchError);
      expect((error as MembenchError).exitCode).toBe(2);
      expect((error as Error).message).toBe(
        '--out /proc/membench-out/run: cannot create it (no such file or directory): choose another --out',
      );
    },
  );

  it('refuses the root of the file system and the home dir, naming them', () => {
    for (const dir of [path.parse(process.cwd()).root, os.homedir(), `${os.homedir()}${path.sep}`]) {
      const error = thrown(() => ensureOutDir(dir));
      expect(error, dir).toBeInstanceOf(MembenchError);
      expect((error as Error).message).toMatch(
        /^--out .*: the (root of the file system|home dir), not a dir of its own: choose another --out$/u,
      );
    }
  });

  it('makes a fresh dir and takes one that exists', () => {
    const root = tempDirSync('membench-out-dir-');
    expect(ensureOutDir(path.join(root, 'runs', 'one'))).toBe(path.join(root, 'runs'));
    mkdirSync(path.join(root, 'two'));
    expect(ensureOutDir(path.join(root, 'two'))).toBeUndefined();
  });
});
