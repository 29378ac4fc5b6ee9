/** FNV-1a (32-bit): membench's one string hash, for seeds, hash buckets, rank tables and colours. */

const OFFSET = 0x811c9dc5;
const PRIME = 0x01000193;

/**
 * Over the UTF-16 code units of `text` from `start` to `end` (bytes held as a Latin-1 string hash
 * as bytes), unsigned; `basis` (a seed) is XORed into the offset.
 */
export function fnv1a(text: string, basis = 0, start = 0, end = text.length): number {
  let hash = OFFSET ^ basis;
  for (let i = start; i < end; i++) hash = Math.imul(hash ^ text.charCodeAt(i), PRIME);
  return hash >>> 0;
}

/** Over the code points of `text` (an astral character is one step, as `for…of` walks a string), unsigned. */
export function fnv1aCodePoints(text: string, basis = 0): number {
  let hash = OFFSET ^ basis;
  for (const char of text) hash = Math.imul(hash ^ char.codePointAt(0)!, PRIME);
  return hash >>> 0;
}
