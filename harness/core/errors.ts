/** Errors with stable codes: the CLI turns them into a message and an exit code in one place. */

import os from 'node:os';
import path from 'node:path';
import { shownValue } from './user-input.js';

export type ErrorCode =
  | 'INVALID_SCENARIO'
  | 'INVALID_ARGUMENT'
  | 'NOT_SUPPORTED'
  | 'OUTPUT_EXISTS'
  | 'UNKNOWN_STRATEGY'
  | 'UNKNOWN_SCENARIO'
  | 'MODEL_ERROR'
  | 'OUTPUT_IN_USE'
  | 'BAD_PATH'
  | 'CORRUPT_STORE'
  | 'FILE_SYSTEM';

/** Exit code 2 means "bad input": the user can fix the command or the file. */
const BAD_INPUT: ReadonlySet<ErrorCode> = new Set([
  'INVALID_SCENARIO',
  'INVALID_ARGUMENT',
  'NOT_SUPPORTED',
  'OUTPUT_EXISTS',
  'UNKNOWN_STRATEGY',
  'UNKNOWN_SCENARIO',
  'OUTPUT_IN_USE',
  'BAD_PATH',
]);

/** An expected failure with a message meant for the user (no stack trace shown). */
export class MembenchError extends Error {
  readonly code: ErrorCode;
  /** Extra lines printed under the message (e.g. one per problem in a file). */
  readonly details: readonly string[];

  constructor(code: ErrorCode, message: string, details: readonly string[] = []) {
    super(message);
    this.name = 'MembenchError';
    this.code = code;
    this.details = details;
  }

  get exitCode(): number {
    return BAD_INPUT.has(this.code) ? 2 : 1;
  }
}

/**
 * A thrown value's message: an Error's own (or an error-like object's `message`, from another
 * realm), a string as it is, anything else shown as data and said to be no Error (`{"code":42}
 * (thrown, not an Error)`): `String()` made `[object Object]` of an object, `undefined` of nothing.
 */
export function errorMessage(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  const message = (value as { message?: unknown } | null)?.message;
  if (typeof message === 'string') return message;
  return `${shownValue(value, 200)} (thrown, not an Error)`;
}

export function isMembenchError(error: unknown): error is MembenchError {
  return error instanceof MembenchError;
}

/** An error from the file system (it has an errno code such as ENOSPC), with the path it names. */
export function isFileSystemError(error: unknown): error is NodeJS.ErrnoException & { code: string } {
  return (
    error instanceof Error &&
    typeof (error as NodeJS.ErrnoException).code === 'string' &&
    /^E[A-Z]+$/u.test((error as NodeJS.ErrnoException).code!)
  );
}

/** What an errno means in words, for the codes an ordinary user meets; `path` names the file. */
const FILE_SYSTEM_WORDS: Record<string, (path: string) => string> = {
  ENOSPC: (path) => `no space left on the device holding ${path}`,
  EDQUOT: (path) => `disk quota exceeded writing ${path}`,
  EEXIST: (path) => `${path} already exists and is not a directory (a file?)`,
  ENOTDIR: (path) => `${path}: a part of this path is a file, not a directory`,
  EISDIR: (path) => `${path} is a directory, not a file`,
  EACCES: (path) => `permission denied: ${path}`,
  EPERM: (path) => `operation not permitted: ${path}`,
  EROFS: (path) => `${path} is on a read-only file system`,
  ENOENT: (path) => `no such file or directory: ${path}`,
  ENAMETOOLONG: (path) => `file name too long: ${path}`,
  EMFILE: () => 'too many open files (raise the limit with ulimit -n)',
  EIO: (path) => `input/output error on ${path} (a failing disk?)`,
};
/** Errnos that mean the machine ran out of something, not that the user named a bad path: exit 1, like a failed run. */
const RESOURCE_ERRNOS: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'EMFILE', 'EIO']);
/** Errnos whose remedy is another path, when the path was the user's. */
const ANOTHER_PATH_ERRNOS: ReadonlySet<string> = new Set(['EEXIST', 'ENOTDIR']);

/** Why a dir cannot be written in, for the errnos that say so (a read-only mount, no permission), else undefined. */
export function notWritable(error: NodeJS.ErrnoException): string | undefined {
  if (error.code === 'EROFS') return 'read-only file system';
  return error.code === 'EACCES' || error.code === 'EPERM' ? 'permission denied' : undefined;
}

/**
 * A file-system error as a plain MembenchError (no stack trace): the path, the meaning, and
 * `hint` (e.g. how to resume). A path the user named wrongly is bad input (exit 2); a full disk
 * or a failing device exits 1. Undefined for anything else.
 */
export function fileSystemProblem(error: unknown, hint?: string): MembenchError | undefined {
  if (!isFileSystemError(error)) return undefined;
  const file = (error as NodeJS.ErrnoException).path ?? (error as { dest?: string }).dest ?? 'a file';
  const words = FILE_SYSTEM_WORDS[error.code]?.(file) ?? `${error.code}: ${error.message}`;
  const resource = RESOURCE_ERRNOS.has(error.code);
  const anotherPath = ANOTHER_PATH_ERRNOS.has(error.code) ? 'choose another path' : undefined;
  const advice = (hint === undefined ? [tempDirAdvice(file, resource) ?? anotherPath] : [anotherPath, hint]).filter(
    (part) => part !== undefined,
  );
  return new MembenchError(resource ? 'FILE_SYSTEM' : 'BAD_PATH', [words, ...advice].join(': '));
}

/**
 * A full disk (ENOSPC, EDQUOT) met while a command writes its out dir, in the words `run` and `tune`
 * share: the file, what is kept (`kept`), then `free some space, then` the way on (`then`); exit 1.
 * Any other error is returned as it is.
 */
export function fullDiskProblem(error: unknown, kept: string, then: string): unknown {
  return isFileSystemError(error) && (error.code === 'ENOSPC' || error.code === 'EDQUOT')
    ? fileSystemProblem(error, `${kept}: free some space, then ${then}`)
    : error;
}

/** Whether `file` is in one of membench's own working dirs in the temp dir (`membench-…`: cell stores, bench files), which the user never named. */
export function inTempWorkDir(file: string): boolean {
  const [first] = path.relative(path.resolve(os.tmpdir()), path.resolve(file)).split(path.sep);
  return first !== undefined && first.startsWith('membench-');
}

/**
 * What to do about a failing path in one of membench's own working dirs (`membench-…` in the temp
 * dir: cell stores, bench files): the user never named that path, so say where it comes from —
 * os.tmpdir() reads TMPDIR, then TMP, then TEMP — and which variable moves it. Undefined for any
 * other path (a file the user keeps in /tmp is theirs).
 */
function tempDirAdvice(file: string, full: boolean): string | undefined {
  if (!inTempWorkDir(file)) return undefined;
  const temp = path.resolve(os.tmpdir());
  const variable = ['TMPDIR', 'TMP', 'TEMP'].find((name) => process.env[name]);
  const source = variable ? `${variable}=${process.env[variable]}` : `the system's, ${temp}`;
  return `membench makes its working dirs in the temp dir (${source}): ${full ? 'free space there, or set TMPDIR to a disk with room' : 'set TMPDIR to a directory you can write to'}`;
}
