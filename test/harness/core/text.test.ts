/** Word segmentation: the fast path for Latin text gives exactly the segments Intl.Segmenter (ICU) gives. */
import { describe, expect, it, vi } from 'vitest';
import { icuWords, normalizeText, wordsOfNormalized } from '../../../harness/core/text.js';
import { builtinScenarioNames, loadScenarios } from '../../../harness/scenarios/builtins.js';
import { strings } from '../../helpers/strings.js';

/** Seeded random Latin text: every code point 0–127, Latin-1's letters, the curly quotes, dashes, → and °; letters, digits and the joining marks weighted up. */
function randomLatin(count: number): string[] {
  let alphabet = '';
  for (let code = 0; code < 128; code++) alphabet += String.fromCharCode(code);
  for (let code = 0xc0; code <= 0xff; code++) if (code !== 0xd7 && code !== 0xf7) alphabet += String.fromCharCode(code);
  alphabet += "aeiouxyzAZ0123456789''..,,::;;__  ‘’’–—“”→°";
  let seed = 11;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(next() * 20) }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
  );
}

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
