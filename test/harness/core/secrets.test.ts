import { describe, expect, it } from 'vitest';
import { checkSecretLength, maskSecrets, registerSecret } from '../../../harness/core/secrets.js';

const KEY = 'sk-test-Registered/01+23456789';

describe('the secret filter', () => {
  it('masks nothing while no key is registered (an offline run)', () => {
    const text = 'increase the pork belly; durability none; Authorization: Bearer abc.def-123';
    expect(maskSecrets(text)).toBe(text);
  });

  it('masks a registered key as given, in any letter case, URL-encoded and base64-encoded', () => {
    registerSecret(KEY);
    const variants = [
      KEY,
      KEY.toUpperCase(),
      KEY.toLowerCase(),
      encodeURIComponent(KEY),
      encodeURIComponent(KEY).toLowerCase(),
      Buffer.from(KEY).toString('base64'),
      Buffer.from(KEY).toString('base64url'),
    ];
    for (const variant of variants)
      expect(maskSecrets(`the key is ${variant}.`)).toMatch(/^the key is [^.]*\*\*\*[^.]*\.$/u);
    for (const variant of variants) expect(maskSecrets(`a ${variant} b`)).not.toContain(variant);
    // Inside a longer base64 string at each alignment: a Basic credential `user:KEY`.
    for (const user of ['u', 'us', 'use']) {
      const basic = Buffer.from(`${user}:${KEY}`).toString('base64');
      expect(maskSecrets(`Authorization: Basic ${basic}`)).toContain('***');
      expect(maskSecrets(`Authorization: Basic ${basic}`)).not.toContain(basic.slice(4, -4));
    }
  });

  it('touches only the key: the words around it, JSON structure and other credentials stay', () => {
    registerSecret(KEY);
    expect(maskSecrets(JSON.stringify({ answer: `echo ${KEY}`, durability: 'none' }))).toBe(
      '{"answer":"echo ***","durability":"none"}',
    );
    expect(maskSecrets('the bearer of bad news; Authorization: Bearer other-token-123')).toBe(
      'the bearer of bad news; Authorization: Bearer other-token-123',
    );
  });

  it('registers no key shorter than 8 characters, and refuses one for a live endpoint (exit 2)', () => {
    for (const short of ['none', 'pork', 'sync', 'sk-1234']) {
      registerSecret(short);
      expect(maskSecrets(`pork belly, sync mode, none left, sk-1234`)).toBe(
        'pork belly, sync mode, none left, sk-1234',
      );
      expect(() => checkSecretLength(short, 'OPENAI_API_KEY')).toThrow(
        expect.objectContaining({ exitCode: 2, message: expect.stringContaining('unset OPENAI_API_KEY') }),
      );
    }
    expect(() => checkSecretLength('sk-12345', '--api-key')).not.toThrow();
  });
});
