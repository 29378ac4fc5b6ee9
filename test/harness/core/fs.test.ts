/**
 * Atomic writes as the README promises them: temp file + fsync + rename + fsync of the directory.
 * The fsyncs are observed on the file handles themselves, so dropping one fails a test.
 */
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fsyncStats, writeFileAtomic } from '../../../harness/core/fs.js';

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
      seen.push({ inode: stats.ino, directory: stats.isDirectory(), bytes: stats.isDirectory() ? 0 : stats.size, target: readFileSync(file, 'utf8') });
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
});
