/**
 * The jieba segmenter's terms, against the rule it documents spelled out here: Han runs cut by
 * jieba's search mode, the text between them cut at word boundaries, and a term kept when it is
 * word-like and a content word (or a lone digit). Its fast path for Han terms must give the same
 * terms, stop words and the Han script's non-letters included. A Han run longer than
 * HAN_PIECE_CHARS reaches jieba in pieces; ordinary text has no such run.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../harness/core/random.js';
import { isContentWord, normalizeText, wordsOfNormalized } from '../../../harness/core/text.js';
import {
  HAN_PIECE_CHARS,
  hanPieces,
  jiebaCalls,
  jiebaCutsOf,
  joinedSegmenterFor,
  LEXICAL_TOKENIZERS,
  MAX_HANDED_CUT_CHARS,
  preloadJieba,
  segmenterFor,
} from '../../../strategies/shared/segmenters.js';

const require = createRequire(import.meta.url);
const { Jieba } = require('@node-rs/jieba') as {
  Jieba: { withDict(dict: Uint8Array): { cutForSearch(text: string, hmm: boolean): string[] } };
};
const { dict } = require('@node-rs/jieba/dict') as { dict: Uint8Array };
const jieba = Jieba.withDict(dict);

const keepRule = (term: string): boolean =>
  /[\p{L}\p{N}]/u.test(term) && (isContentWord(term) || /^\p{N}$/u.test(term));

function expected(text: string): string[] {
  const normalized = normalizeText(text);
  const out: string[] = [];
  let from = 0;
  for (const run of normalized.matchAll(/\p{Script=Han}+/gu)) {
    out.push(...wordsOfNormalized(normalized.slice(from, run.index)).filter(keepRule));
    // A run longer than HAN_PIECE_CHARS goes to jieba in consecutive pieces of that length (no surrogate pair here).
    for (let at = 0; at < run[0].length; at += HAN_PIECE_CHARS)
      out.push(...jieba.cutForSearch(run[0].slice(at, at + HAN_PIECE_CHARS), true).filter(keepRule));
    from = run.index + run[0].length;
  }
  return [...out, ...wordsOfNormalized(normalized.slice(from)).filter(keepRule)];
}

/** Long Chinese with stop words, Han numerals and iteration marks, radicals, Latin words and digits among it. */
function chinese(seed: number, chars: number): string {
  const next = seededRandom(seed);
  const pieces = ['的', '了', '一个', '〇', '々', '⺀', '⺁', '〻', '我们', '公园', ' kayak ', '7', 'Tacoma', '，'];
  let text = '';
  while (text.length < chars)
    text +=
      next() < 0.2
        ? pieces[Math.floor(next() * pieces.length)]
        : String.fromCharCode(0x4e00 + Math.floor(next() * 3000));
  return text;
}

describe('jieba terms', () => {
  it.each([1, 2, 3])('are the documented rule’s on long mixed Chinese (seed %i)', (seed) => {
    const text = chinese(seed, 30_000);
    const terms = segmenterFor('jieba')(text);
    expect(terms).toEqual(expected(text));
    expect(terms).not.toContain('的');
  });
});

