/**
 * Token counts of tiktoken's `cl100k_base` and `o200k_base` encodings, computed in JavaScript:
 * the same split pattern and byte-pair merges as tiktoken (`encode_ordinary`), over the same
 * ranks, read from tiktoken's own encoder files. Why not tiktoken's WebAssembly itself: building
 * its encoder costs about 90 ms of CPU per process (parsing 100,000 ranks in baseline-compiled
 * WebAssembly), and the crash benchmark starts a process for every crash. Here the ranks are a hash
 * table laid out in one file, written beside tiktoken's the first time (`.bin`, rebuilt when
 * unreadable): loading it is a file read, with no string per token to allocate and collect. Counts equal tiktoken's: `test/harness/core/bpe.test.ts` compares them on every
 * built-in text, the generated suite and random Unicode.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fnv1a } from './hash.js';
import { boundedMemo, MEMO_CHARS } from './memo.js';

/** The encodings membench counts with. */
export type BpeEncoding = 'cl100k_base' | 'o200k_base';

// tiktoken's patterns, with `(?i:...)` spelled out (JavaScript has no inline flags) and `\s` as
// the Unicode White_Space set the Rust regex crate uses (JavaScript's `\s` adds U+FEFF, lacks U+0085).
const WS = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const CONTRACTION = "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])";
const PATTERNS: Record<BpeEncoding, string> = {
  cl100k_base: `${CONTRACTION}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^${WS}\\p{L}\\p{N}]+[\\r\\n]*|[${WS}]*[\\r\\n]+|[${WS}]+(?![^${WS}])|[${WS}]+`,
  o200k_base: [
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?:${CONTRACTION})?`,
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?:${CONTRACTION})?`,
    `\\p{N}{1,3}`,
    ` ?[^${WS}\\p{L}\\p{N}]+[\\r\\n/]*`,
    `[${WS}]*[\\r\\n]+`,
    `[${WS}]+(?![^${WS}])`,
    `[${WS}]+`,
  ].join('|'),
};

const ASCII = /^[\0-\x7f]*$/u;
/** Merged pieces remembered per counter, in characters (conversations repeat their words and phrases), then forgotten all at once. */
const MERGED_PIECE_CHARS = 262_144;

/**
 * Where a long text is cut into parts counted apart: after sentence-ending punctuation followed by a
 * space, and after a line break followed by a letter or digit. No alternative of either split pattern
 * runs from a character that is not white space into a space (a space only ever opens a piece), nor
 * from a line break into a letter or digit (a line break only ever closes one), so a piece always
 * starts at such a cut and the parts' pieces are the whole text's: the counts add up exactly.
 */
const CUT = /[.!?](?= )|[\r\n](?=[\p{L}\p{N}])/gu;
/** Texts at least this long are counted by their parts. */
const CUT_FROM_CHARS = 256;

/** One encoding's ranks and its split pattern. */
export class BpeCounter {
  private readonly split: RegExp;
  /** Parts of pieces that needed merging, by piece (a phrase of Chinese is one piece, and comes back). */
  private readonly mergedCount = boundedMemo(MERGED_PIECE_CHARS, (bytes) => this.mergedParts(bytes));
  /**
   * Tokens of a sentence or line of a longer text. Prompts and contexts are built from the same
   * sentences again and again (a running summary's kept sentences at every fold, the lines of a
   * conversation quoted in each prompt): each is counted once, not once per text that holds it.
   */
  private readonly partCount = boundedMemo(MEMO_CHARS.sentences, (part) => this.countPieces(part));

  private constructor(
    readonly encoding: BpeEncoding,
    private readonly ranks: RankTable,
  ) {
    this.split = new RegExp(PATTERNS[encoding], 'gu');
  }

  /** Loads an encoding's ranks (once per process is enough: counters are immutable). */
  static load(encoding: BpeEncoding): BpeCounter {
    return new BpeCounter(encoding, loadRanks(encoding));
  }

  /** Tokens of `text`, as tiktoken's `encode_ordinary(text).length` (special tokens are plain text). */
  count(text: string): number {
    if (text.length < CUT_FROM_CHARS) return this.countPieces(text);
    let tokens = 0;
    let start = 0;
    CUT.lastIndex = 0;
    for (let cut = CUT.exec(text); cut !== null; cut = CUT.exec(text)) {
      tokens += this.partCount(text.slice(start, cut.index + 1));
      start = cut.index + 1;
    }
    return tokens + this.partCount(text.slice(start));
  }

