import { describe, expect, it } from 'vitest';
import { parseShard } from '../../../harness/results/shard.js';

describe('parseShard', () => {
  it('reads I/N and refuses what is no shard in --shard words', () => {
    expect(parseShard(' 2 / 3 ')).toEqual({ index: 2, count: 3 });
    expect(parseShard('1/1')).toEqual({ index: 1, count: 1 });
    for (const text of ['0/2', '3/2', '1/0', '1.5/2', '1/99999999999999999999', '2/9007199254740993'])
      expect(() => parseShard(text)).toThrow(`--shard ${text}: expected I/N with 1 <= I <= N`);
  });
});
