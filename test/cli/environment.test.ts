/**
 * A hostile environment around the process, not its input: a working dir removed under the shell,
 * an output dir that takes no file. Each is said in one line with exit 2, never a stack trace.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { BIN, membench } from './helpers.js';

/** Runs the CLI from a working dir removed after the shell entered it (`cd d; rm -rf ../d`). */
function fromRemovedDir(dir: string, args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const script = 'cd "$1" && rm -rf "$1" && shift && exec "$@"';
    const child = spawn('sh', ['-c', script, 'sh', dir, process.execPath, BIN, ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('a working dir that no longer exists', () => {
  it.each([[['--help']], [['list', 'strategies']], [['run', '-c', 'recipes-en', '-s', 'buffer']]])(
    'membench %j says so in one line, exit 2',
    async (args) => {
      const dir = path.join(await tempDir('membench-gone-cwd-'), 'gone');
      mkdirSync(dir);
      const { code, stderr } = await fromRemovedDir(dir, args);
      expect(stderr).toBe(
        'membench: the working directory no longer exists (removed after the shell entered it?): cd to a directory that exists, then run again\n',
      );
      expect(code).toBe(2);
    },
  );
});

// sysfs takes no new file from anyone (EACCES, or EROFS where it is mounted read-only): an existing dir that refuses writes.
describe.skipIf(!existsSync('/sys/kernel'))('an output dir that exists but takes no file', () => {
  it.each([
    [['run', '-c', 'recipes-en', '-s', 'buffer', '-q', '-o', '/sys/kernel'], '--out /sys/kernel'],
    [['report', 'baselines/offline.json', '-o', '/sys/kernel'], '--out /sys/kernel'],
    [['run', '--resume', '/sys/kernel'], '--resume /sys/kernel'],
  ])('membench %j names the dir and the flag, not the lock file inside it', async (args, named) => {
    const { code, stderr } = await membench(args);
    expect(stderr).toMatch(
      new RegExp(
        `^membench: ${named}: cannot write in it \\((permission denied|read-only file system)\\): choose another ${named.split(' ')[0]}\\n$`,
        'u',
      ),
    );
    expect(code).toBe(2);
  });
});

describe.skipIf(!existsSync('/sys/kernel'))('an import or generate --out whose parent takes no new dir', () => {
  it.each([
    [['import', 'longmemeval', 'fixtures/datasets/longmemeval-sample.json', '-o', '/sys/kernel/out']],
    [['generate', 'scenarios/suites/generated.yaml', '-o', '/sys/kernel/out']],
  ])('membench %j names --out, not the staging dir beside it', async (args) => {
    const { code, stderr } = await membench(args);
    expect(stderr).toMatch(
      /^membench: --out \/sys\/kernel\/out: cannot write in \/sys\/kernel \((permission denied|read-only file system)\), where the files are written before they move in together: choose a dir whose parent you can write in\n$/u,
    );
    expect(code).toBe(2);
  });
});
