/**
 * The streaming reader of dataset files: one JSON list read element by element, so `--limit 5`
 * on the 2.7 GB longmemeval_m.json reads five questions, and no element has to fit in one string
 * with the rest of the file. Errors name the file, line, column and element.
 */
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { MembenchError } from '../../core/errors.js';
import { offsetFromContext } from '../../core/json-errors.js';

const bad = (message: string): MembenchError => new MembenchError('INVALID_ARGUMENT', message);

/**
 * A JSON number whose value a double cannot hold (`12345678901234567890`, `1e400`,
 * `3.14159265358979323846`), kept as its source text: read as a number it would become other
 * digits, `Infinity` (printed as `null`) or 0. Node 20's `JSON.parse` does not show a reviver the
 * source text, so such literals are found in the element's text before parsing.
 */
export class JsonNumberText {
  constructor(readonly text: string) {}
}

/** A number literal in JSON text (the grammar's `number`). */
const NUMBER_LITERAL = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/uy;
/** Text that may hold a number literal of 16+ significant digits or a 3-digit exponent: the cheap test before the exact scan. */
const MAY_HOLD_LOSSY_NUMBER = /\d[\d.]{15}|[eE][+-]?\d{3}/u;
/** Stands for a lossy literal during `JSON.parse` (random, so no dataset string can hold it). */
const NUMBER_MARK = `\u0000membench-number-${randomUUID()}:`;

/** The significant digits of a number's text, without sign, point, exponent, leading or trailing zeros. */
function significantDigits(text: string): string {
  return text.replace(/^-/u, '').split(/[eE]/u)[0]!.replace('.', '').replace(/^0+/u, '').replace(/0+$/u, '');
}

/** Whether reading this literal as a double changes its value (other digits, infinity, or 0). */
function isLossy(literal: string): boolean {
  const value = Number(literal);
  if (!Number.isFinite(value)) return true;
  return (
    significantDigits(literal) !== significantDigits(String(value)) &&
    !(value === 0 && significantDigits(literal) === '')
  );
}

/**
 * Where the JSON string opening at `quote` ends (the index after its closing quote), or -1 when it
 * does not: found by jumping from quote to quote (`indexOf`), a quote after an odd run of
 * backslashes being escaped.
 */
function stringEnd(text: string, quote: number): number {
  for (let from = quote + 1; ; ) {
    const next = text.indexOf('"', from);
    if (next < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(next - 1 - backslashes) === 92) backslashes++;
    if (backslashes % 2 === 0) return next + 1;
    from = next + 1;
  }
}

/**
 * The element parsed, lossy number literals kept as `JsonNumberText`. Literals are looked for only
 * between strings; a string is skipped whole (`stringEnd`): a LongMemEval_S question is ~600,000
 * characters of strings, and its ids' hex digits (`e960`) pass the cheap test nearly every time.
 */
function parseKeepingNumbers(text: string): unknown {
  if (!MAY_HOLD_LOSSY_NUMBER.test(text)) return JSON.parse(text) as unknown;
  const parts: string[] = [];
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 34) {
      const end = stringEnd(text, i);
      if (end < 0) break; // unterminated: JSON.parse below says where
      i = end - 1;
    } else if (code === 45 || (code >= 48 && code <= 57)) {
      NUMBER_LITERAL.lastIndex = i;
      const literal = NUMBER_LITERAL.exec(text)?.[0];
      if (literal === undefined) continue;
      if (isLossy(literal)) {
        parts.push(text.slice(copied, i), JSON.stringify(NUMBER_MARK + literal));
        copied = i + literal.length;
      }
      i += literal.length - 1;
    }
  }
  if (parts.length === 0) return JSON.parse(text) as unknown;
  parts.push(text.slice(copied));
  return JSON.parse(parts.join(''), (_key, value: unknown) =>
    typeof value === 'string' && value.startsWith(NUMBER_MARK)
      ? new JsonNumberText(value.slice(NUMBER_MARK.length))
      : value,
  ) as unknown;
}

