/** The memory dirs' lock: held against other processes while they live, free the moment a holder is killed. */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ScopeLock } from '../../../strategies/stores/scope-lock.js';

/** A process that takes the lock the way ScopeLock does, says so on stdout, and keeps it until killed. */
function holdInAnotherProcess(file: string): Promise<{ kill: () => Promise<void> }> {
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  const script = `const db = new (require(${JSON.stringify(sqlite)}))(${JSON.stringify(file)}); db.exec('BEGIN IMMEDIATE'); console.log('locked'); setInterval(() => {}, 1 << 30);`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`lock holder exited early (${code})`)));
    child.stdout.once('data', () =>
      resolve({
        kill: async () => {
          child.kill('SIGKILL');
          await exited;
        },
      }),
    );
  });
}

describe('ScopeLock', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-lock-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('waits for a live holder (here: fails after its 1 ms timeout) and takes the lock of a killed one at once', async () => {
    const file = path.join(dir, '.lock.sqlite');
    const holder = await holdInAnotherProcess(file);
    const lock = new ScopeLock(file, 1);
    await expect(lock.run(async () => 'got it')).rejects.toThrow(/could not lock .*\.lock\.sqlite/u);
    await holder.kill();
    // No stale-lock age to wait out: the same 1 ms timeout is enough once the holder is dead.
    await expect(lock.run(async () => 'got it')).resolves.toBe('got it');
    lock.close();
  });

  it('queues holders in one process instead of blocking on each other', async () => {
    const file = path.join(dir, '.lock.sqlite');
    const [first, second] = [new ScopeLock(file, 1), new ScopeLock(file, 1)];
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const a = first.run(async () => {
      order.push('a start');
      await gate;
      order.push('a end');
    });
    const b = second.run(async () => {
      order.push('b');
    });
    release();
    await Promise.all([a, b]);
    expect(order).toEqual(['a start', 'a end', 'b']);
    first.close();
    second.close();
  });
});
