import { describe, expect, it } from 'vitest';
import { boundedMemo } from '../../../harness/core/memo.js';

describe('boundedMemo', () => {
  it('computes each key once, and holds at most its limit (cleared when full, then computed again)', () => {
    const calls: string[] = [];
    const length = boundedMemo(3, (key) => (calls.push(key), key.length));
    expect([length('a'), length('bb'), length('a'), length('bb')]).toEqual([1, 2, 1, 2]);
    expect(calls).toEqual(['a', 'bb']);
    length('ccc'); // the third key fills it
    length('dddd'); // the fourth clears it first
    expect(length('a')).toBe(1);
    expect(calls).toEqual(['a', 'bb', 'ccc', 'dddd', 'a']);
  });
});
