/** Atomic file writes: durable (temp file + fsync + rename + fsync of the directory), or atomic only (temp + rename) for derived files. */
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { deferFsync, inDurableBatch, onDurableBatch, type BatchHooks } from './durable-batch.js';

/**
 * `mkdir -p`, one level at a time: the first dir it created, if any (what mkdir's `recursive`
 * returns). Node's recursive mkdir retries for ever where the kernel answers ENOENT under a parent
 * that exists (a path under /proc); here that answer is the error, and a level's error is its own
 * (EACCES, EROFS), never an ENOENT for the whole path.
 */
export function makeDirs(dir: string): string | undefined {
  const missing: string[] = [];
  for (let at = path.resolve(dir); !existsSync(at); at = path.dirname(at)) {
    missing.unshift(at);
    if (path.dirname(at) === at) break;
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      // Made meanwhile by another process: as good as made here.
      const made =
        (error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(level, { throwIfNoEntry: false })?.isDirectory();
      if (!made) throw error;
    }
  }
  return missing[0];
}

/** fsyncs this process issued through writeFileAtomic and syncDirectory: counted, so tests and the bench can check them without a clock. */
export const fsyncStats = { fsyncs: 0 };

/**
 * Readers see the old file or the new one, never half of one; after it resolves the new
 * content survives a crash. (write-file-atomic does not fsync the directory, so the rename
 * itself could be lost on a power cut; this does.)
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array | Iterable<string>): Promise<void> {
  const dir = path.dirname(file);
  try {
    await mkdir(dir, { recursive: true });
    const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const handle = await open(temp, 'wx');
    try {
      if (typeof data === 'string' || data instanceof Uint8Array) await handle.writeFile(data);
      // In pieces (a 300 MB results.json): never the whole text in memory at once.
      else for (const chunk of data) await handle.write(chunk);
      if (!inDurableBatch()) {
        await handle.sync();
        fsyncStats.fsyncs++;
      }
    } catch (error) {
      await handle.close();
      await rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    await rename(temp, file);
    if (inDurableBatch()) deferFsync(file); // its content and its rename, fsynced when the batch ends
    await syncDirectory(dir);
  } catch (error) {
    // A failed write (ENOSPC) names no file; the message must: the one being written.
    if (error instanceof Error && (error as NodeJS.ErrnoException).code && !(error as NodeJS.ErrnoException).path)
      (error as NodeJS.ErrnoException).path = file;
    throw error;
  }
}

/**
 * Temp file + rename, no fsync: readers and a process crash see the old file or the new one, never
 * half of one, but a power cut may lose the change. For files derived from durable ones and
 * rebuilt from them on open (an index, a cursor), where an fsync would buy nothing.
 */
export function replaceFileSync(file: string, data: string | Uint8Array): void {
  // Synchronous: no fsync to wait for, and a small file's write costs less than a thread-pool hop.
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    writeFileSync(temp, data, { flag: 'wx' });
    renameSync(temp, file);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** Derived files replaceDerivedFile holds inside a durable batch: the last content of each, written when the batch ends. */
const heldReplacements = new Map<string, string | Uint8Array>();
const HELD_REPLACEMENT_HOOKS: BatchHooks = {
  start: () => undefined,
  end: () => {
    for (const [file, data] of heldReplacements) replaceFileSync(file, data);
    heldReplacements.clear();
    return []; // derived files are not fsynced
  },
};

/**
 * replaceFileSync for a derived file rewritten at every step (a cursor): inside a durable batch
 * (harness/core/durable-batch.ts) only its last content is written, once, when the batch ends.
 * Whoever reads it back inside the batch calls writeHeldReplacement first.
 */
export function replaceDerivedFile(file: string, data: string | Uint8Array): void {
  if (inDurableBatch()) {
    onDurableBatch(HELD_REPLACEMENT_HOOKS);
    heldReplacements.set(file, data);
  } else replaceFileSync(file, data);
}

/** Writes now what replaceDerivedFile holds for `file` (before the file is read back or its owner closes). */
export function writeHeldReplacement(file: string): void {
  const data = heldReplacements.get(file);
  if (data === undefined) return;
  heldReplacements.delete(file);
  replaceFileSync(file, data);
}

/** fsyncs a directory, so a rename or unlink in it survives a power cut. */
export async function syncDirectory(dir: string): Promise<void> {
  if (inDurableBatch()) return deferFsync(dir);
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
    fsyncStats.fsyncs++;
  } finally {
    await handle.close();
  }
}
