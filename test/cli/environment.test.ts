/**
 * A hostile environment around the process, not its input: a working dir removed under the shell.
 * Each is said in one line with exit 2, never a stack trace.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { BIN } from './helpers.js';

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
