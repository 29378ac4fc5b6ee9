/**
 * How the `bm25` strategy cuts text into index terms, Chinese included. FTS5's own tokenizers
 * split on spaces and punctuation, which leaves a Chinese sentence as one "word"; so text is
 * segmented here, in JavaScript, and the index receives the terms joined by spaces. Queries go
 * through the same function, so a query term and a stored term meet exactly when they were cut
 * alike. Every segmenter normalises first (NFKC, case fold) and drops stop words.
 *
 * - `jieba`: runs of Han characters cut by @node-rs/jieba in search mode (long words also yield
 *   their dictionary sub-words), with the dictionary that ships inside the npm package; the text
 *   between them (Latin, digits, kana, Hangul) cut at Unicode word boundaries like `intl`. A run
 *   longer than HAN_PIECE_CHARS is segmented in pieces of that length. The
 *   dictionary is loaded once per process, on the first Han character: about 0.2 s of CPU that an
 *   English-only store never pays; a crash cell's agent processes (one per crash) are handed
 *   jieba's cuts of the scenario's text instead (`jiebaCutsOf`, `preloadJieba`) and load it only
 *   for a piece outside them.
 * - `bigram`: overlapping CJK character bigrams (no dictionary at all) plus Intl.Segmenter words
 *   for other scripts.
 * - `intl`: Intl.Segmenter words for every script (ICU's dictionary), as the rest of membench
 *   segments for matching.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  cjkBigrams,
  hasCjk,
  isContentWord,
  isStopWord,
  normalizeText,
  words,
  wordsOfNormalized,
} from '../../harness/core/text.js';
import type { JiebaCut, PreloadHint } from '../types.js';

/** The `tokenizer` knob's values. */
export const LEXICAL_TOKENIZERS = ['jieba', 'bigram', 'intl'] as const;
export type LexicalTokenizer = (typeof LEXICAL_TOKENIZERS)[number];

/** Turns text into index terms (duplicates kept: term frequency counts). */
export type Segmenter = (text: string) => string[];

const WORD_LIKE = /[\p{L}\p{N}]/u;

interface JiebaInstance {
  cutForSearch(sentence: string, hmm?: boolean): string[];
}

let jieba: JiebaInstance | undefined;

/**
 * The jieba segmenter with its bundled dictionary (about 0.1-0.2 s to load, once per process).
 * The dictionary file is read directly: the package's `@node-rs/jieba/dict` module also reads
 * `idf.txt` (keyword extraction's table, as large again), which segmentation never uses.
 */
function loadJieba(): JiebaInstance {
  if (!jieba) {
    const require = createRequire(import.meta.url);
    const { Jieba } = require('@node-rs/jieba') as { Jieba: { withDict(dict: Uint8Array): JiebaInstance } };
    jieba = Jieba.withDict(readFileSync(require.resolve('@node-rs/jieba/dict.txt')));
  }
  return jieba;
}

/**
 * Han pieces cut elsewhere, handed over in a preload hint (jiebaCutsOf in the process that runs
 * the cell): a piece found here is not cut again, so a process whose Chinese is all here never
 * loads the dictionary. Only handed-over pieces are kept (a long replay's own cuts are not).
 */
const handedCuts = new Map<string, readonly string[]>();

/**
 * Readies jieba for the cell's Chinese text: the lexical strategies' `preload`, so a spare waiting
 * for a crash has it ready. Given the cell's cuts (`jiebaCuts`), it keeps them instead of loading
 * the dictionary (~0.17 s of CPU a process); a piece outside them still loads it, on first use.
 */
export function preloadJieba(hint: PreloadHint): void {
  if (hint.jiebaCuts) {
    // A reused process serves cells one after another: it keeps only the cuts of the cell at hand.
    handedCuts.clear();
    for (const [piece, terms] of hint.jiebaCuts) handedCuts.set(piece, terms);
  } else if (hint.cjk) loadJieba();
}

/** Texts whose Han characters, all told, are past this are not cut ahead (the hint would outweigh the dictionary). */
export const MAX_HANDED_CUT_CHARS = 100_000;

/**
 * jieba's cuts of every Han piece of `texts`, normalised as the segmenter normalises them (for
 * `preloadShared`): `{ jiebaCuts }`, or nothing when the texts hold no Han text or more than
 * MAX_HANDED_CUT_CHARS of it. Loads the dictionary in this process.
 */
export function jiebaCutsOf(texts: readonly string[]): { jiebaCuts?: JiebaCut[] } {
  const pieces = new Set<string>();
  let chars = 0;
  for (const text of texts)
    for (const run of normalizeText(text).matchAll(HAN_RUN))
      for (const piece of hanPieces(run[0])) {
        if (pieces.has(piece)) continue;
        chars += piece.length;
        if (chars > MAX_HANDED_CUT_CHARS) return {};
        pieces.add(piece);
      }
  if (pieces.size === 0) return {};
  return { jiebaCuts: [...pieces].map((piece): JiebaCut => [piece, loadJieba().cutForSearch(piece, true)]) };
}

