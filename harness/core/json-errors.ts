/**
 * Where a JSON text went wrong, in the line:col every located message names: V8's JSON.parse
 * says an offset, a line and column, or (Node 20, for most errors) only a few characters around
 * the place, which are found in the text.
 */

/** Line and column (1-based) of a character offset. */
export function positionOf(text: string, offset: number): { line: number; col: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, col: offset - before.lastIndexOf('\n') };
}

/**
 * Where JSON.parse stopped in `text`, and why, from its error: V8 names an offset ("at position N"),
 * a line and column, or nothing when the text ends too soon (then: at its end). The reason is
 * V8's without the place, which the caller says as `line:col`.
 */
export function jsonErrorAt(error: unknown, text: string): { line: number; col: number; reason: string } {
  const message = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)/u.exec(message)?.[1];
  const lineCol = /\(line (\d+) column (\d+)\)/u.exec(message);
  const offset =
    position !== undefined
      ? Number(position)
      : /end of JSON input/u.test(message)
        ? text.length
        : (offsetFromContext(message, text) ?? onlyToken(message, text));
  const where = lineCol
    ? { line: Number(lineCol[1]), col: Number(lineCol[2]) }
    : offset !== undefined
      ? positionOf(text, offset)
      : { line: 1, col: 1 };
  const reason = message
    .split('\n')[0]!
    .replace(/, (?:\.\.\.)?".*$/u, '')
    .replace(/ in JSON at position \d+.*$| \(line \d+ column \d+\)$/u, '');
  return { ...where, reason };
}

/** Characters V8's JSON.parse message quotes on each side of the error when it quotes part of the text. */
const CONTEXT_CHARS = 10;

/**
 * Where in `text` V8's message puts the error when it names no offset (Node 20's: `Unexpected
 * token 'N', ..."b": NaN, "c"... is not valid JSON`, ten characters either side): the quoted
 * context found in the text. Undefined where the message quotes the whole text, or the context is
 * not found.
 */
export function offsetFromContext(message: string, text: string): number | undefined {
  const quoted = /^Unexpected token '([\s\S])', (\.\.\.)?"([\s\S]*)"(\.\.\.)? is not valid JSON$/u.exec(message);
  if (!quoted) return undefined;
  const [, , before, context, after] = quoted;
  if (!before && !after) return undefined;
  const at = text.indexOf(context!);
  if (at < 0) return undefined;
  return before ? at + CONTEXT_CHARS : at + context!.length - CONTEXT_CHARS;
}

/** Where a short text V8 quotes whole (`Unexpected token 'i', "nil" is not valid JSON`) has its unexpected token, if only once. */
function onlyToken(message: string, text: string): number | undefined {
  const token = /^Unexpected token '([\s\S])'/u.exec(message)?.[1];
  const at = token === undefined ? -1 : text.indexOf(token);
  return at >= 0 && text.indexOf(token!, at + 1) < 0 ? at : undefined;
}

/**
 * JSON.parse's complaint about a `.json` file's text, located, or undefined when it parses: the
 * YAML parser reads such files too (JSON is YAML) but takes what JSON refuses (a trailing comma, a
 * comment, a bare word) and places its errors less precisely.
 */
export function jsonSyntaxError(text: string): { where: { line: number; col: number }; message: string } | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch (error) {
    const { line, col, reason } = jsonErrorAt(error, text);
    return { where: { line, col }, message: reason };
  }
}
