/** Numeric flags as typed: decimal notation only, and a number past an open-ended range said to be too large. */
import { describe, expect, it } from 'vitest';
import { checkNumber, parseNumberFlag, rangeSchema, type NumberRange } from '../../../harness/core/numbers.js';

const AT_LEAST_ONE: NumberRange = { whole: true, min: 1, max: Number.MAX_SAFE_INTEGER };
const ONE_TO_TEN: NumberRange = { whole: true, min: 1, max: 10 };

describe('parseNumberFlag', () => {
  it('reads decimal notation', () => {
    expect(parseNumberFlag('--limit', '2', AT_LEAST_ONE)).toBe(2);
    expect(parseNumberFlag('--limit', ' 12 ', AT_LEAST_ONE)).toBe(12);
    expect(parseNumberFlag('--limit', '1e3', AT_LEAST_ONE)).toBe(1000);
    expect(parseNumberFlag('--share', '.5', { whole: false, min: 0, max: 1 })).toBe(0.5);
    expect(parseNumberFlag('--limit', 3, AT_LEAST_ONE)).toBe(3);
  });

  it('refuses hexadecimal, binary and octal notation, which Number() would read as a whole number', () => {
    for (const text of ['0x2', '0b10', '0o7', '0X10'])
      expect(() => parseNumberFlag('--limit', text, AT_LEAST_ONE)).toThrow(
        `--limit ${text}: expected a whole number >= 1`,
      );
  });

  it('says a whole number past an open-ended range is too large, naming the largest accepted', () => {
    expect(() => parseNumberFlag('--limit', '99999999999999999999', AT_LEAST_ONE)).toThrow(
      '--limit 99999999999999999999: too large: the largest accepted is 9007199254740991',
    );
    expect(parseNumberFlag('--limit', '9007199254740991', AT_LEAST_ONE)).toBe(9_007_199_254_740_991);
    // A range that names its top says it as before.
    expect(() => parseNumberFlag('--k', '11', ONE_TO_TEN)).toThrow('--k 11: expected a whole number from 1 to 10');
    expect(() => parseNumberFlag('--limit', '0', AT_LEAST_ONE)).toThrow('--limit 0: expected a whole number >= 1');
  });
});

describe('checkNumber and rangeSchema (options from programs and config files)', () => {
  it('say too large the same way', () => {
    expect(() => checkNumber('--limit', 1e20, AT_LEAST_ONE)).toThrow(
      '--limit 100000000000000000000: too large: the largest accepted is 9007199254740991',
    );
    expect(() => checkNumber('--limit', Number.POSITIVE_INFINITY, AT_LEAST_ONE)).toThrow(
      '--limit is not finite: expected a whole number >= 1',
    );
    expect(rangeSchema(AT_LEAST_ONE).safeParse(1e20).error?.issues[0]?.message).toBe(
      'too large: the largest accepted is 9007199254740991',
    );
    expect(rangeSchema(ONE_TO_TEN).safeParse(11).error?.issues[0]?.message).toBe(
      'expected a whole number from 1 to 10',
    );
  });
});