  /** Tokens of `text`, piece by piece of the split pattern. */
  private countPieces(text: string): number {
    let tokens = 0;
    this.split.lastIndex = 0;
    for (let match = this.split.exec(text); match !== null; match = this.split.exec(text)) {
      const piece = match[0];
      const bytes = ASCII.test(piece) ? piece : Buffer.from(piece, 'utf8').toString('latin1');
      tokens += this.ranks.rank(bytes, 0, bytes.length) >= 0 ? 1 : this.mergedCount(bytes);
    }
    return tokens;
  }

  /**
   * tiktoken's byte-pair merge: repeatedly join the adjacent pair of lowest rank (the leftmost on
   * ties); returns how many parts are left. Parts are a linked list over byte offsets and candidate
   * pairs a binary heap, so a long piece (a paragraph of Chinese, a base64 blob, a minified file is
   * one piece) costs n log n, not n². The heap lives in typed arrays, its key `rank * 2^31 + at`
   * (exact in a double: ranks < 2^22): a piece of a million bytes allocates a few arrays, not
   * millions of objects for the collector to churn through.
   */
  private mergedParts(bytes: string): number {
    const n = bytes.length;
    // Part i starts at byte i while alive; next[i] / prev[i] link the live parts (n: the end).
    const next = new Int32Array(n);
    const prev = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
    }
    const alive = new Uint8Array(n).fill(1);
    // A candidate is the pair starting at part `at`, valid while that pair's span is unchanged.
    // At most n - 1 first candidates and two per merge (n - 1 merges): 3n slots.
    const keys = new Float64Array(3 * n);
    const ends = new Int32Array(3 * n);
    let size = 0;
    const push = (at: number): void => {
      const second = next[at]!;
      if (second >= n) return;
      const end = next[second]!;
      const rank = this.ranks.rank(bytes, at, end);
      if (rank < 0) return;
      const key = rank * AT_SPAN + at;
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (keys[parent]! <= key) break;
        keys[i] = keys[parent]!;
        ends[i] = ends[parent]!;
        i = parent;
      }
      keys[i] = key;
      ends[i] = end;
    };
    for (let i = 0; i + 1 < n; i++) push(i);
    let parts = n;
    while (size > 0) {
      const at = keys[0]! % AT_SPAN;
      const end = ends[0]!;
      // Pop: sift the last candidate down from the root.
      const lastKey = keys[--size]!;
      const lastEnd = ends[size]!;
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && keys[child + 1]! < keys[child]!) child++;
        if (keys[child]! >= lastKey) break;
        keys[i] = keys[child]!;
        ends[i] = ends[child]!;
        i = child;
      }
      keys[i] = lastKey;
      ends[i] = lastEnd;
      const second = next[at]!;
      // Stale: the part was merged away, or the pair no longer spans exactly two parts.
      if (!alive[at] || second >= n || next[second] !== end) continue;
      alive[second] = 0;
      next[at] = end;
      if (end < n) prev[end] = at;
      parts--;
      if (prev[at]! >= 0) push(prev[at]!);
      push(at);
    }
    return parts;
  }
}

/** A heap key's `at` span: byte offsets below 2^31, so `rank * AT_SPAN + at` orders by rank, then by offset. */
const AT_SPAN = 2 ** 31;

/** tiktoken's encoder file of `encoding`. */
function encoderFile(encoding: BpeEncoding): string {
  return createRequire(import.meta.url).resolve(`tiktoken/encoders/${encoding}.json`);
}

/**
 * Ranks as an open-addressing hash table over one buffer: token bytes, their offsets and ranks,
 * and the slots (token index or -1), found by FNV-1a of the bytes with linear probing.
 */
class RankTable {
  constructor(
    private readonly bytes: Uint8Array,
    private readonly offsets: Uint32Array,
    private readonly ranks: Uint32Array,
    private readonly slots: Int32Array,
  ) {}

