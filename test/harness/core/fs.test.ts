/**
 * Atomic writes as docs/verdict.md promises them: temp file + fsync + rename + fsync of the directory.
 * The fsyncs are observed on the file handles themselves, so dropping one fails a test.
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fsyncStats, replaceFileSync, writeFileAtomic } from '../../../harness/core/fs.js';

/** What one FileHandle.sync() call synced, and what the target file held at that moment. */
interface SyncSeen {
  inode: number;
  directory: boolean;
  bytes: number;
  target: string;
}

describe('writeFileAtomic', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-fs-'));
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(dir, { recursive: true, force: true });
  });

  it('replaces the file whole and leaves no temp file behind', async () => {
    const file = path.join(dir, 'nested', 'results.json');
    await writeFileAtomic(file, 'first');
    await writeFileAtomic(file, '第二');
    expect(await readFile(file, 'utf8')).toBe('第二');
    expect(await readdir(path.dirname(file))).toEqual(['results.json']);
  });

  it('fsyncs the new content before the rename, then the directory after it', async () => {
    const file = path.join(dir, 'memory.md');
    await writeFileAtomic(file, 'old');
    const probe = await open(path.join(dir, 'probe'), 'w');
    const prototype = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const original = prototype.sync;
    const seen: SyncSeen[] = [];
    vi.spyOn(prototype, 'sync').mockImplementation(async function (this: FileHandle) {
      const stats = await this.stat();
      seen.push({
        inode: stats.ino,
        directory: stats.isDirectory(),
        bytes: stats.isDirectory() ? 0 : stats.size,
        target: readFileSync(file, 'utf8'),
      });
      return original.call(this);
    });
    const before = fsyncStats.fsyncs;
    const content = 'new content 新';
    await writeFileAtomic(file, content);

    expect(seen).toEqual([
      // The temp file, holding the new content, synced while the target still held the old one...
      { inode: statSync(file).ino, directory: false, bytes: Buffer.byteLength(content), target: 'old' },
      // ...then, after the rename, the directory holding it.
      { inode: statSync(dir).ino, directory: true, bytes: 0, target: content },
    ]);
    expect(fsyncStats.fsyncs - before).toBe(2);
  });

  it('keeps the path a failing system call named (a directory it could not make under a file)', async () => {
    writeFileSync(path.join(dir, 'plain'), 'a file');
    const error = (await writeFileAtomic(path.join(dir, 'plain', 'sub', 'out.json'), 'x').catch(
      (caught: unknown) => caught,
    )) as NodeJS.ErrnoException;
    expect(error.code).toBe('ENOTDIR');
    // The directory it could not make, not the file: the system's own path is kept.
    expect(error.path).toBe(path.join(dir, 'plain', 'sub'));
  });
});

describe('replaceFileSync', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-fs-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('replaces the file whole, and leaves no temp file behind when the rename fails', () => {
    const file = path.join(dir, 'index.md');
    replaceFileSync(file, 'one');
    replaceFileSync(file, '二');
    expect(readFileSync(file, 'utf8')).toBe('二');
    // A non-empty directory where the file should go: the rename fails.
    const blocked = path.join(dir, 'blocked');
    mkdirSync(path.join(blocked, 'inside'), { recursive: true });
    expect(() => replaceFileSync(blocked, 'x')).toThrow(/EISDIR|ENOTEMPTY|EEXIST/u);
    expect(readdirSync(dir).sort()).toEqual(['blocked', 'index.md']);
  });
});
