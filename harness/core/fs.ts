/** Atomic, durable file writes: temp file + fsync + rename + fsync of the directory. */
import { mkdir, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/**
 * Readers see the old file or the new one, never half of one; after it resolves the new
 * content survives a crash. (write-file-atomic does not fsync the directory, so the rename
 * itself could be lost on a power cut; this does.)
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(file);
  try {
    await mkdir(dir, { recursive: true });
    const temp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(data);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await rm(temp, { force: true });
      throw error;
    }
    await handle.close();
    await rename(temp, file);
    await syncDirectory(dir);
  } catch (error) {
    // A failed write (ENOSPC) names no file; the message must: the one being written.
    if (error instanceof Error && (error as NodeJS.ErrnoException).code && !(error as NodeJS.ErrnoException).path) (error as NodeJS.ErrnoException).path = file;
    throw error;
  }
}

/** fsyncs a directory, so a rename or unlink in it survives a power cut. */
export async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
