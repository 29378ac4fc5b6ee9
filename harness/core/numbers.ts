/** Bounds on numeric settings (flags, config keys, options): one check and one wording for all of them. */
import { z } from 'zod';
import { MembenchError } from './errors.js';

/** What a numeric setting may be: a whole number or not, within an inclusive range. */
export interface NumberRange {
  whole: boolean;
  min: number;
  max: number;
  /** How messages name the range when the default wording ("a whole number from 1 to 10") says it badly. */
  words?: string;
}

/** Seeds are hashed as 32 bits, so larger ones would collide: one range for `run`, `tune` and the generator. */
export const SEED_RANGE: NumberRange = { whole: true, min: 0, max: 0xffff_ffff };
/** A share (recall thresholds, judge thresholds): 0 to 1 inclusive. */
export const SHARE_RANGE: NumberRange = { whole: false, min: 0, max: 1, words: 'a share between 0 and 1' };

/**
 * A numeric flag as typed (yargs gives `--seed` with no value as '', and `abc` as NaN, which would
 * hide what was typed): undefined when absent, the number when it fits `range`, else a bad-input error
 * naming the flag and the text (`--seed abc: expected a whole number from 0 to 4294967295`).
 */
export function parseNumberFlag(
  flag: string,
  raw: string | number | undefined,
  range: NumberRange,
): number | undefined {
  if (raw === undefined) return undefined;
  const text = String(raw).trim();
  if (text === '')
    throw new MembenchError('INVALID_ARGUMENT', `${flag} needs a value: expected ${describeRange(range)}`);
  const value = decimalNumber(text);
  if (!inRange(value, range))
    throw new MembenchError('INVALID_ARGUMENT', `${flag} ${text}: ${outsideRange(value, range)}`);
  return value;
}

/** A range with no top but the largest exact number, which its words (`>= 1`) do not name. */
const openEnded = (range: NumberRange): boolean => range.max === Number.MAX_SAFE_INTEGER && range.words === undefined;

/** A number in decimal notation (`12`, `-0.5`, `.5`, `1e3`), as a flag's value is typed. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/iu;

/** `text` read as a number in decimal notation, else NaN: Number() also reads 0x2, 0b10 and 0o7 (as 2, 2, 7), and '' as 0. */
export function decimalNumber(text: string): number {
  const trimmed = text.trim();
  return DECIMAL.test(trimmed) ? Number(trimmed) : Number.NaN;
}

/**
 * Why a number is refused: `expected a whole number from 1 to 10`; above an open-ended range (`>= 1`,
 * whose words would not say it has a top), that it is too large and the largest accepted.
 */
export function outsideRange(value: unknown, range: NumberRange): string {
  return typeof value === 'number' && Number.isFinite(value) && value > range.max && openEnded(range)
    ? `too large: the largest accepted is ${range.max}`
    : `expected ${describeRange(range)}`;
}

/**
 * The longest live model answer kept, in characters (about 25 000 tokens). An endpoint that loops
 * or streams garbage (20 MB per call) would otherwise fill every memory, results.json and the
 * cache; the provider cuts a longer answer here, marks it, and reports count the cut answers.
 */
export const MAX_ANSWER_CHARS = 100_000;

/** "a whole number from 1 to 100000", "a share between 0 and 1"... */
export function describeRange(range: NumberRange): string {
  if (range.words) return range.words;
  const kind = range.whole ? 'a whole number' : 'a number';
  return range.max === Number.MAX_SAFE_INTEGER
    ? `${kind} >= ${range.min}`
    : `${kind} from ${range.min} to ${range.max}`;
}

/** Whether `value` is a finite number inside the range. */
export function inRange(value: unknown, range: NumberRange): value is number {
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!range.whole || Number.isInteger(value)) &&
    value >= range.min &&
    value <= range.max
  );
}

/**
 * `value` if it fits the range; otherwise a bad-input error naming the setting as the user wrote
 * it (`--stretch`): `--stretch 0: expected a whole number from 1 to 100000`. NaN (what the
 * argument parser makes of `abc`) and infinities (`1e400`) are named as "not a number".
 */
export function checkNumber(name: string, value: unknown, range: NumberRange): number {
  if (inRange(value, range)) return value;
  const shown =
    typeof value !== 'number' || Number.isFinite(value)
      ? ` ${String(value)}`
      : Number.isNaN(value)
        ? ' is not a number'
        : ' is not finite';
  throw new MembenchError('INVALID_ARGUMENT', `${name}${shown}: ${outsideRange(value, range)}`);
}

/**
 * Why `text` is not a number a numeric option accepts, for options whose range is their own schema's
 * (a strategy's knobs): `expected a number, got "a"`, or `expected a finite number` for `1e309`
 * (which `Number` reads as Infinity).
 */
export function notANumber(text: string): string {
  const value = Number(text.trim());
  return Number.isNaN(value) || text.trim() === ''
    ? `expected a number, got ${JSON.stringify(text)}`
    : 'expected a finite number';
}

/** The same range as a zod schema, for config files (the loader locates the failing key). */
export function rangeSchema(range: NumberRange): z.ZodNumber {
  const message = `expected ${describeRange(range)}`;
  const number = z
    .number({ error: message })
    .min(range.min, message)
    .max(range.max, openEnded(range) ? `too large: the largest accepted is ${range.max}` : message);
  return range.whole ? number.int(message) : number;
}
