/** Word segmentation: the fast path for Latin text gives exactly the segments Intl.Segmenter (ICU) gives. */
import { describe, expect, it, vi } from 'vitest';
import {
  collapseWhitespace,
  datedText,
  hasCjk,
  hasCjkIn,
  holdsTerm,
  icuWords,
  holdsNoWords,
  mayHoldTerm,
  normalizeText,
  SEGMENT_WINDOW_CHARS,
  termSet,
  segmentWindows,
  undatedText,
  wordsOfNormalized,
} from '../../../harness/core/text.js';
import { builtinScenarioNames, loadScenarios } from '../../../harness/scenarios/builtins.js';
import { seededRandom } from '../../../harness/core/random.js';
import { strings } from '../../helpers/strings.js';

/** One of `pieces`, drawn by `next`, followed by a space three times in ten. */
function drawPiece(pieces: readonly string[], next: () => number): string {
  return pieces[Math.floor(next() * pieces.length)]! + (next() < 0.3 ? ' ' : '');
}

/** Seeded random Latin text: every code point 0–127, Latin-1's letters, the curly quotes, the separators of the fast path; letters, digits and the joining marks weighted up. */
function randomLatin(count: number): string[] {
  let alphabet = '';
  for (let code = 0; code < 128; code++) alphabet += String.fromCharCode(code);
  for (let code = 0xc0; code <= 0xff; code++) if (code !== 0xd7 && code !== 0xf7) alphabet += String.fromCharCode(code);
  alphabet += "aeiouxyzAZ0123456789''..,,::;;__  ‘’’–—“”→°¡¢£¤¥¦§©«¬®±¶»¿×÷•†‡‰‚„‹›′←↑↓€✓";
  let seed = 11;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(next() * 20) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
  );
}

/** One to `most` of `kinds`, drawn by `next`, joined by spaces: a random text of chosen pieces. */
const wordsOf = (next: () => number, kinds: readonly string[], most: number): string =>
  Array.from({ length: 1 + Math.floor(next() * most) }, () => kinds[Math.floor(next() * kinds.length)]).join(' ');

describe('wordsOfNormalized', async () => {
  const { scenarios } = await loadScenarios(builtinScenarioNames());
  const builtin = scenarios.flatMap((scenario) => strings(scenario.steps, [])).map(normalizeText);

  it('on Latin text equals Intl.Segmenter: 20,000 random strings and every built-in scenario text', () => {
    const texts = [
      ...randomLatin(20_000),
      ...builtin,
      "don't 3.14 1,000 e.g. a_b _ __ x:y 9;8 a.1 o'clock café — “quoted” don’t",
    ];
    const mismatches = texts
      .filter((text) => wordsOfNormalized(text).join('\u0001') !== icuWords(text).join('\u0001'))
      .slice(0, 5);
    expect(mismatches).toEqual([]);
    expect(wordsOfNormalized("don't 3.14 1,000 e.g. a_b _ __ x:y a.1")).toEqual([
      "don't",
      '3.14',
      '1,000',
      'e.g',
      'a_b',
      '__',
      'x:y',
      'a',
      '1',
    ]);
  });

  it('cuts Latin text without ICU (its first use costs ~20 ms in every process)', () => {
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      const english = builtin.filter((text) => !/\p{Script=Han}/u.test(text));
      expect(english.length).toBeGreaterThan(100);
      for (const text of english) wordsOfNormalized(text);
      expect(segment).not.toHaveBeenCalled();
      wordsOfNormalized('我家只有一口铸铁锅');
      expect(segment).toHaveBeenCalledTimes(1);
    } finally {
      segment.mockRestore();
    }
  });

  it('leaves text beyond ASCII to ICU (its dictionary segments Chinese)', () => {
    const chinese = builtin.filter((text) => /\p{Script=Han}/u.test(text));
    expect(chinese.length).toBeGreaterThan(10);
    for (const text of chinese) expect(wordsOfNormalized(text)).toEqual(icuWords(text));
    expect(wordsOfNormalized('我家只有一口铸铁锅')).toContain('我家'); // a dictionary word, not single characters
  });
});

