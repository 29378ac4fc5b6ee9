/**
 * Counts durable writes without a clock, so tests and `membench bench` can say how many commits a
 * turn costs: commit frames SQLite appended to the WAL files under a dir (in WAL mode every commit
 * ends with one commit frame, and with synchronous=FULL each one is an fsync), plus the fsyncs of
 * writeFileAtomic and syncDirectory in this process.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { fsyncStats } from './fs.js';

const WAL_HEADER_BYTES = 32;
const FRAME_HEADER_BYTES = 24;

/** Where a WAL file's scan got to: its salts (they change when SQLite restarts the log) and the frames read. */
interface WalPosition {
  salt: string;
  frames: number;
}

/** Every `*-wal` file under `dir` (recursively). */
function walFiles(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return [];
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('-wal'))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * Reads the frame headers of a WAL file from frame `from` on and counts the commit frames (those
 * whose "database size after commit" field is set) among the valid ones (salts equal to the
 * header's). Returns undefined for a file without a header yet.
 */
function scanWal(file: string, from: WalPosition | undefined): { position: WalPosition; commits: number } | undefined {
  const fd = openSync(file, 'r');
  try {
    const header = Buffer.alloc(WAL_HEADER_BYTES);
    if (readSync(fd, header, 0, WAL_HEADER_BYTES, 0) < WAL_HEADER_BYTES) return undefined;
    const pageSize = header.readUInt32BE(8);
    const salt = header.subarray(16, 24).toString('hex');
    // A restarted log (after a checkpoint) begins again at frame 0.
    let frames = from?.salt === salt ? from.frames : 0;
    let commits = 0;
    const size = statSync(file).size;
    const frame = Buffer.alloc(FRAME_HEADER_BYTES);
    for (;;) {
      const offset = WAL_HEADER_BYTES + frames * (FRAME_HEADER_BYTES + pageSize);
      if (offset + FRAME_HEADER_BYTES + pageSize > size) break;
      readSync(fd, frame, 0, FRAME_HEADER_BYTES, offset);
      if (frame.subarray(8, 16).toString('hex') !== salt) break; // a frame of an earlier log: the valid part ends here
      if (frame.readUInt32BE(4) !== 0) commits++;
      frames++;
    }
    return { position: { salt, frames }, commits };
  } finally {
    closeSync(fd);
  }
}

/**
 * Durable writes under one dir since the last `take()`. A WAL restart between two calls drops the
 * commits made before it in that interval (SQLite restarts a log only after a checkpoint of at least
 * 1000 pages by default), so a count can only be low, never high.
 */
export class DurableWriteCounter {
  private readonly positions = new Map<string, WalPosition>();
  private fsyncs = fsyncStats.fsyncs;

  constructor(private readonly dir: string) {
    this.take();
  }

  /** SQLite commits and file fsyncs since the previous call (or since the counter was made). */
  take(): { commits: number; fileSyncs: number } {
    let commits = 0;
    for (const file of walFiles(this.dir)) {
      const scanned = scanWal(file, this.positions.get(file));
      if (!scanned) continue;
      commits += scanned.commits;
      this.positions.set(file, scanned.position);
    }
    const fileSyncs = fsyncStats.fsyncs - this.fsyncs;
    this.fsyncs = fsyncStats.fsyncs;
    return { commits, fileSyncs };
  }
}
