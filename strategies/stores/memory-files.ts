/**
 * The file store behind the `file-index` strategy: one Markdown file per memory with YAML front
 * matter under `<scopeDir>/memories/`, and a `MEMORY.md` index rebuilt after every change.
 * Writers lock the scope dir (ScopeLock: released by the kernel when a holder dies), re-read the
 * file they update, stage the new index in `.MEMORY.md.pending`, write the memory atomically and
 * durably (temp + fsync + rename + dir fsync), and rename the staged index into place before
 * unlocking, so concurrent processes lose no update and the index always matches the files.
 * `MEMORY.md` is derived from the files (open() rebuilds it when it disagrees), so it gets no fsync
 * of its own: a process crash never tears it, a power cut can only leave it stale until the next
 * open. Readers keep a parsed cache and re-read only files whose stat changed, and only when the
 * index changed; a writer rescans the memory files only when another process changed them (the
 * index moved) or died mid-write (its pending index is still there).
 */
import { lstatSync, mkdirSync, renameSync, rmSync, utimesSync, writeFileSync, type Stats } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { MembenchError } from '../../harness/core/errors.js';
import { syncDirectory, writeFileAtomic } from '../../harness/core/fs.js';
import { ScopeLock } from './scope-lock.js';
import {
  INDEX_FILE,
  isExpired,
  MEMORIES_DIR,
  MEMORY_SCOPES,
  memoryNameProblem,
  normalizeMemoryName,
  parseIndex,
  parseMemoryFile,
  prepareMemory,
  readFileNoFollow,
  renderIndex,
  renderMemoryFile,
  type MemoryDraft,
  type MemoryRecord,
  type MemoryScope,
} from './memory-format.js';

const LOCK_FILE = '.lock.sqlite';
/**
 * The next MEMORY.md, written before the change it indexes and renamed into place after it: left
 * behind, it says a writer died mid-write (one file created per write, marker and index in one).
 */
const PENDING_INDEX = '.MEMORY.md.pending';
const refuse = (message: string): MembenchError => new MembenchError('INVALID_ARGUMENT', message);

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;

/**
 * Sets a just-written file's mtime strictly later than the file it replaced: readers detect changes
 * by stat, and a reused inode with the same size in the same clock tick would hide one.
 */
function bumpMtime(file: string, previousMtimeMs: number | undefined): void {
  const mtime = Math.max(Date.now(), Math.floor(previousMtimeMs ?? 0) + 1);
  utimesSync(file, new Date(mtime), new Date(mtime));
}

