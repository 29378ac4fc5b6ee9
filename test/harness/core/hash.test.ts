// membench's one string hash: FNV-1a 32-bit, checked against the published test vectors.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { fnv1a, fnv1aCodePoints, JsonHash } from '../../../harness/core/hash.js';

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

describe('JsonHash', () => {
  const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
  const viaJsonHash = (value: unknown): JsonHash => {
    const hash = new JsonHash(createHash('sha256'));
    hash.json(value);
    return hash;
  };

  it("hashes exactly JSON.stringify's bytes, whatever the value holds", () => {
    class Point {
      constructor(readonly x: number) {}
    }
    const values: unknown[] = [
      { name: 'plain', steps: [{ kind: 'user', user: 'hello', at: '2023-01-01', skip: undefined, fn: () => 1 }] },
      { quote: 'say "hi" \\ back\nslash\t\u0001\u001f\u007f', cjk: '红烧肉', emoji: '😀👍🏽', lone: '\ud800 x \udc00' },
      [1, -0, 0.1, 1e21, 1e-7, Number.NaN, Number.POSITIVE_INFINITY, -1.2345678901234567e-308, undefined, () => 1],
      { nested: [[[true, false, null]], {}, []], date: new Date(0), point: new Point(3), map: new Map([[1, 2]]) },
      { 'key "quoted"': 'é', '': '', ['x'.repeat(100_000)]: 'y'.repeat(200_000), 3: 'numeric key first' },
      'just a string',
      42,
    ];
    for (const value of values) {
      const hash = viaJsonHash(value);
      expect(hash.flush().digest('hex')).toBe(sha(JSON.stringify(value)));
      expect(hash.bytes).toBe(Buffer.byteLength(JSON.stringify(value)));
    }
  });

  it('writes plain data itself: only strings with something to escape go through JSON.stringify', () => {
    const plain = viaJsonHash({
      steps: Array.from({ length: 50 }, (_, i) => ({ kind: 'user', user: `message ${i}` })),
    });
    expect(plain.stringified).toBe(0);
    const escaped = viaJsonHash({ steps: [{ user: 'a "quote"' }, { user: 'none' }, { user: 'line\nbreak' }] });
    expect(escaped.stringified).toBe(2);
  });
});
