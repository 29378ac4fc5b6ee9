/** Where a run setting comes from: the flags of a command and the config file, both derived from the settings table. */
import type { Argv, InferredOptionTypes, Options } from 'yargs';
import { z } from 'zod';
import { MembenchError } from '../core/errors.js';
import { parseNumberFlag } from '../core/numbers.js';
import { describeSetting, type Command, type SettingSpec } from './setting-spec.js';
import { settingEntries, SETTINGS, type SettingKey, type Settings, type SettingValues } from './settings.js';

/** The yargs options of a command's flags, by flag name. */
type FlagsOf<C extends Command> = {
  [K in SettingKey as Settings[K] extends { flag: { name: infer N extends string; commands: readonly (infer In)[] } }
    ? C extends In
      ? N
      : never
    : never]: Settings[K] extends { flag: { yargs: infer Y extends Options } } ? Y : never;
};

/** Adds the flags of `command`'s settings to `yargs`, in table order, typed from the table. No yargs defaults but the table's: an absent flag leaves the config file's value (or the built-in default) in place. */
export function settingFlags<T, C extends Command>(
  yargs: Argv<T>,
  command: C,
  table: Record<string, SettingSpec> = SETTINGS,
): Argv<Omit<T, keyof FlagsOf<C>> & InferredOptionTypes<FlagsOf<C>>> {
  const options = Object.fromEntries(
    settingEntries(table).flatMap(([, spec]) =>
      spec.flag?.commands.includes(command)
        ? [
            [
              spec.flag.name,
              {
                ...(spec.flag.alias ? { alias: spec.flag.alias } : {}),
                ...spec.flag.yargs,
                describe: describeSetting(spec, true),
              },
            ],
          ]
        : [],
    ),
  );
  return yargs.options(options) as unknown as Argv<Omit<T, keyof FlagsOf<C>> & InferredOptionTypes<FlagsOf<C>>>;
}

/** The settings `command`'s flags set in `argv` (yargs' parse), each parsed and checked: bad input names its flag (exit 2). */
export function flagValues(
  argv: Readonly<Record<string, unknown>>,
  command: Command,
  table: Record<string, SettingSpec> = SETTINGS,
): SettingValues {
  const values: Record<string, unknown> = {};
  for (const [key, spec] of settingEntries(table)) {
    if (!spec.flag?.commands.includes(command)) continue;
    const raw = argv[spec.flag.name];
    if (raw === undefined) continue;
    const flag = `--${spec.flag.name}`;
    const value = spec.flag.parse
      ? spec.flag.parse(raw as never, flag)
      : spec.bounds
        ? parseNumberFlag(flag, raw as string, spec.bounds)
        : raw;
    // `-c` with nothing after it (`-c $UNSET`) reads as an empty list, which would mean the default:
    // every scenario. A flag whose own reading says more about a missing value (--judge) has said it.
    if (Array.isArray(raw) && raw.length === 0)
      throw new MembenchError('INVALID_ARGUMENT', `${flag} needs a value (an unset variable?)`);
    if (value !== undefined) values[key] = value;
  }
  return values as SettingValues;
}

/** The config file's keys: the table's rows with `config: true`. */
type ConfigKey = { [K in SettingKey]: Settings[K] extends { config: true } ? K : never }[SettingKey];

/** The config file's schema, derived from the table: each key optional, validated by its row's schema. */
export function configSchemaOf<Table extends Record<string, SettingSpec>>(table: Table) {
  return z.object(
    Object.fromEntries(
      settingEntries(table).flatMap(([key, spec]) => (spec.config ? [[key, spec.schema.optional()]] : [])),
    ),
  );
}

/** The schema of membench.config.yaml. */
export const configSchema = configSchemaOf(SETTINGS) as unknown as z.ZodObject<{
  [K in ConfigKey]: z.ZodOptional<Settings[K]['schema']>;
}>;
