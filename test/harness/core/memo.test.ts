import { describe, expect, it } from 'vitest';
import { boundedMemo } from '../../../harness/core/memo.js';

describe('boundedMemo', () => {
  it('computes each key once, and keeps at most its budget of characters (cleared when full, then computed again)', () => {
    const calls: string[] = [];
    const length = boundedMemo(6, (key) => (calls.push(key), key.length));
    expect([length('a'), length('bb'), length('a'), length('bb')]).toEqual([1, 2, 1, 2]);
    expect(calls).toEqual(['a', 'bb']);
    length('ccc'); // 1 + 2 + 3 characters: full
    expect(length('a')).toBe(1);
    expect(calls).toEqual(['a', 'bb', 'ccc']);
    length('dddd'); // over the budget: cleared first
    expect(length('a')).toBe(1);
    expect(calls).toEqual(['a', 'bb', 'ccc', 'dddd', 'a']);
  });

  it('counts characters, not entries: two long keys do not fit where two short ones would', () => {
    const calls: string[] = [];
    const upper = boundedMemo(10, (key) => (calls.push(key), key.toUpperCase()));
    upper('aaaaaa');
    upper('bbbbbb'); // 12 characters: the first key is gone
    upper('aaaaaa');
    expect(calls).toEqual(['aaaaaa', 'bbbbbb', 'aaaaaa']);
  });

  it('computes a key longer than the whole budget every time, and keeps what it holds', () => {
    const calls: string[] = [];
    const length = boundedMemo(4, (key) => (calls.push(key), key.length));
    length('ab');
    expect([length('abcdefgh'), length('abcdefgh'), length('ab')]).toEqual([8, 8, 2]);
    expect(calls).toEqual(['ab', 'abcdefgh', 'abcdefgh']);
  });
});
