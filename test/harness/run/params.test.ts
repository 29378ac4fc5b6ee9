import { describe, expect, it } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { expandStrategies } from '../../../harness/run/params.js';
import { builtinStrategies } from '../../../strategies/index.js';

function refusal(params: readonly string[]): string {
  try {
    expandStrategies(builtinStrategies, params);
  } catch (error) {
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as MembenchError).exitCode).toBe(2);
    return (error as Error).message;
  }
  throw new Error(`expandStrategies accepted ${params.join(' ')}`);
}

describe('--param values', () => {
  it('quotes a value that is not a number, in words, not as zod says it ("received NaN")', () => {
    expect(refusal(['window.k=a'])).toBe('--param window.k=a: expected a number, got "a"');
  });

  it('names every bad value of a list, not only the first', () => {
    expect(refusal(['window.k=a,2,b'])).toBe(
      '--param window.k=a: expected a number, got "a"; --param window.k=b: expected a number, got "b"',
    );
  });

  it('says a number too large to hold (1e309, read as Infinity) is not finite', () => {
    expect(refusal(['window.k=1e309'])).toBe('--param window.k=1e309: expected a finite number');
    expect(refusal(['window.k=-1e309'])).toBe('--param window.k=-1e309: expected a finite number');
  });

  it('keeps the schema bound wording for a number out of range', () => {
    expect(refusal(['window.k=0'])).toBe('--param window.k=0: Too small: expected number to be >=1');
  });
});
