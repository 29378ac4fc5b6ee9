// bpe.ts must count exactly what tiktoken counts: every built-in text, the generated suite, and
// seeded random Unicode (whitespace classes, contractions, marks, CJK runs, emoji) in both encodings,
// short and long (a long text is counted by its sentences and lines: the parts must add up).
import { readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { get_encoding } from 'tiktoken';
import { describe, expect, it } from 'vitest';
import { BpeCounter, type BpeEncoding } from '../../../harness/core/bpe.js';
import { builtinScenarioNames, loadScenarios } from '../../../harness/scenarios/builtins.js';
import { strings } from '../../helpers/strings.js';

const root = path.resolve(import.meta.dirname, '../../..');

/** Seeded random strings built from the pieces tiktoken's split pattern treats specially. */
function randomTexts(count: number, maxPieces = 30, seedValue = 7): string[] {
  const pieces = [
    ' ',
    '  ',
    '\n',
    '\r\n',
    '\t',
    "'s",
    "'LL",
    "'Re",
    'a',
    'Z',
    'é',
    'ß',
    'ǅ',
    '\u0301',
    'Ω',
    'ﬀ',
    '中',
    '文',
    '铸铁锅',
    '😀',
    '👍🏽',
    '\u0085',
    '\u00a0',
    '\ufeff',
    '\u3000',
    '1',
    '234',
    '!',
    '?',
    '/',
    '...',
    'ا',
    'क',
    '्',
    'Hello',
    'WORLD',
    'naïve',
  ];
  let seed = seedValue;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(next() * maxPieces) }, () => pieces[Math.floor(next() * pieces.length)]).join(
      '',
    ),
  );
}

/** Long seeded texts: random runs joined by what sits at the cuts of a long text (sentence ends, line breaks) and next to them. */
function longTexts(count: number): string[] {
  const joins = [
    '. ',
    '.\n',
    '\n',
    '! ',
    '? ',
    ' ',
    '',
    '.  ',
    '.\n\n',
    '\n ',
    '!\n/',
    '?\r\nA',
    '.\u00a0',
    '. \n',
    '\n1',
    '\n中',
  ];
  const runs = randomTexts(count * 12, 40, 11);
  return Array.from({ length: count }, (_, index) =>
    runs
      .slice(index * 12, index * 12 + 12)
      .reduce((text, run, at) => `${text}${joins[(index + at) % joins.length]}${run}`),
  );
}

/**
 * Unspaced runs of Chinese, Hangul and emoji: each one piece of thousands of bytes, merged through a
 * heap thousands deep with many stale and tied candidates. Not longer: bpe.ts has no branch by piece
 * length, and tiktoken merges a piece in n² (pieces of tens of kilobytes took it 20 s).
 */
function longPieces(): string[] {
  let seed = 11;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const drawn = (from: number, span: number, length: number): string =>
    Array.from({ length }, () => String.fromCodePoint(from + Math.floor(next() * span))).join('');
  return [
    drawn(0x4e00, 3000, 2_000),
    drawn(0x4e00, 40, 2_000), // common characters: many two-character tokens
    '我们今天去公园散步然后回家吃饭'.repeat(150),
    drawn(0x1f600, 80, 800),
    drawn(0xac00, 500, 1_000),
  ];
}

describe('bpe.ts counts', async () => {
  const { scenarios } = await loadScenarios(builtinScenarioNames());
  const texts = [
    ...scenarios.flatMap((scenario) => strings(scenario.steps, [])),
    ...readdirSync(path.join(root, 'scenarios'))
      .filter((file) => file.endsWith('.yaml'))
      .map((file) => readFileSync(path.join(root, 'scenarios', file), 'utf8')),
    readFileSync(path.join(root, 'README.md'), 'utf8'),
    ...randomTexts(5000),
    ...longTexts(600),
    '铸'.repeat(1000) + '锅'.repeat(1000), // one piece of 6,000 bytes
    ...longPieces(),
    '',
  ];

  for (const encoding of ['cl100k_base', 'o200k_base'] as const satisfies readonly BpeEncoding[]) {
    it(`equal tiktoken's encode_ordinary in ${encoding} on ${texts.length} texts`, () => {
      const tiktoken = get_encoding(encoding);
      const counter = BpeCounter.load(encoding);
      const mismatches = texts
        .filter((text) => counter.count(text) !== tiktoken.encode_ordinary(text).length)
        .slice(0, 5);
      tiktoken.free();
      expect(mismatches).toEqual([]);
      expect(texts.length).toBeGreaterThan(5000);
      expect(texts.filter((text) => text.length >= 256).length).toBeGreaterThan(100); // counted by their parts
    });
  }

  it('rebuild a damaged binary copy of the ranks from tiktoken’s file, with the same counts', () => {
    const source = createRequire(import.meta.url).resolve('tiktoken/encoders/cl100k_base.json');
    const binary = path.join(path.dirname(source), '.cl100k_base.membench.bin');
    const text = 'Nora is visiting on March 3rd; 她喜欢柠檬挞。';
    const expected = BpeCounter.load('cl100k_base').count(text);
    writeFileSync(binary, readFileSync(binary).subarray(0, 1000)); // torn
    expect(BpeCounter.load('cl100k_base').count(text)).toBe(expected);
    expect(readFileSync(binary).length).toBeGreaterThan(100_000); // written again in full
  });
});