/** The file's lstat, or undefined when it does not exist. */
function lstatOrUndefined(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * A stat fingerprint; bigint nanosecond times plus the monotonic mtimes written below make a change
 * always visible. Metadata calls here are synchronous: each takes microseconds, less than a hop
 * through the thread pool; only file contents and fsyncs go through it.
 */
function fingerprint(file: string): string | undefined {
  try {
    const stat = lstatSync(file, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}:${stat.ctimeNs}`;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** Where the store keeps each scope and how it budgets and dates memories. */
export interface MemoryFileStoreOptions {
  /** The scope dirs, each holding `MEMORY.md` and `memories/`. */
  dirs: Record<MemoryScope, string>;
  maxMemoryBytes: number;
  now: () => Date;
  /** Delete expired memory files when an index is rebuilt (they are left out of index and loads either way). */
  pruneExpired?: boolean;
  /** How long a writer waits for another live process's lock before it fails (default 10 s); a dead holder's lock is free at once. */
  lockTimeoutMs?: number;
  /** Called between a memory file's rename and its index rebuild: the `mid_memory_write` crash point. */
  afterMemoryFile?: () => void;
}

interface CachedFile {
  fingerprint: string;
  /** Undefined when the file did not parse (listed in `problems`, left out of the index). */
  record: MemoryRecord | undefined;
}

/** Memory files on disk with a parsed cache; every write is locked, atomic and indexed before it resolves. */
export class MemoryFileStore {
  /** Counters for tests and reports: files read and written, index rebuilds, cache syncs. */
  readonly stats = { fileReads: 0, fileWrites: 0, indexWrites: 0, syncs: 0 };
  /** Files skipped because they are malformed, symlinks or badly named (path: reason). */
  readonly problems = new Map<string, string>();
  private readonly cache: Record<MemoryScope, Map<string, CachedFile>> = { global: new Map(), project: new Map() };
  private readonly seenIndex: Record<MemoryScope, string | undefined> = { global: undefined, project: undefined };
  private readonly queue: Record<MemoryScope, Promise<unknown>> = {
    global: Promise.resolve(),
    project: Promise.resolve(),
  };
  private readonly locks: Partial<Record<MemoryScope, ScopeLock>> = {};

  constructor(private readonly options: MemoryFileStoreOptions) {}

  /** The scope dirs, for audits that read the files without the cache. */
  get dirs(): Readonly<Record<MemoryScope, string>> {
    return this.options.dirs;
  }

  private dirOf(scope: MemoryScope, ...parts: string[]): string {
    return path.join(this.options.dirs[scope], ...parts);
  }

  /** Reads both scopes, and repairs an index left stale by a crash between a memory file and its index. */
  async open(): Promise<void> {
    for (const scope of MEMORY_SCOPES) {
      await this.locked(scope, async () => {
        await this.sync(scope);
        const indexFile = this.dirOf(scope, INDEX_FILE);
        const current = await this.readCounted(indexFile).catch((error: unknown) =>
          errorCode(error) === 'ENOENT' ? undefined : Promise.reject(error),
        );
        if (current !== undefined) await this.noteLostFiles(scope, current, [...parseIndex(current).keys()]);
        if (current !== this.indexText(scope)) await this.writeIndex(scope);
        else this.seenIndex[scope] = fingerprint(indexFile);
        await this.removeTempFiles(scope);
        rmSync(this.dirOf(scope, PENDING_INDEX), { force: true });
      });
    }
  }

  /** Releases the lock files' handles. */
  close(): void {
    for (const scope of MEMORY_SCOPES) this.locks[scope]?.close();
  }

  /** Re-syncs the cache of a scope whose `MEMORY.md` changed since it was last seen (one stat per scope otherwise). */
  async refresh(): Promise<void> {
    for (const scope of MEMORY_SCOPES) {
      const seen = fingerprint(this.dirOf(scope, INDEX_FILE));
      if (seen === this.seenIndex[scope]) continue;
      await this.serial(scope, async () => {
        await this.sync(scope);
        this.seenIndex[scope] = seen;
      });
    }
  }

  /** Every parsed memory, expired ones included (callers filter with isExpired). */
  all(): MemoryRecord[] {
    const out: MemoryRecord[] = [];
    for (const scope of MEMORY_SCOPES)
      for (const file of this.cache[scope].values()) if (file.record) out.push(file.record);
    return out;
  }

  get(scope: MemoryScope, name: string): MemoryRecord | undefined {
    return this.cache[scope].get(name)?.record;
  }

  /** Writes (creates or updates) a memory and its index; resolves once both are durable. */
  async write(draft: MemoryDraft): Promise<MemoryRecord> {
    prepareMemory(draft, 0, this.options.now(), this.options.maxMemoryBytes); // refuse bad input before taking the lock
    const name = normalizeMemoryName(draft.name);
    return this.locked(draft.scope, async () => {
      const file = this.dirOf(draft.scope, MEMORIES_DIR, `${name}.md`);
      const existing = lstatOrUndefined(file);
      if (existing?.isSymbolicLink()) throw refuse(`memory "${name}" refused: ${file} is a symbolic link`);
      // The current version, under the lock: another process may have written it since our cache was filled.
      const previous = existing ? await this.current(draft.scope, name, file) : undefined;
      const record = prepareMemory(
        { ...draft, name },
        previous?.version ?? 0,
        this.options.now(),
        this.options.maxMemoryBytes,
      );
      await this.catchUp(draft.scope); // other writers' files, for the index
      const cached = this.cache[draft.scope];
      const before = cached.get(name);
      cached.set(name, { fingerprint: '', record }); // listed in the index staged before the file is written
      try {
        await this.stageIndex(draft.scope);
        await writeFileAtomic(file, renderMemoryFile(record));
        bumpMtime(file, existing?.mtimeMs);
      } catch (error) {
        if (before) cached.set(name, before);
        else cached.delete(name);
        rmSync(this.dirOf(draft.scope, PENDING_INDEX), { force: true });
        throw error;
      }
      this.stats.fileWrites++;
      cached.set(name, { fingerprint: fingerprint(file) ?? '', record });
      this.options.afterMemoryFile?.();
      this.commitIndex(draft.scope);
      return record;
    });
  }

  /** Deletes a memory file and rebuilds the index; false when there was no such memory. */
  async remove(scope: MemoryScope, name: string): Promise<boolean> {
    if (memoryNameProblem(name)) return false;
    return this.locked(scope, async () => {
      const file = this.dirOf(scope, MEMORIES_DIR, `${name}.md`);
      const existing = lstatOrUndefined(file);
      if (!existing || !existing.isFile()) return false;
      await this.catchUp(scope);
      this.cache[scope].delete(name);
      this.problems.delete(file);
      await this.stageIndex(scope);
      await rm(file);
      await syncDirectory(this.dirOf(scope, MEMORIES_DIR));
      this.commitIndex(scope);
      return true;
    });
  }

  /** The `MEMORY.md` text the cache implies right now (live memories only). */
  indexText(scope: MemoryScope): string {
    const now = this.options.now();
    return renderIndex(
      scope,
      [...this.cache[scope].values()].flatMap((file) =>
        file.record && !isExpired(file.record, now) ? [file.record] : [],
      ),
    );
  }

  /** Runs cache and file work on a scope one at a time within this process. */
  private serial<T>(scope: MemoryScope, work: () => Promise<T>): Promise<T> {
    const result = this.queue[scope].then(work, work);
    this.queue[scope] = result.catch(() => undefined);
    return result;
  }

  /** Serialises work on a scope within this process, and across processes with the scope's lock file. */
  private locked<T>(scope: MemoryScope, work: () => Promise<T>): Promise<T> {
    return this.serial(scope, async () => {
      const dir = await this.ensureDirs(scope);
      const lock = (this.locks[scope] ??= new ScopeLock(path.join(dir, LOCK_FILE), this.options.lockTimeoutMs));
      return lock.run(work);
    });
  }

  /**
   * Under the lock: brings the cache up to date when another process changed the scope since we
   * last looked (it rewrote MEMORY.md) or died mid-write (its pending index is still there);
   * otherwise nothing was changed by anyone else and no file needs a look.
   */
  private async catchUp(scope: MemoryScope): Promise<void> {
    const seen = fingerprint(this.dirOf(scope, INDEX_FILE));
    const interrupted = fingerprint(this.dirOf(scope, PENDING_INDEX)) !== undefined;
    if (seen === this.seenIndex[scope] && !interrupted) return;
    await this.sync(scope);
  }

  /** Creates the scope dirs and refuses to write through a symlinked scope or memories dir. */
  private async ensureDirs(scope: MemoryScope): Promise<string> {
    const dir = this.dirOf(scope);
    mkdirSync(this.dirOf(scope, MEMORIES_DIR), { recursive: true });
    for (const folder of [dir, this.dirOf(scope, MEMORIES_DIR)]) {
      const stat = lstatSync(folder);
      if (stat.isSymbolicLink() || !stat.isDirectory())
        throw refuse(`memory directory ${folder} is a symbolic link or not a directory; refusing to use it`);
    }
    return dir;
  }

  /** Brings the cache of a scope in line with its files: one lstat per file, reads only of changed files. */
  private async sync(scope: MemoryScope): Promise<void> {
    this.stats.syncs++;
    const dir = this.dirOf(scope, MEMORIES_DIR);
    const entries = await readdir(dir, { withFileTypes: true }).catch((error: unknown) =>
      errorCode(error) === 'ENOENT' ? [] : Promise.reject(error),
    );
    const cache = this.cache[scope];
    const present = new Set<string>();
    await Promise.all(
      entries.map(async (entry) => {
        if (!entry.name.endsWith('.md') || entry.name.startsWith('.')) return;
        const name = entry.name.slice(0, -3);
        const file = path.join(dir, entry.name);
        const problem = entry.isSymbolicLink() ? 'symbolic link ignored' : memoryNameProblem(name);
        if (problem || !entry.isFile()) {
          if (problem) this.problems.set(file, problem);
          return;
        }
        const print = fingerprint(file);
        if (print === undefined) return;
        if (cache.get(name)?.fingerprint !== print) {
          const text = await this.readCounted(file).catch(() => undefined);
          if (text === undefined) return; // removed (or swapped for a link) since readdir
          cache.set(name, { fingerprint: print, record: this.parseOrUndefined(text, name, scope) });
        }
        present.add(name);
      }),
    );
    const vanished = [...cache.keys()].filter((name) => !present.has(name));
    for (const name of vanished) {
      cache.delete(name);
      this.problems.delete(path.join(dir, `${name}.md`));
    }
    if (vanished.length > 0) {
      const index = await readFile(this.dirOf(scope, INDEX_FILE), 'utf8').catch(() => undefined);
      if (index !== undefined) await this.noteLostFiles(scope, index, vanished);
    }
  }

  /**
   * Names among `names` that `MEMORY.md` (its text `index`) still lists but whose file is gone:
   * deleted behind the store's back, not by `remove` (which rewrites the index first), so the
   * memory is lost; each goes into `problems` rather than quietly out of the index. A pending
   * index left by a crash mid-write or mid-remove is what that change meant: a name it drops was
   * being removed, a name only it lists was not written yet.
   */
  private async noteLostFiles(scope: MemoryScope, index: string, names: readonly string[]): Promise<void> {
    const listed = parseIndex(index);
    const pending = await readFile(this.dirOf(scope, PENDING_INDEX), 'utf8').then(parseIndex, () => undefined);
    for (const name of names) {
      if (
        !listed.has(name) ||
        (pending && !pending.has(name)) ||
        this.cache[scope].has(name) ||
        memoryNameProblem(name)
      )
        continue;
      const file = this.dirOf(scope, MEMORIES_DIR, `${name}.md`);
      if (lstatOrUndefined(file) || this.problems.has(file)) continue;
      this.problems.set(
        file,
        `missing: ${INDEX_FILE} lists this memory but its file is gone (deleted outside membench?): the memory is lost`,
      );
    }
  }

  /**
   * A memory's record as its file holds it now: the cached parse while the file is the one it was
   * parsed from (same inode, size, mtime and ctime: a rewrite by anyone renames a new inode in, an
   * edit in place moves ctime), else the file read and parsed again. A memory updated turn after
   * turn was re-read and its YAML re-parsed at every write: ~0.1 s of each generated file-index
   * cell's CPU.
   */
  private async current(scope: MemoryScope, name: string, file: string): Promise<MemoryRecord | undefined> {
    const cached = this.cache[scope].get(name);
    if (cached?.record && cached.fingerprint !== '' && cached.fingerprint === fingerprint(file)) return cached.record;
    return this.parseOrUndefined(await this.readCounted(file), name, scope);
  }

  private parseOrUndefined(text: string, name: string, scope: MemoryScope): MemoryRecord | undefined {
    const file = this.dirOf(scope, MEMORIES_DIR, `${name}.md`);
    try {
      const record = parseMemoryFile(text, name, scope);
      this.problems.delete(file);
      return record;
    } catch (error) {
      this.problems.set(file, (error as Error).message);
      return undefined;
    }
  }

  /** Rebuilds `MEMORY.md` from the cache (pruning expired files first when asked). */
  private async writeIndex(scope: MemoryScope): Promise<void> {
    await this.stageIndex(scope);
    this.commitIndex(scope);
  }

  /**
   * Writes the index the cache implies to the pending file, before the change it indexes (no
   * fsync: MEMORY.md is derived, and open() rebuilds it). Created afresh: never through a link.
   */
  private async stageIndex(scope: MemoryScope): Promise<void> {
    if (this.options.pruneExpired) await this.pruneExpired(scope);
    const pending = this.dirOf(scope, PENDING_INDEX);
    rmSync(pending, { force: true });
    writeFileSync(pending, this.indexText(scope), { flag: 'wx' });
  }

  /** Renames the pending index into place (replacing a planted link, not writing through it), its mtime later than the one it replaces. */
  private commitIndex(scope: MemoryScope): void {
    const file = this.dirOf(scope, INDEX_FILE);
    const before = lstatOrUndefined(file);
    renameSync(this.dirOf(scope, PENDING_INDEX), file);
    bumpMtime(file, before?.mtimeMs);
    this.stats.indexWrites++;
    this.seenIndex[scope] = fingerprint(file);
  }

  private async pruneExpired(scope: MemoryScope): Promise<void> {
    const now = this.options.now();
    let removed = false;
    for (const [name, file] of this.cache[scope]) {
      if (!file.record || !isExpired(file.record, now)) continue;
      await rm(this.dirOf(scope, MEMORIES_DIR, `${name}.md`), { force: true });
      this.cache[scope].delete(name);
      removed = true;
    }
    if (removed) await syncDirectory(this.dirOf(scope, MEMORIES_DIR));
  }

  /** Temp files left by a writer killed between its temp file and the rename (safe to drop: we hold the lock). */
  private async removeTempFiles(scope: MemoryScope): Promise<void> {
    for (const dir of [this.dirOf(scope), this.dirOf(scope, MEMORIES_DIR)]) {
      for (const name of await readdir(dir))
        if (name.startsWith('.') && name.endsWith('.tmp')) await rm(path.join(dir, name), { force: true });
    }
  }

  private async readCounted(file: string): Promise<string> {
    this.stats.fileReads++;
    return readFileNoFollow(file);
  }
}
