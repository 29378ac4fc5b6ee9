/**
 * What `runBenchmark` checks of the options a program hands it, read from the settings table
 * (harness/run/settings.ts), which the flags and the config file's schema check too: every field's
 * type and range, the hooks, and no field it does not know. A value outside them is bad input
 * (INVALID_ARGUMENT, exit 2 in the CLI), before any cell runs. The CLI's own values have passed their
 * flag's or config key's check already, so these words name the option as a program writes it
 * (`cellTimeoutMs`), not a flag.
 */
import { isDeepStrictEqual } from 'node:util';
import { MembenchError } from '../core/errors.js';
import { checkNumber, type NumberRange } from '../core/numbers.js';
import { didYouMean, shownValue } from '../core/user-input.js';
import type { RunOptions } from './options.js';
import {
  optionTarget,
  settingEntries,
  SETTINGS,
  type SettingKey,
  type Settings,
  type SettingSpec,
} from './settings.js';

/** Ranges by setting key: the table's rows that have bounds. */
export const RUN_LIMITS = Object.fromEntries(
  settingEntries().flatMap(([key, spec]) => (spec.bounds ? [[key, spec.bounds]] : [])),
) as { [K in SettingKey as Settings[K] extends { bounds: NumberRange } ? K : never]: NumberRange };

/** The settings rows behind RunOptions' own fields, and behind the fields of `live`, by field name. */
const OPTION_ROWS = new Map<string, SettingSpec>();
const LIVE_ROWS = new Map<string, SettingSpec>();
for (const [key, spec] of settingEntries(SETTINGS)) {
  const target = optionTarget(spec, key);
  if (target?.live) LIVE_ROWS.set(target.live, spec);
  else if (target?.option) OPTION_ROWS.set(target.option, spec);
}

/** `live.temperature` has no row (no flag or config key sets it): the OpenAI API's range. */
const TEMPERATURE: NumberRange = { whole: false, min: 0, max: 2 };

const isFunction = (value: unknown): boolean => typeof value === 'function';

/** The hooks of RunOptions (RunHooks), each with what it must be. */
const HOOKS: Record<string, { expected: string; holds: (value: unknown) => boolean }> = {
  store: {
    expected: 'an object with open and save functions (a CellStore)',
    holds: (value) =>
      typeof value === 'object' &&
      value !== null &&
      isFunction((value as { open?: unknown }).open) &&
      isFunction((value as { save?: unknown }).save),
  },
  signal: { expected: 'an AbortSignal', holds: (value) => value instanceof AbortSignal },
  onProgress: { expected: 'a function', holds: isFunction },
  onWarning: { expected: 'a function', holds: isFunction },
  now: { expected: 'a function returning a Date', holds: isFunction },
};

const refuse = (message: string): MembenchError => new MembenchError('INVALID_ARGUMENT', message);

/** Refuses `name`'s value unless its row's schema takes it as it is (a config file's shorthand, `"buffer"` for `["buffer"]`, is not the option's type). */
function checkField(name: string, value: unknown, spec: SettingSpec): void {
  if (spec.bounds) {
    const scale = spec.scale ?? 1;
    const range = { ...spec.bounds, min: spec.bounds.min * scale, max: spec.bounds.max * scale };
    if (typeof value !== 'number') throw refuse(`${name} ${shownValue(value)}: expected a number`);
    checkNumber(name, value, range);
    return;
  }
  const parsed = spec.schema.safeParse(value);
  if (!parsed.success)
    throw refuse(`${name} ${shownValue(value)}: ${parsed.error.issues[0]?.message ?? 'not accepted'}`);
  if (!isDeepStrictEqual(parsed.data, value))
    throw refuse(`${name} ${shownValue(value)}: write it as ${shownValue(parsed.data)}`);
}

/** Refuses options that are no object, a field of the wrong type or range, a hook that is not one, and a field RunOptions does not have. */
export function checkRunOptions(options: unknown): asserts options is RunOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw refuse(`runBenchmark takes an object of options (RunOptions), not ${shownValue(options)}`);
  const known = [...OPTION_ROWS.keys(), ...Object.keys(HOOKS), 'live'];
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined) continue;
    const row = OPTION_ROWS.get(name);
    const hook = HOOKS[name];
    if (row) checkField(name, value, row);
    else if (hook) {
      if (!hook.holds(value)) throw refuse(`${name} ${shownValue(value)}: expected ${hook.expected}`);
    } else if (name === 'live') checkLive(value);
    else throw refuse(`unknown option "${name}"${didYouMean(name, known)}: RunOptions has ${known.join(', ')}`);
  }
  checkDatasetOnly(options as Record<string, unknown>);
}

/** `live`: an object of LiveProviderSettings fields. */
function checkLive(live: unknown): void {
  if (typeof live !== 'object' || live === null || Array.isArray(live))
    throw refuse(
      `live ${shownValue(live)}: expected an object (baseUrl, apiKey, concurrency, timeoutMs, maxRetries, temperature)`,
    );
  const known = [...LIVE_ROWS.keys(), 'temperature'];
  for (const [name, value] of Object.entries(live)) {
    if (value === undefined) continue;
    const row = LIVE_ROWS.get(name);
    if (row) checkField(`live.${name}`, value, row);
    else if (name === 'temperature') {
      if (typeof value !== 'number') throw refuse(`live.temperature ${shownValue(value)}: expected a number`);
      checkNumber('live.temperature', value, TEMPERATURE);
    } else throw refuse(`unknown option "live.${name}"${didYouMean(name, known)}: live has ${known.join(', ')}`);
  }
}

/** The settings that act on a dataset's import only (`datasetOnly` in the table), by RunOptions field. */
const DATASET_ONLY = settingEntries(SETTINGS).flatMap(([key, spec]) =>
  spec.datasetOnly ? [{ field: optionTarget(spec, key)?.option ?? key, flag: spec.flag?.name ?? key }] : [],
);

/** A setting that acts on a dataset's import, given without a dataset, acts on nothing: refused, named as its flag. */
function checkDatasetOnly(options: Record<string, unknown>): void {
  if ((options.datasets as unknown[] | undefined)?.length) return;
  for (const { field, flag } of DATASET_ONLY) {
    const value = options[field];
    if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    const shown = Array.isArray(value) ? value.join(' ') : String(value);
    throw refuse(
      `--${flag} ${shown} applies to dataset imports only: name a dataset (--dataset locomo:FILE), or drop --${flag}`,
    );
  }
}
