import { shortenText } from './text.js';

/**
 * How a refusal shows what the user wrote and what they may have meant: the value as messages
 * show it, and the name a typo away from it ("did you mean buffer?"), by edit distance.
 */

/**
 * Levenshtein distance between `a` and `b` (UTF-16 units), or `limit` when it is `limit` or more:
 * a row whose every cell reaches the limit stops the scan.
 */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      const cell = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(cell);
      if (cell < rowMin) rowMin = cell;
    }
    if (rowMin >= limit) return limit;
    previous = current;
  }
  return Math.min(previous[b.length]!, limit);
}

/** The candidate nearest to `target` by edit distance (the first of equals), or undefined when there is none. */
export function closestString(target: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const distance = editDistance(target, candidate, bestDistance);
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
    if (distance === 0) break;
  }
  return best;
}

/** ` (did you mean buffer?)` for a name a typo away from one of `candidates`, else '': a refusal listing every valid name also points at one. */
export function didYouMean(target: string, candidates: Iterable<string>): string {
  const near = typoOf(target, candidates);
  return near === undefined ? '' : ` (did you mean ${near}?)`;
}

/**
 * The candidate a typo away from `target`, if any (not `target` itself): an edit per three characters,
 * at least two past three characters (two letters swapped, `stpes`, are two edits), one below.
 */
export function typoOf(target: string, candidates: Iterable<string>): string | undefined {
  const closest = closestString(target, candidates);
  const allowed = target.length <= 3 ? 1 : Math.max(2, Math.floor(target.length / 3));
  return closest !== undefined && closest !== target && editDistance(target, closest, allowed + 1) <= allowed
    ? closest
    : undefined;
}

/** `steps[12].expect` from ['steps', 12, 'expect']: where in a document a refusal points. */
export function formatPath(segments: readonly (string | number)[]): string {
  if (segments.length === 0) return '(document)';
  return segments
    .map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : index === 0 ? segment : `.${segment}`))
    .join('');
}

/** The kind of a value a program handed an entry point, as its refusal says it: `null`, `a list`, else its typeof. */
export function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'a list' : typeof value;
}

/** A value read from a file, as messages show it: `"abc"`, `5`, `a list`, `a mapping` (long strings cut at 40 characters, between graphemes: shortenText). */
export function describeInput(input: unknown): string {
  if (input === null) return 'null';
  if (Array.isArray(input)) return 'a list';
  if (typeof input === 'object') return 'a mapping';
  if (typeof input === 'string') return `"${shortenText(input, 41)}"`;
  return String(input);
}

/**
 * A value as a refusal shows it, within `max` characters: strings quoted, lists and objects as
 * JSON, a function as such; what JSON cannot write (a cycle) as its object tag.
 */
export function shownValue(value: unknown, max = 60): string {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'string') return JSON.stringify(shortenText(value, max + 1));
  if (typeof value !== 'object' || value === null) return String(value);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    // a cycle, a BigInt inside
  }
  if (text === undefined) return Object.prototype.toString.call(value);
  return shortenText(text, max + 1);
}
