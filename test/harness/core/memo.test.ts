import { describe, expect, it } from 'vitest';
import { boundedMemo } from '../../../harness/core/memo.js';
import { heapAfterGc } from '../../helpers/heap.js';

describe('boundedMemo', () => {
  it('computes each key once, in two generations of half its budget: a key used in the older one is kept, one unused for a generation goes', () => {
    const calls: string[] = [];
    const length = boundedMemo(8, (key) => (calls.push(key), key.length));
    expect([length('a'), length('bb'), length('a'), length('bb')]).toEqual([1, 2, 1, 2]);
    expect(calls).toEqual(['a', 'bb']);
    length('ccc'); // 3 + 3 characters: over half the budget, 'a' and 'bb' become the older generation
    expect(length('a')).toBe(1); // found in the older generation, kept again in the recent one
    expect(calls).toEqual(['a', 'bb', 'ccc']);
    length('dddd'); // the recent generation is full: 'ccc' and 'a' become the older one, 'bb' goes
    expect([length('a'), length('bb')]).toEqual([1, 2]);
    expect(calls).toEqual(['a', 'bb', 'ccc', 'dddd', 'bb']);
  });

  it('counts characters, not entries: two long keys do not fit where two short ones would', () => {
    const calls: string[] = [];
    const upper = boundedMemo(20, (key) => (calls.push(key), key.toUpperCase()));
    upper('aaaaaa');
    upper('bbbbbb'); // 12 characters: a generation is full, the first key is in the older one
    upper('cccccc'); // and now gone
    upper('aaaaaa');
    expect(calls).toEqual(['aaaaaa', 'bbbbbb', 'cccccc', 'aaaaaa']);
    const short = boundedMemo(20, (key) => (calls.push(key), key.toUpperCase()));
    for (const key of ['aa', 'bb', 'cc', 'aa']) short(key);
    expect(calls.slice(4)).toEqual(['aa', 'bb', 'cc']);
  });

  it('computes a key longer than half the budget every time, and keeps what it holds', () => {
    const calls: string[] = [];
    const length = boundedMemo(8, (key) => (calls.push(key), key.length));
    length('ab');
    expect([length('abcde'), length('abcde'), length('ab')]).toEqual([5, 5, 2]);
    expect(calls).toEqual(['ab', 'abcde', 'abcde']);
  });
});

describe('what a memo keeps of its keys', () => {
  it("keeps a key cut out of a large string as a copy of its own, not the large string (a scenario file's text)", () => {
    const memo = boundedMemo(1_000_000, (key) => key.length);
    const base = heapAfterGc();
    let file: string | undefined = `${'x'.repeat(20)}\n`.repeat(2_000_000); // 42 MB of one-byte text
    for (let at = 0; at < 10; at++) memo(file.slice(at * 21, at * 21 + 20 + at)); // slices: views of `file`
    expect(heapAfterGc() - base).toBeGreaterThan(40_000_000);
    file = undefined;
    expect(heapAfterGc() - base).toBeLessThan(4_000_000);
    expect(memo('x'.repeat(20))).toBe(20);
  });
});
