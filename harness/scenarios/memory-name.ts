/**
 * What a memory name may be: a `remember` step's `name:` (checked when a scenario is validated)
 * and the names file-index writes as files (checked again there), one rule for both.
 */
import path from 'node:path';

/** Longest memory name, in characters and in UTF-8 bytes (file names are limited to 255 bytes). */
export const MAX_NAME_CHARS = 100;
export const MAX_NAME_BYTES = 200;

const codePoints = (text: string): number => Array.from(text).length;
const WINDOWS_RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])$/iu;

/** A user or model supplied name as it is stored: NFC, trimmed, lower case. */
export function normalizedMemoryName(raw: string): string {
  return raw.normalize('NFC').trim().toLowerCase();
}

/** Why a (normalised) memory name cannot be a file name in the memory dir, or undefined when it can. */
export function memoryNameProblem(name: string): string | undefined {
  const shown = JSON.stringify(name);
  if (name.includes('\0')) return `memory name ${shown} refused: it contains a NUL byte`;
  if (name.length === 0) return 'memory name refused: it is empty';
  if (path.posix.isAbsolute(name) || path.win32.isAbsolute(name))
    return `memory name ${shown} refused: absolute paths are not allowed`;
  if (/[/\\]/u.test(name)) {
    return name.split(/[/\\]/u).includes('..')
      ? `memory name ${shown} refused: ".." would escape the memory directory`
      : `memory name ${shown} refused: path separators ("/" or "\\") are not allowed`;
  }
  if (name === '.' || name === '..') return `memory name ${shown} refused: "." and ".." are reserved`;
  if (name.startsWith('.'))
    return `memory name ${shown} refused: names starting with "." are reserved (hidden and temporary files)`;
  if (codePoints(name) > MAX_NAME_CHARS) return `memory name refused: it is longer than ${MAX_NAME_CHARS} characters`;
  if (Buffer.byteLength(name) > MAX_NAME_BYTES)
    return `memory name refused: it is longer than ${MAX_NAME_BYTES} bytes in UTF-8`;
  if (!/^[\p{L}\p{N}][\p{L}\p{M}\p{N}._-]*$/u.test(name) || name.endsWith('.')) {
    return `memory name ${shown} refused: use letters, digits, "-", "_" and inner "." only`;
  }
  if (name.toLowerCase() === 'memory') return `memory name ${shown} refused: "MEMORY" is reserved for the index`;
  if (WINDOWS_RESERVED.test(name.split('.')[0]!))
    return `memory name ${shown} refused: it is a reserved device name on Windows`;
  return undefined;
}