describe('wordsOfNormalized on mixed text', () => {
  // Latin words and marks beside what is off the fast path: symbols, emoji sequences, other scripts, marks that attach, white space ICU knows and \s does not.
  const pieces = [
    ...['abc', 'Hello', "don't", '3.14', '1,000', 'e.g.', 'café', 'x', '7', '_', '.', ',', ':', '’', '“', '—', '#'],
    ...[' ', '  ', '\n', '\u0085', '\u00a0'],
    ...['•', '€', '×', '·', '½', '²', '™', '…', 'ﬁ', '\u200b', '\u200d', '\ufe0f', '\u0301', 'a\u0308', 'e\u0301'],
    ...[
      '😀',
      '👍🏽',
      '🏽',
      '👨\u200d👩\u200d👧',
      '🇫🇷',
      '1️⃣',
      'ł',
      'Łódź',
      'и',
      'мир',
      'Ω',
      '红烧肉',
      '素食',
      'ไทย',
      '한국어',
      'ｶﾀｶﾅ',
    ],
  ];
  const next = seededRandom(9);
  const randomMixed = (pieceCount: number): string =>
    normalizeText(Array.from({ length: pieceCount }, () => drawPiece(pieces, next)).join(''));

  it('equals what ICU gave the whole text: 20,000 random short texts, long ones, and cut-free stretches longer than a window', () => {
    const texts = [
      ...Array.from({ length: 20_000 }, () => randomMixed(1 + Math.floor(next() * 12))),
      ...Array.from({ length: 40 }, () => randomMixed(1500)),
      // A Latin word longer than a window beside a symbol: icuWords cuts it inside, as the whole text always was.
      `${'x'.repeat(3000)} Ω end`,
      `word ${'ω'.repeat(3000)} end`,
      `${'abc '.repeat(10)}${'ωa'.repeat(1500)} x`,
      `${'abc '.repeat(600)}ωω ${'ω'.repeat(3000)} end ${'ωe\u0301'.repeat(1000)} ł`,
      `start ł ${'ab'.repeat(1500)}`,
      `${'红烧肉'.repeat(1000)} word ł`,
      'cafeł naïve Łódź,mir',
    ];
    const mismatches = texts
      .filter((text) => wordsOfNormalized(text).join('\u0001') !== icuWords(text).join('\u0001'))
      .slice(0, 3);
    expect(mismatches).toEqual([]);
    expect(wordsOfNormalized('• cafeł and 5€ 😀 x')).toEqual(['cafeł', 'and', '5', 'x']);
    // A word longer than a window in Latin text is whole, as it always was there (ICU's windows cut it).
    expect(wordsOfNormalized(`${'x'.repeat(3000)} • end`)).toEqual(['x'.repeat(3000), 'end']);
    // A hundred thousand words and more beside one emoji: appended one by one (a spread of them overflowed the stack).
    expect(wordsOfNormalized(`${'a '.repeat(150_000)}😀`)).toHaveLength(150_000);
  });

  it('hands ICU only the stretches around what is off the fast path', () => {
    const english = 'My sister planted tomatoes in the raised beds, and I moved my savings. '.repeat(30);
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      const words = wordsOfNormalized(normalizeText(`Ω ${english}in łódź 😀 ${english}`));
      const handed = segment.mock.calls.map(([input]) => input);
      // Characters off the fast path close together go in one call.
      expect(handed).toEqual(['ω ', 'łódź 😀 ']);
      expect(words).toHaveLength(2 * 13 * 30 + 3);
    } finally {
      segment.mockRestore();
    }
  });
});

describe('text without words', () => {
  const wordLike = (text: string): string[] =>
    [...new Intl.Segmenter('und', { granularity: 'word' }).segment(text)]
      .filter((segment) => segment.isWordLike)
      .map((segment) => segment.segment);

  it('is only what ICU finds no word-like segment in: every character it admits, alone and in emoji sequences', () => {
    const admitted: string[] = [];
    for (let code = 0; code <= 0x10ffff; code++) {
      if (code >= 0xd800 && code <= 0xdfff) continue;
      const char = String.fromCodePoint(code);
      if (holdsNoWords(char)) admitted.push(char);
    }
    expect(admitted.length).toBeGreaterThan(2500);
    expect(admitted.filter((char) => wordLike(char).length > 0)).toEqual([]);
    expect(wordLike(admitted.join(''))).toEqual([]);
    for (const text of ['👍🏽', '👨\u200d👩\u200d👧', '❤\ufe0f', '😀 🎉\n👍🏽']) {
      expect(holdsNoWords(text)).toBe(true);
      expect(wordLike(text)).toEqual([]);
    }
    for (const text of ['😀a', '1️⃣', '🇫🇷', '_', '😀中']) expect(holdsNoWords(text)).toBe(false);
  });

  it('in windows of a longer text skips ICU there and keeps the words elsewhere', () => {
    const text = `${'word '.repeat(1000)}${'😀🎉👍🏽'.repeat(10_000)} tail words`;
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      const words = icuWords(text);
      const handed = segment.mock.calls.reduce((sum, [input]) => sum + input.length, 0);
      expect(handed).toBeLessThanOrEqual(5000 + 2 * SEGMENT_WINDOW_CHARS);
      segment.mockRestore();
      expect(words).toEqual([...Array.from({ length: 1000 }, () => 'word'), 'tail', 'words']);
    } finally {
      segment.mockRestore();
    }
  });
});