  /** The rank of the bytes `text.slice(start, end)` (a Latin-1 string of bytes), or -1. */
  rank(text: string, start: number, end: number): number {
    const mask = this.slots.length - 1;
    for (let slot = fnv1a(text, 0, start, end) & mask; ; slot = (slot + 1) & mask) {
      const token = this.slots[slot]!;
      if (token < 0) return -1;
      const from = this.offsets[token]!;
      if (this.offsets[token + 1]! - from !== end - start) continue;
      let same = true;
      for (let i = 0; same && i < end - start; i++) same = this.bytes[from + i] === text.charCodeAt(start + i);
      if (same) return this.ranks[token]!;
    }
  }
}

/** Rank tables this process has read from disk (an agent process finds its default one in its startup snapshot). */
export const bpeStats = { ranksRead: 0 };

/** The ranks, from the binary copy (written from tiktoken's file when missing or unreadable). */
function loadRanks(encoding: BpeEncoding): RankTable {
  bpeStats.ranksRead++;
  const source = encoderFile(encoding);
  const binary = path.join(path.dirname(source), `.${encoding}.membench.bin`);
  try {
    return readTable(readFileSync(binary));
  } catch {
    const table = toBinary(parseEncoderFile(readFileSync(source, 'utf8')));
    try {
      const temp = `${binary}.${process.pid}.tmp`;
      writeFileSync(temp, table);
      renameSync(temp, binary);
    } catch {
      // A read-only install: every process parses tiktoken's file (slower, same counts).
    }
    return readTable(table);
  }
}

/** tiktoken's format: lines of `! FIRST_RANK` followed by base64 tokens, space-separated, ranked in order. */
function parseEncoderFile(json: string): Map<string, number> {
  const { bpe_ranks: text } = JSON.parse(json) as { bpe_ranks: string };
  const ranks = new Map<string, number>();
  for (const line of text.split('\n')) {
    const parts = line.split(' ');
    if (parts.length < 2) continue;
    const first = Number(parts[1]);
    for (let i = 2; i < parts.length; i++) ranks.set(atob(parts[i]!), first + i - 2);
  }
  return ranks;
}

const MAGIC = 0x4550424d; // "MBPE"
const FORMAT = 1;
const HEADER_WORDS = 5;

/** The table's file: a header (magic, format, tokens n, slots m, bytes), offsets[n + 1], ranks[n], slots[m], then the bytes. */
function toBinary(ranks: Map<string, number>): Buffer {
  const tokens = [...ranks.keys()];
  let slotCount = 1;
  while (slotCount < tokens.length * 2) slotCount *= 2;
  const offsets = new Uint32Array(tokens.length + 1);
  tokens.forEach((token, i) => (offsets[i + 1] = offsets[i]! + token.length));
  const bytes = Buffer.from(tokens.join(''), 'latin1');
  const slots = new Int32Array(slotCount).fill(-1);
  tokens.forEach((token, i) => {
    let slot = fnv1a(token) & (slotCount - 1);
    while (slots[slot]! >= 0) slot = (slot + 1) & (slotCount - 1);
    slots[slot] = i;
  });
  const header = new Uint32Array([MAGIC, FORMAT, tokens.length, slotCount, bytes.length]);
  return Buffer.concat(
    [header, offsets, Uint32Array.from(tokens, (token) => ranks.get(token)!), slots, bytes].map((part) =>
      Buffer.from(part.buffer, part.byteOffset, part.byteLength),
    ),
  );
}

function readTable(file: Buffer): RankTable {
  // Typed arrays need 4-byte alignment; a read buffer may start anywhere in a shared pool.
  const buffer = file.byteOffset % 4 === 0 ? file : Buffer.from(file);
  const words = (at: number, count: number): Uint32Array =>
    new Uint32Array(buffer.buffer, buffer.byteOffset + at * 4, count);
  const [magic, format, n, m, length] = words(0, HEADER_WORDS);
  const size = (HEADER_WORDS + n! + 1 + n! + m!) * 4 + length!;
  if (magic !== MAGIC || format !== FORMAT || size !== buffer.length || (m! & (m! - 1)) !== 0)
    throw new Error('not a rank table');
  const offsets = words(HEADER_WORDS, n! + 1);
  const ranks = words(HEADER_WORDS + n! + 1, n!);
  const slots = new Int32Array(buffer.buffer, buffer.byteOffset + (HEADER_WORDS + 2 * n! + 1) * 4, m!);
  return new RankTable(
    new Uint8Array(buffer.buffer, buffer.byteOffset + size - length!, length!),
    offsets,
    ranks,
    slots,
  );
}
