/** How a refusal points at the name the user may have meant. */
import { describe, expect, it } from 'vitest';
import { describeInput, didYouMean, shownValue, typoOf } from '../../../harness/core/user-input.js';

describe('didYouMean', () => {
  it('points at a name a typo away: a letter missing, changed or two swapped', () => {
    expect(didYouMean('bufer', ['buffer', 'window'])).toBe(' (did you mean buffer?)');
    expect(didYouMean('recipes-ch', ['recipes-en', 'recipes-zh'])).toBe(' (did you mean recipes-zh?)');
    expect(typoOf('steps', ['stpes', 'name'])).toBe('stpes');
  });

  it('points at nothing far off, nor at the name itself', () => {
    expect(didYouMean('nope', ['buffer', 'window', 'mem0'])).toBe('');
    expect(didYouMean('xyz', ['xab'])).toBe('');
    expect(didYouMean('buffer', ['buffer'])).toBe('');
    expect(didYouMean('buffer', [])).toBe('');
  });
});

describe('describeInput', () => {
  it('shows a value as a message names it: strings quoted and cut at 40 characters, lists and mappings by kind', () => {
    expect(describeInput('abc')).toBe('"abc"');
    expect(describeInput('x'.repeat(50))).toBe(`"${'x'.repeat(40)}…"`);
    expect(describeInput(5)).toBe('5');
    expect(describeInput(null)).toBe('null');
    expect(describeInput([1])).toBe('a list');
    expect(describeInput({ a: 1 })).toBe('a mapping');
  });
});

describe('cutting a value a message quotes', () => {
  // 𠀀 (U+20000, CJK Extension B) is two UTF-16 units: a cut by units fell between them.
  const rare = '𠀀';

  it('never cuts inside a surrogate pair: a Chinese value ends on a whole character, not U+FFFD or a \\ud840 escape', () => {
    // 37 hanzi and five rare ones: 42 characters, 47 UTF-16 units; the 40th unit was half of the second rare one.
    const category = `${'提取类别'.repeat(9)}提${rare.repeat(5)}`;
    expect(describeInput(category)).toBe(`"${'提取类别'.repeat(9)}提${rare.repeat(3)}…"`);
    expect(shownValue(`${'家'.repeat(59)}${rare.repeat(3)}`)).toBe(`"${'家'.repeat(59)}${rare}…"`);
    expect(shownValue([`${'家'.repeat(57)}${rare}`])).toBe(`["${'家'.repeat(57)}${rare}…`);
    // A value short enough in characters is shown whole, however many units it takes.
    expect(describeInput(`${'菜'.repeat(39)}${rare}`)).toBe(`"${'菜'.repeat(39)}${rare}"`);
  });

  it('never splits a grapheme: an emoji of several code points stays whole or goes whole', () => {
    const family = '👨‍👩‍👧‍👦';
    const shown = shownValue(`${'a'.repeat(58)}${family}tail`);
    expect(shown).toBe(`"${'a'.repeat(58)}…"`);
  });
});
