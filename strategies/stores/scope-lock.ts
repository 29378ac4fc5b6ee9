/**
 * A lock on a memory dir shared by processes that the kernel drops the moment its holder dies: an
 * IMMEDIATE transaction on an empty SQLite file (a POSIX advisory lock SQLite takes and the OS
 * releases with the process). A writer killed with SIGKILL mid-write leaves nothing to wait for —
 * no stale lock dir to age out, no polling for it on the recovery path. Only a live holder makes
 * others wait (SQLite's busy handler, up to `timeoutMs`); within one process, holders queue on a
 * promise chain per lock file, so two stores on one dir never block each other's event loop.
 */
import Database from 'better-sqlite3';

/** Work queued on each lock file in this process, so one connection at a time asks for the OS lock. */
const queues = new Map<string, Promise<unknown>>();

/** The inter-process lock of one dir, held while `run`'s work runs. */
export class ScopeLock {
  private db: Database.Database | undefined;

  constructor(
    /** The lock file (created empty; it never holds data). */
    readonly file: string,
    private readonly timeoutMs = 10_000,
  ) {}

  /** Runs `work` holding the lock: after the earlier holders in this process, and while no other process holds it. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const result = (queues.get(this.file) ?? Promise.resolve()).then(() => this.holding(work));
    const tail = result.catch(() => undefined);
    queues.set(this.file, tail);
    void tail.then(() => {
      if (queues.get(this.file) === tail) queues.delete(this.file);
    });
    return result;
  }

  /** Releases the file handle (the lock is never held between runs). */
  close(): void {
    this.db?.close();
    this.db = undefined;
  }

  private async holding<T>(work: () => Promise<T>): Promise<T> {
    this.db ??= new Database(this.file, { timeout: this.timeoutMs });
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (error) {
      throw new Error(`could not lock ${this.file}: ${(error as Error).message}`);
    }
    try {
      return await work();
    } finally {
      this.db.exec('ROLLBACK');
    }
  }
}
