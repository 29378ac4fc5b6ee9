/**
 * The checks of compare's thresholds a program passes `compareRuns` (and the flags' shared rule for
 * `latencyFalseAlarm`). Apart from compare-types.ts, which the CLI loads at start for the flags'
 * defaults and which must load nothing.
 */
import { MembenchError } from '../harness/core/errors.js';
import { checkNumber } from '../harness/core/numbers.js';
import { didYouMean } from '../harness/core/user-input.js';
import { DEFAULT_THRESHOLDS, THRESHOLD_RANGES, type CompareThresholds } from './compare-types.js';

/** Refuses `latencyFalseAlarm` outside (0, 1), naming it as `name`. */
export function checkFalseAlarm(name: string, value: number, given: unknown = value): number {
  if (value <= 0 || value >= 1)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${name} ${String(given)}: expected a share between 0 and 1, e.g. 0.01`,
    );
  return value;
}

/** Refuses thresholds a program passes `compareRuns` that are no object, of a field it does not have, of the wrong type or below their minimum. */
export function checkThresholds(overrides: unknown): asserts overrides is Partial<CompareThresholds> {
  const refuse = (message: string): MembenchError => new MembenchError('INVALID_ARGUMENT', message);
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides))
    throw refuse(
      `compareRuns thresholds: expected an object of CompareThresholds fields, got ${JSON.stringify(overrides)}`,
    );
  for (const [key, value] of Object.entries(overrides)) {
    if (value === undefined) continue;
    const name = `compareRuns thresholds.${key}`;
    if (key in THRESHOLD_RANGES) {
      if (typeof value !== 'number') throw refuse(`${name} ${JSON.stringify(value)}: expected a number`);
      checkNumber(name, value, { whole: false, ...THRESHOLD_RANGES[key as keyof typeof THRESHOLD_RANGES] });
      if (key === 'latencyFalseAlarm') checkFalseAlarm(name, value);
    } else if (key === 'latency') {
      if (typeof value !== 'boolean' && value !== 'same-machine')
        throw refuse(`${name} ${JSON.stringify(value)}: expected true, false or "same-machine"`);
    } else if (key === 'allowMissing') {
      if (typeof value !== 'boolean') throw refuse(`${name} ${JSON.stringify(value)}: expected true or false`);
    } else {
      const known = Object.keys(DEFAULT_THRESHOLDS);
      throw refuse(
        `compareRuns: unknown threshold "${key}"${didYouMean(key, known)}: CompareThresholds has ${known.join(', ')}`,
      );
    }
  }
}