describe('long Han runs', () => {
  const unspaced = (seed: number, chars: number): string => {
    const next = seededRandom(seed);
    return Array.from({ length: chars }, () => String.fromCharCode(0x4e00 + Math.floor(next() * 3000))).join('');
  };

  it('reach jieba in pieces of at most HAN_PIECE_CHARS, and give the rule’s terms', () => {
    const text = unspaced(4, 100_000);
    const before = { ...jiebaCalls };
    jiebaCalls.longestChars = 0;
    const terms = segmenterFor('jieba')(text);
    expect(jiebaCalls.calls - before.calls).toBe(Math.ceil(100_000 / HAN_PIECE_CHARS));
    expect(jiebaCalls.longestChars).toBe(HAN_PIECE_CHARS);
    expect(terms).toEqual(expected(text));
  });

  it('are never cut between the halves of a surrogate pair', () => {
    // One BMP character, then characters of CJK Extension B (two UTF-16 units each): a cut every HAN_PIECE_CHARS units falls inside a pair.
    const run = `中${'𠀀𠀁𠀂'.repeat(HAN_PIECE_CHARS)}`;
    const pieces = hanPieces(run);
    expect(pieces.join('')).toBe(run);
    expect(pieces.length).toBeGreaterThan(1);
    for (const piece of pieces) {
      expect(piece.length).toBeLessThanOrEqual(HAN_PIECE_CHARS);
      expect(piece).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/u);
    }
  });

  it('are joined by single spaces for the index, a piece with no kept term leaving no gap', () => {
    for (const text of ['kayak 的 7', '的了', `${unspaced(5, 3000)}，的，Tacoma 公园`, chinese(6, 5000)]) {
      const joined = joinedSegmenterFor('jieba')(text);
      expect(joined).toBe(segmenterFor('jieba')(text).join(' '));
      expect(joined).toBe(expected(text).join(' '));
    }
  });

  it("of every tokenizer are its segmenter's terms joined by single spaces", () => {
    const text = `kayak 的 7 ${unspaced(5, 300)}，Tacoma 公园 savings`;
    for (const tokenizer of LEXICAL_TOKENIZERS)
      expect(joinedSegmenterFor(tokenizer)(text)).toBe(segmenterFor(tokenizer)(text).join(' '));
  });
});

describe('cuts handed over in a preload hint', () => {
  it("are jieba's own cuts of each Han piece once, normalised as the segmenter normalises; none for text without Han characters or past the bound", () => {
    const { jiebaCuts } = jiebaCutsOf([
      '我家只有一口铸铁锅。',
      'Dinner at 7, 我家只有一口铸铁锅',
      'ＡＢＣ 晚饭七点'.normalize('NFKC'),
    ]);
    expect(jiebaCuts!.map(([piece]) => piece)).toEqual(['我家只有一口铸铁锅', '晚饭七点']);
    for (const [piece, terms] of jiebaCuts!) expect(terms).toEqual(jieba.cutForSearch(piece, true));
    expect(jiebaCutsOf(['plain English only'])).toEqual({});
    // Distinct pieces of HAN_PIECE_CHARS each, one more than the bound holds.
    const pieces = Math.floor(MAX_HANDED_CUT_CHARS / HAN_PIECE_CHARS) + 1;
    const past = Array.from({ length: pieces }, (_, i) => String.fromCharCode(0x4e00 + i).repeat(HAN_PIECE_CHARS));
    expect(jiebaCutsOf(past)).toEqual({});
    expect(jiebaCutsOf(past.slice(1)).jiebaCuts).toHaveLength(pieces - 1);
  });

  it('are used instead of jieba for the pieces they hold, with the same terms; a piece outside them still reaches jieba', () => {
    const covered = '我舅舅的航班是星期二早上';
    const text = `Remember: ${covered}，thanks`;
    const alone = expected(text);
    preloadJieba({ cjk: true, ...jiebaCutsOf([text]) });
    const before = jiebaCalls.calls;
    expect(segmenterFor('jieba')(text)).toEqual(alone);
    expect(jiebaCalls.calls).toBe(before);
    expect(segmenterFor('jieba')('我奶奶住在杭州西湖边')).toEqual(expected('我奶奶住在杭州西湖边'));
    expect(jiebaCalls.calls).toBe(before + 1);
  });

  it("are the cell's at hand only: a later hint's cuts replace an earlier one's (a reused process serves another cell)", () => {
    preloadJieba({ cjk: true, ...jiebaCutsOf(['我舅舅的车是蓝色的']) });
    preloadJieba({ cjk: true, ...jiebaCutsOf(['我姑姑家的狗叫豆豆']) });
    const before = jiebaCalls.calls;
    segmenterFor('jieba')('我姑姑家的狗叫豆豆');
    expect(jiebaCalls.calls).toBe(before);
    segmenterFor('jieba')('我舅舅的车是蓝色的');
    expect(jiebaCalls.calls).toBe(before + 1);
  });
});