describe('icuWords on long texts', () => {
  /** Whole-text Intl.Segmenter words: what the windows must reproduce. */
  const wholeWords = (text: string): string[] =>
    [...new Intl.Segmenter('und', { granularity: 'word' }).segment(text)]
      .filter((segment) => segment.isWordLike)
      .map((segment) => segment.segment);
  // Pieces that join across white space or attach to what precedes them: marks, ZWJ sequences, skin tones, flags, CR LF.
  const pieces = [
    '红烧肉',
    '素食',
    ' ',
    '  ',
    '\n',
    '\r\n',
    'café',
    'e\u0301',
    '👍🏽',
    '👨\u200d👩\u200d👧',
    '🇫🇷',
    'abc',
    '12.5',
    "don't",
    '\u200b',
    '\ufeff',
    'ｶﾀｶﾅ',
    '\u0301',
    '🏽',
    '\u200d',
    'ไทย',
    '한국어',
    '\u00a0',
    'x',
  ];
  let seed = 5;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;

  it("segments a text with white space window by window into exactly the whole text's words", () => {
    for (let trial = 0; trial < 6; trial++) {
      let text = '';
      while (text.length < 3 * SEGMENT_WINDOW_CHARS) text += drawPiece(pieces, next);
      expect(segmentWindows(text).length).toBeGreaterThan(2);
      expect(icuWords(text)).toEqual(wholeWords(text));
    }
  });

  it('hands ICU no more than a window at once, whatever the text (its cost per segment grows with its input)', () => {
    const segment = vi.spyOn(Intl.Segmenter.prototype, 'segment');
    try {
      const unspaced = '我家只有一口铸铁锅'.repeat(5000);
      const emoji = '😀🎉👍🏽'.repeat(10_000);
      for (const text of [unspaced, emoji, `${'word '.repeat(20_000)}`]) icuWords(text);
      const inputs = segment.mock.calls.map(([input]) => input.length);
      expect(Math.max(...inputs)).toBeLessThanOrEqual(SEGMENT_WINDOW_CHARS);
      // Emoji alone hold no word: they never reach ICU.
      expect(inputs.reduce((sum, length) => sum + length, 0)).toBe(45_000 + 100_000);
    } finally {
      segment.mockRestore();
    }
    // A cut without white space never splits a surrogate pair or an emoji from its modifier.
    for (const end of segmentWindows('😀🎉👍🏽'.repeat(10_000)))
      expect(['😀', '🎉', '👍', undefined]).toContain([...'😀🎉👍🏽'.repeat(10_000).slice(end)][0]);
  });
});

describe('CJK text inside a value', () => {
  it("finds it in any string or key of a scenario's steps, as a test of their JSON text would", async () => {
    const { scenarios } = await loadScenarios(builtinScenarioNames());
    const asJson = (value: unknown): boolean => hasCjk(JSON.stringify(value) ?? '');
    for (const { steps } of scenarios) {
      expect(hasCjkIn(steps)).toBe(asJson(steps));
      for (const step of steps) expect(hasCjkIn(step)).toBe(asJson(step));
    }
    expect(scenarios.some(({ steps }) => hasCjkIn(steps))).toBe(true);
    expect(scenarios.some(({ steps }) => !hasCjkIn(steps))).toBe(true);
    const nested = { kind: 'user', text: 'plain', meta: [{ notes: ['still plain', { deep: '我家只有一口锅' }] }] };
    expect(hasCjkIn(nested)).toBe(true);
    expect(hasCjkIn({ kind: 'user', labels: { 偏好: 1 } })).toBe(true);
    for (const plain of [null, undefined, 42, true, 'plain', [], {}, { at: new Date(0) }, ['a', { b: 'c' }]])
      expect(hasCjkIn(plain)).toBe(false);
  });
});

