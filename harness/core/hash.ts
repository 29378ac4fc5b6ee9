/** FNV-1a (32-bit): membench's one string hash, for seeds, hash buckets, rank tables and colours; JsonHash feeds a value's JSON to a crypto hash. */
import type { Hash } from 'node:crypto';

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

/** A character JSON.stringify escapes (a quote, a backslash, a control character), or a surrogate (a lone one is escaped). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/u;

/**
 * Feeds a crypto hash the UTF-8 bytes of `JSON.stringify(value)` without writing that string: the
 * JSON of a dataset's question (~0.6 MB) costs more to build than its bytes cost to hash. Plain
 * data (objects, arrays, strings, numbers, booleans, null) is written here through one reused
 * buffer; a string with something to escape, and anything else (`toJSON`, boxed values), is
 * written by JSON.stringify itself, so the bytes are always JSON.stringify's.
 */
export class JsonHash {
  private buffer = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  /** Bytes handed to the hash so far (tests count them). */
  bytes = 0;
  /** Values that were written by JSON.stringify as a whole (tests count them). */
  stringified = 0;

  constructor(private readonly hash: Hash) {}

  /** Feeds text as it is (JSON punctuation between values). */
  text(text: string): this {
    this.room(text.length * 3);
    this.used += this.buffer.write(text, this.used, 'utf8');
    return this;
  }

  /** Feeds the JSON of a value. */
  json(value: unknown): this {
    this.value(value);
    return this;
  }

  /** Hands what is buffered to the hash and returns it. */
  flush(): Hash {
    if (this.used > 0) this.hash.update(this.buffer.subarray(0, this.used));
    this.bytes += this.used;
    this.used = 0;
    return this.hash;
  }

  private room(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return;
    this.flush();
    if (bytes > this.buffer.length) this.buffer = Buffer.allocUnsafe(bytes);
  }

  private value(value: unknown): void {
    if (typeof value === 'string') {
      if (NEEDS_ESCAPE.test(value)) this.whole(value);
      else this.text('"').text(value).text('"');
    } else if (typeof value === 'number') this.text(Number.isFinite(value) ? String(value) : 'null');
    else if (typeof value === 'boolean') this.text(value ? 'true' : 'false');
    else if (value === null) this.text('null');
    else if (typeof value !== 'object' || typeof (value as { toJSON?: unknown }).toJSON === 'function')
      this.whole(value);
    else if (Array.isArray(value)) {
      this.text('[');
      for (let index = 0; index < value.length; index++) {
        if (index > 0) this.text(',');
        const item: unknown = value[index];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') this.text('null');
        else this.value(item);
      }
      this.text(']');
    } else if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)
      this.whole(value);
    else {
      this.text('{');
      let first = true;
      for (const key of Object.keys(value)) {
        const item: unknown = (value as Record<string, unknown>)[key];
        if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
        if (!first) this.text(',');
        first = false;
        this.value(key);
        this.text(':');
        this.value(item);
      }
      this.text('}');
    }
  }

  /** A value JSON.stringify writes (what this class does not write itself). */
  private whole(value: unknown): void {
    this.stringified++;
    this.text(JSON.stringify(value) ?? 'null');
  }
}