/** What a file that is not a list starts with, for the error: `a JSON object`, `42`, `true`. */
function foundInstead(text: string, at: number): string {
  const code = text.charCodeAt(at);
  // Hugging Face exports and many converters write JSON Lines; a single element is the other likely object.
  if (code === 123)
    return 'a JSON object: one element alone, or the first line of a JSON Lines file (one object per line), which is not read; `jq -s . FILE > list.json` makes a JSON Lines file the list';
  if (code === 34) return 'a JSON string';
  if (text.startsWith(LFS_POINTER, at))
    return 'a Git LFS pointer, not the data (a clone without git-lfs): run `git lfs pull` in the clone, or download the file itself';
  if (code === 60) return 'an HTML page (a download link saved its page, not the file?): download the file itself';
  const token = /[^\s,[\]{}"]{1,40}/uy;
  token.lastIndex = at;
  const word = token.exec(text)?.[0] ?? text[at]!;
  if (new RegExp(`^${NUMBER_LITERAL.source}$`, 'u').test(word)) return `a JSON number (${word})`;
  return ['true', 'false', 'null'].includes(word) ? `JSON ${word}` : `"${word}"`;
}

/** How a Git LFS pointer file begins (what a clone without git-lfs holds in place of a large file). */
const LFS_POINTER = 'version https://git-lfs.github.com/spec/';

/**
 * The archive a dataset file is, by its first bytes, or undefined: the datasets ship packed
 * (`longmemeval_data.tar.gz`, a zip of `locomo10.json`), and their bytes are not UTF-8, so without
 * this the refusal said only that.
 */
function archiveKind(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return 'a gzip file (a .tar.gz or .gz): unpack it (tar -xzf, gunzip)';
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04)
    return 'a zip archive: unzip it';
  return undefined;
}

/** The length of the longest prefix of `bytes` that is UTF-8 (a character cut at its end counts as UTF-8). */
function utf8PrefixLength(bytes: Uint8Array): number {
  const valid = (length: number): boolean => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, length), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let low = 0;
  let high = bytes.length;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (valid(mid)) low = mid;
    else high = mid - 1;
  }
  return low;
}

