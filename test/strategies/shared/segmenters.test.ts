/**
 * The jieba segmenter's terms, against the rule it documents spelled out here: Han runs cut by
 * jieba's search mode, the text between them cut at word boundaries, and a term kept when it is
 * word-like and a content word (or a lone digit). Its fast path for Han terms must give the same
 * terms, stop words and the Han script's non-letters included.
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../harness/core/random.js';
import { isContentWord, normalizeText, wordsOfNormalized } from '../../../harness/core/text.js';
import { segmenterFor } from '../../../strategies/shared/segmenters.js';

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
    out.push(...jieba.cutForSearch(run[0], true).filter(keepRule));
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
