/** The shape of a row of the settings table (harness/run/settings.ts) and what reads one row. */
import type { Options } from 'yargs';
import type { z } from 'zod';
import type { NumberRange } from '../core/numbers.js';
import type { LiveProviderSettings } from '../models/openai.js';

/** The commands that take run settings as flags. */
export type Command = 'run' | 'tune' | 'judge';

/**
 * What a setting is about. `matrix`, `providers` and `execution` settings are fields of `RunOptions`
 * (its groups); `output` and `judging` settings are read by the command around the run.
 */
export type SettingGroup = 'matrix' | 'providers' | 'execution' | 'output' | 'judging';

/** How a setting is given on the command line. */
export interface FlagSpec {
  /** The flag's name without dashes (`keep-cell-dirs`). */
  name: string;
  alias?: string;
  /** Which commands take it. */
  commands: readonly Command[];
  /** yargs' own description of the flag (its type, `array`, `choices`, a yargs `default`). */
  yargs: Options;
  /** The flag's raw value (never undefined) as the setting's value; bad input is a MembenchError naming `flag`. Default: a number checked against `bounds`, else the value as given. */
  parse?: (raw: never, flag: string) => unknown;
}

/** One row of the table. `schema` types the value (and validates it in a config file). */
export interface SettingSpec<Schema extends z.ZodType = z.ZodType> {
  schema: Schema;
  group: SettingGroup;
  /** One line: what it does (also the flag's --help text); `where` is 'docs' for the reference, which names no machine's figures. */
  describe: string | ((where: 'help' | 'docs') => string);
  /** The unit of a number (`seconds`, `ms`). */
  unit?: string;
  /** The range of a number: checked on the flag, the config key and the library option alike. */
  bounds?: NumberRange;
  /** The value a run takes when the setting is absent (applied to the options the CLI resolves). */
  default?: z.output<Schema>;
  /** `--help` ends with "(default VALUE)". */
  helpDefault?: boolean;
  /** The default in words, where it is not one fixed value (the core count, the model's own). */
  defaultText?: string;
  flag?: FlagSpec;
  /** Whether the config file may set it (under the table's key). */
  config?: boolean;
  /** Its `RunOptions` field when it is not the table's key (`cellTimeoutMs`). */
  option?: string;
  /** The `RunOptions.live` field it sets instead of a field of its own. */
  live?: keyof LiveProviderSettings;
  /** The option holds the value times this (seconds in the file, milliseconds in the option). */
  scale?: number;
  /** Whether it decides the matrix and its results: plan.json keeps it, and a resumed run must not change it. */
  planned?: boolean;
  /** It acts on a dataset's import only: refused without one (the flag and the library option in limits.ts, the config key at its line). */
  datasetOnly?: boolean;
}

/** A row, its value type inferred from its schema (and its flag's parser checked against it). */
export function setting<const Schema extends z.ZodType, const Spec extends Omit<SettingSpec<Schema>, 'schema'>>(
  schema: Schema,
  spec: Spec & { flag?: { parse?: (raw: never, flag: string) => z.output<Schema> | undefined } },
): Spec & { schema: Schema } {
  return { ...spec, schema };
}

/** A row's one-line description; `help`: as `--help` shows it, its default appended where the row says so. */
export function describeSetting(spec: SettingSpec, help = false): string {
  const text = typeof spec.describe === 'function' ? spec.describe(help ? 'help' : 'docs') : spec.describe;
  return help && spec.helpDefault ? `${text} (default ${defaultOf(spec)})` : text;
}

/** A row's default in words (undefined: none). */
export function defaultOf(spec: SettingSpec): string | undefined {
  if (spec.defaultText !== undefined) return spec.defaultText;
  if (spec.default === undefined) return undefined;
  return Array.isArray(spec.default) ? spec.default.join(',') : String(spec.default);
}

/** The values of a row's RunOptions field and the field itself: `undefined` for a setting the command reads. */
export function optionTarget(spec: SettingSpec, key: string): { live?: string; option?: string } | undefined {
  if (spec.group !== 'matrix' && spec.group !== 'providers' && spec.group !== 'execution') return undefined;
  return spec.live ? { live: spec.live } : { option: spec.option ?? key };
}