describe('dated messages', () => {
  it('note each instant as its own, whatever instant came before, and undate back to the text', () => {
    const instants = ['2023-05-08T13:56:00Z', '2023-05-08', 'not a date', '2024-02-29T00:05:00Z'];
    const noted = ['[8 May 2023, 13:56] hi', '[8 May 2023] hi', 'hi', '[29 February 2024, 00:05] hi'];
    // In order, reversed and repeated: a note kept from the instant before must never leak into the next.
    for (const order of [
      [0, 1, 2, 3],
      [3, 2, 1, 0],
      [0, 0, 2, 2, 1, 3, 3, 0],
    ])
      for (const at of order) {
        expect(datedText('hi', instants[at])).toBe(noted[at]);
        expect(undatedText(noted[at]!, instants[at])).toBe('hi');
      }
    expect(datedText('hi', undefined)).toBe('hi');
  });
});

describe('normal form', () => {
  /** Whitespace of every kind (Unicode's \s: spaces, line breaks, no-break spaces, the BOM), and text between. */
  const PIECES = [
    ' ',
    '  ',
    '\t',
    '\n',
    '\r\n',
    '\u00a0',
    '\u3000',
    '\u2028',
    '\ufeff',
    '\u200b',
    'a',
    'Σ',
    'İ',
    'ﬁ',
    'Ａ',
    '中',
    'é',
  ];

  it('collapses every run of whitespace to one space and trims, as replace(/\\s+/gu) and trim() do', () => {
    const next = seededRandom(17);
    for (let i = 0; i < 20_000; i++) {
      const text = Array.from(
        { length: Math.floor(next() * 10) },
        () => PIECES[Math.floor(next() * PIECES.length)],
      ).join('');
      expect(collapseWhitespace(text)).toBe(text.replace(/\s+/gu, ' ').trim());
      // The root locale's lower case (final sigma, dotted capital I), NFKC (ligatures, full-width letters).
      expect(normalizeText(text)).toBe(text.normalize('NFKC').toLocaleLowerCase('und').replace(/\s+/gu, ' ').trim());
    }
    const long = `${PIECES.join('ΑΣ ').repeat(200)} `;
    expect(long.length).toBeGreaterThan(2048); // past normalizeText's memo: the same form
    expect(normalizeText(long)).toBe(long.normalize('NFKC').toLocaleLowerCase('und').replace(/\s+/gu, ' ').trim());
  });

  it('mayHoldTerm says yes to every term of a text, its normal form a piece of it or not', () => {
    const next = seededRandom(23);
    const kinds = [...PIECES, 'İ\u0316', '红烧肉', '素食', 'Hello', '4711', 'ΑΣ', 'ﬁsh', 'e\u0301', '\u0345'];
    let holds = 0;
    let notOwnForm = 0;
    for (let i = 0; i < 5000; i++) {
      const text = wordsOf(next, kinds, 14);
      if (normalizeText(text) !== text) notOwnForm++;
      for (const term of termSet(text)) {
        expect(mayHoldTerm(text, term)).toBe(true);
        holds++;
      }
      expect(mayHoldTerm(text, 'zzqx')).toBe(false);
    }
    expect(holds).toBeGreaterThan(5000);
    expect(notOwnForm).toBeGreaterThan(100);
    // A text that is not its own normal form holds terms that are not pieces of it as it stands.
    const odd = 'İ\u0316 word';
    const missing = [...termSet(odd)].filter((term) => !odd.includes(term));
    expect(missing.length).toBeGreaterThan(0);
    for (const term of missing) expect(mayHoldTerm(odd, term)).toBe(true);
  });

  it('holdsTerm answers as a term of the text, or as CJK text, without segmenting where it cannot change that', () => {
    const next = seededRandom(29);
    // A CJK compatibility ideograph (U+F900) is another character in normal form.
    const kinds = [...PIECES, 'İ\u0316', '红烧肉', '素食', '\uf900肉', 'Hello', '4711', 'ΑΣ', 'ﬁsh', 'e\u0301'];
    const candidates = [
      '红烧',
      '烧肉',
      '素食',
      '肉',
      '\u8c48肉',
      'hello',
      'fish',
      'ﬁsh',
      '4711',
      'ας',
      'i\u0307\u0316',
      'zzqx',
    ];
    let held = 0;
    for (let i = 0; i < 3000; i++) {
      const raw = wordsOf(next, kinds, 10);
      // Normalised, as the recall metrics' messages are, and as it came.
      const text = i % 2 === 0 ? normalizeText(raw) : raw;
      for (const term of [...termSet(text), ...candidates]) {
        const expected = termSet(text).has(term) || (hasCjk(term) && text.includes(term));
        expect(holdsTerm(text, term)).toBe(expected);
        if (expected) held++;
      }
    }
    expect(held).toBeGreaterThan(3000);
  });
});