/** Word-like and not a stop word; a lone digit stays ("locker 7"), a lone Latin letter goes. */
const keep = (term: string): boolean => WORD_LIKE.test(term) && (isContentWord(term) || /^\p{N}$/u.test(term));

/**
 * `keep` for a term jieba cut from a run of Han characters, with the same answers and, for the
 * common term (one starting with a CJK unified ideograph, a letter that is neither Latin nor a
 * digit), a set lookup instead of three regular expressions: jieba returns about one term per
 * character of unspaced Chinese, and `keep` was a fifth of its time there.
 */
const keepHan = (term: string): boolean => {
  const first = term.charCodeAt(0);
  return first >= 0x4e00 && first <= 0x9fff ? !isStopWord(term) : keep(term);
};

const HAN_RUN = /\p{Script=Han}+/gu;

/**
 * The longest piece of a Han run handed to jieba in one call. A longer run (no punctuation, space
 * or digit for thousands of characters: never a sentence) is cut into pieces of this length, each
 * segmented alone: one call over 100,000 characters costs jieba about twice the CPU of fifty calls
 * over 2,000 (measured on @node-rs/jieba 2), while a word spanning a cut is cut in two. Runs up to
 * this length, which is every run of ordinary Chinese text, are segmented whole, as before.
 */
export const HAN_PIECE_CHARS = 2000;

/** A Han run in pieces of at most HAN_PIECE_CHARS UTF-16 units, never between the halves of a surrogate pair. */
export function hanPieces(run: string): string[] {
  if (run.length <= HAN_PIECE_CHARS) return [run];
  const pieces: string[] = [];
  let from = 0;
  while (from < run.length) {
    let to = Math.min(from + HAN_PIECE_CHARS, run.length);
    const code = run.charCodeAt(to);
    if (to < run.length && code >= 0xdc00 && code <= 0xdfff) to--;
    pieces.push(run.slice(from, to));
    from = to;
  }
  return pieces;
}

/** Calls into jieba this process made and the longest text one was given, in UTF-16 units: tests read them to prove a long run is cut into pieces. */
export const jiebaCalls = { calls: 0, longestChars: 0 };

function cutHan(piece: string): readonly string[] {
  const handed = handedCuts.get(piece);
  if (handed) return handed;
  jiebaCalls.calls++;
  jiebaCalls.longestChars = Math.max(jiebaCalls.longestChars, piece.length);
  return loadJieba().cutForSearch(piece, true);
}

/**
 * The jieba terms of a text joined by spaces (no term holds one), built piece by piece: the terms
 * of unspaced Chinese are about one string per character, and joining each piece's few thousand,
 * not collecting 100,000 into one array first, halves the JavaScript side's cost of a long run.
 */
function jiebaJoined(text: string): string {
  const normalized = normalizeText(text);
  const parts: string[] = [];
  const add = (terms: string[]): void => {
    if (terms.length > 0) parts.push(terms.join(' '));
  };
  let from = 0;
  for (const run of normalized.matchAll(HAN_RUN)) {
    if (run.index > from) add(wordsOfNormalized(normalized.slice(from, run.index)).filter(keep));
    for (const piece of hanPieces(run[0])) add(cutHan(piece).filter(keepHan));
    from = run.index + run[0].length;
  }
  if (from < normalized.length) add(wordsOfNormalized(from === 0 ? normalized : normalized.slice(from)).filter(keep));
  return parts.join(' ');
}

function jiebaTerms(text: string): string[] {
  const joined = jiebaJoined(text);
  return joined === '' ? [] : joined.split(' ');
}

function bigramTerms(text: string): string[] {
  const latin = words(text).filter((word) => !hasCjk(word) && keep(word));
  return [...latin, ...cjkBigrams(text)];
}

function intlTerms(text: string): string[] {
  return words(text).filter(keep);
}

const SEGMENTERS: Record<LexicalTokenizer, Segmenter> = { jieba: jiebaTerms, bigram: bigramTerms, intl: intlTerms };

/** The segmenter a `tokenizer` knob names. */
export function segmenterFor(tokenizer: LexicalTokenizer): Segmenter {
  return SEGMENTERS[tokenizer];
}

/** Each segmenter's terms joined by spaces, what an index stores (jieba's built piece by piece: jiebaJoined). */
const JOINED: Record<LexicalTokenizer, (text: string) => string> = {
  jieba: jiebaJoined,
  bigram: (text) => SEGMENTERS.bigram(text).join(' '),
  intl: (text) => SEGMENTERS.intl(text).join(' '),
};

/** The segmenter a `tokenizer` knob names, its terms joined by spaces: what an index stores. */
export function joinedSegmenterFor(tokenizer: LexicalTokenizer): (text: string) => string {
  return JOINED[tokenizer];
}
