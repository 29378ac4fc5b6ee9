/**
 * The bounds of every numeric run setting, read from the settings table (harness/run/settings.ts),
 * which the flags and the config file's schema check too: flags, config keys and library callers
 * meet the same limits, worded the same way. A value outside them is bad input, exit 2, before any
 * cell runs.
 */
import { MembenchError } from '../core/errors.js';
import { checkNumber, type NumberRange } from '../core/numbers.js';
import type { RunOptions } from './options.js';
import { optionTarget, settingEntries, SETTINGS, type SettingKey, type Settings } from './settings.js';

/** Ranges by setting key: the table's rows that have bounds. */
export const RUN_LIMITS = Object.fromEntries(
  settingEntries().flatMap(([key, spec]) => (spec.bounds ? [[key, spec.bounds]] : [])),
) as { [K in SettingKey as Settings[K] extends { bounds: NumberRange } ? K : never]: NumberRange };

/** Refuses out-of-range numeric options, naming the flag that sets each (exit 2). */
export function checkRunNumbers(options: RunOptions): void {
  for (const [key, spec] of settingEntries(SETTINGS)) {
    const target = optionTarget(spec, key);
    if (!spec.bounds || !target) continue;
    const holder = (target.live ? options.live : options) as Record<string, unknown> | undefined;
    const value = holder?.[target.live ?? target.option!];
    if (value === undefined) continue;
    checkNumber(`--${spec.flag?.name ?? key}`, spec.scale ? (value as number) / spec.scale : value, spec.bounds);
  }
  if (options.datasetLimit !== undefined && !options.datasets?.length) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--limit ${options.datasetLimit} applies to --dataset imports only: name a dataset (--dataset locomo:FILE), or drop --limit`,
    );
  }
}
