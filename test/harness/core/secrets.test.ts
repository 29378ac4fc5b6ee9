import { describe, expect, it } from 'vitest';
import { maskSecrets, maskSecretsDeep, registerSecret } from '../../../harness/core/secrets.js';

const KEY = 'sk-test-registered-0123456789';
registerSecret(KEY);

describe('the secret filter', () => {
  it('masks a registered key wherever it appears, and any Authorization value or bearer token', () => {
    expect(maskSecrets(`the key is ${KEY}.`)).toBe('the key is ***.');
    expect(maskSecrets('Authorization: Bearer abc.def-123')).toBe('Authorization: Bearer ***');
    expect(maskSecrets('authorization=Basic dXNlcjpwYXNz')).toBe('authorization=Basic ***');
    expect(maskSecrets('sent with bearer tok_9f8e7d6c5b4a')).toBe('sent with bearer ***');
    expect(maskSecrets('the bearer of bad news, the bearer interesting')).toBe(
      'the bearer of bad news, the bearer interesting',
    );
    expect(maskSecrets('nothing secret here')).toBe('nothing secret here');
  });

  it('keeps JSON text JSON', () => {
    const json = JSON.stringify({
      answer: 'echo: "Authorization": "Bearer x-1\\"2" and \\n more',
      headers: { authorization: 'Bearer other-token-123' },
    });
    const masked = maskSecrets(json);
    expect(() => JSON.parse(masked)).not.toThrow();
    expect(masked).not.toContain('other-token-123');
  });

  it('masks every string of a value, keys included, leaving numbers and undefined alone', () => {
    expect(maskSecretsDeep({ n: 3, none: undefined, list: [`a ${KEY}`], [KEY]: true })).toEqual({
      n: 3,
      none: undefined,
      list: ['a ***'],
      '***': true,
    });
  });

  it('returns what holds nothing to mask as it is, and copies only the parts that change', () => {
    const clean = { cells: [{ id: 'a', turns: [{ text: 'hello' }] }], header: { seed: 1 } };
    expect(maskSecretsDeep(clean)).toBe(clean);
    const dirty = { cells: [{ id: 'a', turns: [{ text: `key ${KEY}` }] }], header: { seed: 1 } };
    const masked = maskSecretsDeep(dirty);
    expect(masked).not.toBe(dirty);
    expect(masked.cells[0]!.turns[0]!.text).toBe('key ***');
    expect(dirty.cells[0]!.turns[0]!.text).toBe(`key ${KEY}`);
    expect(masked.header).toBe(dirty.header);
  });
});
