/**
 * One run per output dir: an exclusive lock file (`DIR/.membench.lock`, holding the holder's pid,
 * host and command) taken for the whole run, so a second `membench run -o DIR` is refused
 * (exit 2, naming the holder) instead of replacing the first run's results. The lock of a dead
 * process (a SIGKILLed run) is taken over. The file is created whole (temp file + hard link), so
 * nobody ever reads a half-written lock.
 */
import { linkSync, lstatSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileSystemProblem, isFileSystemError, MembenchError, notWritable } from '../core/errors.js';
import { makeDirs } from '../core/fs.js';
import { processAlive } from '../core/processes.js';

/** The lock file inside an output dir. */
export const LOCK_FILE = '.membench.lock';

/** Who holds a lock. */
interface LockHolder {
  pid: number;
  host: string;
  command: string;
  started: string;
}

/** A held lock: `release()` removes it, and the dir too if locking created it and it is still empty (safe to call twice; also runs if the process exits first). */
export interface OutDirLock {
  readonly file: string;
  release(): void;
}

function readHolder(file: string): LockHolder | undefined {
  try {
    const holder = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockHolder>;
    return typeof holder.pid === 'number' && typeof holder.host === 'string'
      ? ({ command: '', started: '', ...holder } as LockHolder)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Creates `dir` (with plain messages for a path that is a file, or not creatable); returns the
 * first dir it created, if any. The file system's root and the home dir are refused: a run writes
 * its reports and a charts dir there, and `--overwrite` removes what an earlier run wrote.
 */
export function ensureOutDir(dir: string, flag: string | null = '--out'): string | undefined {
  const refuse = (why: string): MembenchError => outDirRefusal(dir, flag, why);
  const resolved = path.resolve(dir);
  if (path.parse(resolved).root === resolved) throw refuse('the root of the file system, not a dir of its own');
  if (resolved === path.resolve(os.homedir())) throw refuse('the home dir, not a dir of its own');
  let created: string | undefined;
  try {
    created = makeDirs(dir);
  } catch (error) {
    if (!isFileSystemError(error)) throw error;
    if (error.code === 'ENOENT') throw refuse('cannot create it (no such file or directory)');
    if (error.code === 'EEXIST')
      throw refuse(
        lstatSync(dir, { throwIfNoEntry: false })?.isSymbolicLink()
          ? 'a symbolic link that points at nothing, not a directory'
          : 'a file of that name exists, not a directory',
      );
    if (error.code === 'ENOTDIR') throw refuse('a part of the path is a file, not a directory');
    const denied = notWritable(error);
    if (denied) throw refuse(`cannot create it (${denied})`);
    throw fileSystemProblem(error) ?? error;
  }
  if (!statSync(dir).isDirectory()) throw refuse('a file of that name exists, not a directory');
  return created;
}

/** An output dir refused, naming the flag that named it (none for `membench judge`, which writes beside its results). */
function outDirRefusal(dir: string, flag: string | null, why: string): MembenchError {
  return new MembenchError(
    'BAD_PATH',
    flag === null ? `${dir}: ${why}` : `${flag} ${dir}: ${why}: choose another ${flag}`,
  );
}

/**
 * Refuses a lock path that is not a plain file (a directory, a symlink, a device): membench never
 * made it, and removing it to take the lock over could remove what it holds or points to.
 */
function checkLockFile(file: string): void {
  const stat = lstatSync(file, { throwIfNoEntry: false });
  if (!stat || stat.isFile()) return;
  const kind = stat.isDirectory() ? 'a directory' : stat.isSymbolicLink() ? 'a symlink' : 'not a plain file';
  throw new MembenchError(
    'BAD_PATH',
    `${file} is ${kind}, not membench's lock file (membench writes a small JSON file there): move it away, then run again`,
  );
}

/**
 * Takes the output dir's lock for this process (creating the dir), or refuses with exit 2 when a
 * live process holds it. `command` names what holds it (`membench run`), for the message others see;
 * `flag` is the flag that named the dir (`--out`, `--resume`), or null when the user cannot choose
 * another (`membench judge` writes beside the results it judges).
 */
export function lockOutDir(dir: string, command: string, flag: string | null = '--out'): OutDirLock {
  const created = ensureOutDir(dir, flag);
  const named = flag === null ? dir : `${flag} ${dir}`;
  const otherwise = flag === null ? '' : ` or choose another ${flag}`;
  const file = path.join(dir, LOCK_FILE);
  const mine: LockHolder = { pid: process.pid, host: os.hostname(), command, started: new Date().toISOString() };
  const temp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(mine)}\n`);
  } catch (error) {
    // A dir that exists but takes no file (a read-only mount, another user's dir): said of the dir
    // the user named, not of the lock's temp file they never heard of.
    const denied = isFileSystemError(error)
      ? (notWritable(error) ?? (error.code === 'ENOENT' ? 'no file can be created there' : undefined))
      : undefined;
    if (created) rmSync(created, { recursive: true, force: true });
    if (denied) throw outDirRefusal(dir, flag, `cannot write in it (${denied})`);
    throw fileSystemProblem(error) ?? error;
  }
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(temp, file);
        break;
      } catch (error) {
        if (!isFileSystemError(error) || error.code !== 'EEXIST' || attempt >= 3)
          throw fileSystemProblem(error) ?? error;
      }
      checkLockFile(file);
      const holder = readHolder(file);
      const local = holder?.host === mine.host;
      if (holder && (!local || processAlive(holder.pid))) {
        throw new MembenchError(
          'OUTPUT_IN_USE',
          `${named} is in use by another run: ${holder.command || 'membench'} (pid ${holder.pid}${local ? '' : ` on ${holder.host}`}, started ${holder.started}): wait for it to finish${otherwise}; if that process is not membench, remove ${file}`,
        );
      }
      // Its holder is gone (killed, or the file is damaged): take it over.
      rmSync(file, { force: true });
    }
  } catch (error) {
    rmSync(temp, { force: true });
    if (created) rmSync(created, { recursive: true, force: true });
    throw error;
  }
  rmSync(temp, { force: true });
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    process.off('exit', release);
    // Remove it only while it is still ours; a dir made only for this run and left empty (bad input) goes too.
    if (readHolder(file)?.pid === process.pid) unlinkSync(file);
    if (
      created &&
      readdirSync(created, { recursive: true }).every((entry) =>
        statSync(path.join(created, String(entry))).isDirectory(),
      )
    )
      rmSync(created, { recursive: true, force: true });
  };
  // process.exit (an interrupted run) skips `finally` blocks: the lock goes with the process.
  process.once('exit', release);
  return { file, release };
}

/** Runs `work` with the output dir locked (see lockOutDir), releasing the lock however it ends. */
export async function withOutDirLock<T>(
  dir: string,
  command: string,
  work: () => Promise<T>,
  flag: string | null = '--out',
): Promise<T> {
  const lock = lockOutDir(dir, command, flag);
  try {
    return await work();
  } finally {
    lock.release();
  }
}

/** Refuses an empty `--out` (`-o ""`, an unset variable in a script), which would write into the working dir. */
export function checkOutFlag(out: string): void {
  if (out.trim() === '')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      '--out is empty (an unset variable?): give the output dir, or leave --out out for the default',
    );
}
