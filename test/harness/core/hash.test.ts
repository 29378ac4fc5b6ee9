// membench's one string hash: FNV-1a 32-bit, checked against the published test vectors.
import { describe, expect, it } from 'vitest';
import { fnv1a, fnv1aCodePoints } from '../../../harness/core/hash.js';

describe('fnv1a', () => {
  it('matches the reference vectors, unsigned', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
  });

  it('hashes a range of the text as the text itself, and a basis changes it', () => {
    expect(fnv1a('xxfoobaryy', 0, 2, 8)).toBe(fnv1a('foobar'));
    expect(fnv1a('foobar', 42)).not.toBe(fnv1a('foobar'));
  });

  it('over code points, an astral character is one step (over code units, two)', () => {
    expect(fnv1aCodePoints('foobar')).toBe(fnv1a('foobar'));
    expect(fnv1aCodePoints('😀')).not.toBe(fnv1a('😀'));
  });
});
