import { describe, expect, it } from 'vitest';
import { errorMessage } from '../../../harness/core/errors.js';

describe('errorMessage', () => {
  it("says an Error's message and a string as they are", () => {
    expect(errorMessage(new TypeError('x is not a function'))).toBe('x is not a function');
    expect(errorMessage('save broke')).toBe('save broke');
    // An error from another realm (a vm context, a worker's structured clone) is no instanceof Error.
    expect(errorMessage({ name: 'Error', message: 'from elsewhere' })).toBe('from elsewhere');
  });

  it('shows anything else thrown as data, said to be no Error (String() made "[object Object]" of it)', () => {
    expect(errorMessage({ code: 42 })).toBe('{"code":42} (thrown, not an Error)');
    expect(errorMessage(undefined)).toBe('undefined (thrown, not an Error)');
    expect(errorMessage(7)).toBe('7 (thrown, not an Error)');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(errorMessage(circular)).toBe('[object Object] (thrown, not an Error)');
    expect(errorMessage({ text: 'x'.repeat(300) })).toMatch(/^\{"text":"x{191}… \(thrown, not an Error\)$/u);
  });
});