/** The characters inside a JSON string that the list scanner looks at: its end, an escape, a line break (for the line count). */
const STRING_STOP = /["\\\n]/gu;

/** Where the list scanner is: before the `[`, between elements, inside one, after the `]`. */
type ScanState = 'start' | 'before' | 'item' | 'end';

/** Largest list element read into one string (V8 strings stop near 512 MiB). */
const MAX_ELEMENT_CHARS = 256 * 1024 * 1024;

/** Told the bytes of the file read so far, and its size, as the reading goes (once a chunk, ~1 MiB). */
export type ReadListener = (read: number, total: number) => void;

/**
 * The elements of a file holding one JSON list, parsed one at a time. Bad input (missing file,
 * not UTF-8, not a list, invalid JSON, truncated) throws a MembenchError naming the file, the
 * line and column, and the element. `onRead` hears how far the reading is.
 */
export async function* readJsonList(file: string, units: string, onRead?: ReadListener): AsyncGenerator<unknown> {
  let total = 0;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw bad(`${file}: not a file`);
    total = info.size;
  } catch (error) {
    if (error instanceof MembenchError) throw error;
    throw bad(
      `${file}: cannot read: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    );
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 1;
  let col = 0;
  let state = 'start' as ScanState;
  let afterComma = false;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let pieces: string[] = [];
  let pieceChars = 0;
  let itemStart = { line: 1, col: 1 };
  let index = 0;
  const where = (at = { line, col }): string => `${file}:${at.line}:${at.col}`;

  const parseItem = (text: string): unknown => {
    try {
      return parseKeepingNumbers(text);
    } catch {
      // Located on the element as written (the kept numbers' marks would shift the columns).
      return parseOrLocate(text);
    }
  };

  const parseOrLocate = (text: string): unknown => {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      // V8 names the offset in some versions ("at position N", "(line L column C)"), not in others.
      const message = (error as Error).message;
      const position = /position (\d+)/u.exec(message)?.[1];
      const offset = position === undefined ? offsetFromContext(message, text) : Number(position);
      const lineCol = /\(line (\d+) column (\d+)\)/u.exec(message);
      let at = itemStart;
      if (lineCol) {
        const relativeLine = Number(lineCol[1]);
        at = {
          line: itemStart.line + relativeLine - 1,
          col: relativeLine === 1 ? itemStart.col + Number(lineCol[2]) - 1 : Number(lineCol[2]),
        };
      } else if (offset !== undefined) {
        const lines = text.slice(0, offset).split('\n');
        at =
          lines.length === 1
            ? { line: itemStart.line, col: itemStart.col + lines[0]!.length }
            : { line: itemStart.line + lines.length - 1, col: lines.at(-1)!.length + 1 };
      }
      const reason = message
        .split('\n')[0]!
        .replace(/, (?:\.\.\.)?".*$/u, '')
        .replace(/ in JSON at position \d+.*$| \(line \d+ column \d+\)$/u, '');
      throw bad(`${where(at)}: ${units}[${index}]: invalid JSON: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}`);
    }
  };

  let read = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    read += (chunk as Buffer).length;
    onRead?.(read, total);
    const archive = state === 'start' && line === 1 && col === 0 ? archiveKind(chunk as Buffer) : undefined;
    if (archive !== undefined)
      throw bad(`${file}: ${archive} and give the .json file inside: the dataset file is JSON, a list of ${units}`);
    let text: string;
    try {
      text = decoder.decode(chunk as Buffer, { stream: true });
    } catch {
      // At the first byte that is not UTF-8: the text before it counted in lines and columns.
      const before = new TextDecoder('utf-8').decode((chunk as Buffer).subarray(0, utf8PrefixLength(chunk as Buffer)), {
        stream: true, // a character the bad byte cuts short is not text before it
      });
      const lineBreaks = before.split('\n');
      const at =
        lineBreaks.length === 1
          ? { line, col: col + before.length + 1 }
          : { line: line + lineBreaks.length - 1, col: lineBreaks.at(-1)!.length + 1 };
      throw bad(`${where(at)}: not UTF-8 text: the dataset file is JSON`);
    }
    let sliceStart = state === 'item' ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === 10) {
        line++;
        col = 0;
      } else col++;
      const space = code === 32 || code === 10 || code === 13 || code === 9;
      if (state === 'start') {
        if (space || (code === 0xfeff && line === 1 && col === 1)) continue;
        if (code === 91) {
          state = 'before';
          continue;
        }
        throw bad(
          `${where()}: expected a JSON list of ${units} (the published file is one), found ${foundInstead(text, i)}`,
        );
      }
      if (state === 'end') {
        if (space) continue;
        throw bad(`${where()}: unexpected text after the end of the list`);
      }
      if (state === 'before') {
        if (space) continue;
        if (code === 93) {
          if (afterComma) throw bad(`${where()}: a trailing comma before "]" is not JSON`);
          state = 'end';
          continue;
        }
        state = 'item';
        depth = 0;
        inString = false;
        escaped = false;
        pieces = [];
        pieceChars = 0;
        sliceStart = i;
        itemStart = { line, col };
      }
      // state === 'item': only a `,` or the list's `]` outside strings and nesting ends it.
      if (inString) {
        if (escaped) escaped = false;
        else if (code === 92) escaped = true;
        else if (code === 34) inString = false;
        else {
          // Most of a dataset is string content: jump to the next character that matters (a quote, a backslash, a line break).
          STRING_STOP.lastIndex = i + 1;
          const stop = STRING_STOP.exec(text)?.index ?? text.length;
          col += stop - i - 1;
          i = stop - 1;
        }
        continue;
      }
      if (code === 34) inString = true;
      else if (code === 91 || code === 123) depth++;
      else if ((code === 93 || code === 125) && depth > 0) depth--;
      else if ((code === 93 && depth === 0) || (code === 44 && depth === 0)) {
        const value = parseItem(pieces.join('') + text.slice(sliceStart, i));
        state = code === 44 ? 'before' : 'end';
        afterComma = code === 44;
        index++;
        sliceStart = -1;
        yield value;
      }
    }
    if (state === 'item' && sliceStart >= 0) {
      const rest = text.slice(sliceStart);
      pieceChars += rest.length;
      if (pieceChars > MAX_ELEMENT_CHARS)
        throw bad(
          `${where(itemStart)}: ${units}[${index}] is over ${MAX_ELEMENT_CHARS} characters: too large to import`,
        );
      pieces.push(rest);
    }
  }
  try {
    decoder.decode();
  } catch {
    throw bad(`${where({ line, col: Math.max(col, 1) })}: not UTF-8 text: the file ends inside a character`);
  }
  const last: ScanState = state;
  if (last === 'start') throw bad(`${file}: the file is empty: expected a JSON list of ${units}`);
  if (last !== 'end')
    throw bad(
      `${where({ line, col: Math.max(col, 1) })}: the file ends inside the list, in ${units}[${index}] (truncated?)`,
    );
}
