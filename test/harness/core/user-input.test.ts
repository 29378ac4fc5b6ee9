/** How a refusal points at the name the user may have meant. */
import { describe, expect, it } from 'vitest';
import { describeInput, didYouMean, typoOf } from '../../../harness/core/user-input.js';

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
