/**
 * The streaming reader of dataset files: one JSON list read element by element, so `--limit 5`
 * on the 2.7 GB longmemeval_m.json reads five questions, and no element has to fit in one string
 * with the rest of the file. Errors name the file, line, column and element.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { MembenchError } from '../../core/errors.js';

const bad = (message: string): MembenchError => new MembenchError('INVALID_ARGUMENT', message);

/** Where the list scanner is: before the `[`, between elements, inside one, after the `]`. */
type ScanState = 'start' | 'before' | 'item' | 'end';

/** Largest list element read into one string (V8 strings stop near 512 MiB). */
const MAX_ELEMENT_CHARS = 256 * 1024 * 1024;

/**
 * The elements of a file holding one JSON list, parsed one at a time. Bad input (missing file,
 * not UTF-8, not a list, invalid JSON, truncated) throws a MembenchError naming the file, the
 * line and column, and the element.
 */
export async function* readJsonList(file: string, units: string): AsyncGenerator<unknown> {
  try {
    const info = await stat(file);
    if (!info.isFile()) throw bad(`${file}: not a file`);
  } catch (error) {
    if (error instanceof MembenchError) throw error;
    throw bad(`${file}: cannot read: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
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
      return JSON.parse(text) as unknown;
    } catch (error) {
      // V8 names the offset in some versions ("at position N", "(line L column C)"), not in others.
      const message = (error as Error).message;
      const offset = /position (\d+)/u.exec(message);
      const lineCol = /\(line (\d+) column (\d+)\)/u.exec(message);
      let at = itemStart;
      if (lineCol) {
        const relativeLine = Number(lineCol[1]);
        at = { line: itemStart.line + relativeLine - 1, col: relativeLine === 1 ? itemStart.col + Number(lineCol[2]) - 1 : Number(lineCol[2]) };
      } else if (offset) {
        const lines = text.slice(0, Number(offset[1])).split('\n');
        at = lines.length === 1 ? { line: itemStart.line, col: itemStart.col + lines[0]!.length } : { line: itemStart.line + lines.length - 1, col: lines.at(-1)!.length + 1 };
      }
      const reason = message.split('\n')[0]!.replace(/, ".*$/u, '').replace(/ in JSON at position \d+.*$| \(line \d+ column \d+\)$/u, '');
      throw bad(`${where(at)}: ${units}[${index}]: invalid JSON: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}`);
    }
  };

  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    let text: string;
    try {
      text = decoder.decode(chunk as Buffer, { stream: true });
    } catch {
      throw bad(`${where()}: not UTF-8 text: the dataset file is JSON`);
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
        throw bad(`${where()}: expected a JSON list of ${units} (the published file is one), found ${code === 123 ? 'a JSON object' : code === 34 ? 'a JSON string' : `"${text[i]}"`}`);
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
      if (pieceChars > MAX_ELEMENT_CHARS) throw bad(`${where(itemStart)}: ${units}[${index}] is over ${MAX_ELEMENT_CHARS} characters: too large to import`);
      pieces.push(rest);
    }
  }
  try {
    decoder.decode();
  } catch {
    throw bad(`${where()}: not UTF-8 text: the file ends inside a character`);
  }
  const last: ScanState = state;
  if (last === 'start') throw bad(`${file}: the file is empty: expected a JSON list of ${units}`);
  if (last !== 'end') throw bad(`${where()}: the file ends inside the list, in ${units}[${index}] (truncated?)`);
}
