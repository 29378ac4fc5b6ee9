/**
 * A run's settings from their layers: built-in defaults < config file < flags. What `membench run`
 * and `membench tune` resolve before their one library call; a program can do the same.
 */
import { MembenchError } from '../core/errors.js';
import { kindOf } from '../core/user-input.js';
import { findConfigFile, loadConfig, type MembenchConfig } from './config.js';
import type { RunOptions } from './options.js';
import { defaultWorkers } from './setting-values.js';
import { findStrategy } from '../../strategies/index.js';
import { rankOnlySettings, ranksInMemory } from './rank-only.js';
import { optionTarget, settingEntries, type SettingKey, type Settings, type SettingValues } from './settings.js';

/** The settings that plan the matrix and have one fixed default: what a resolved run (and a resumed one's comparison) fills in. */
type PlannedDefaults = {
  [K in SettingKey as Settings[K] extends { planned: true; default: unknown }
    ? Settings[K] extends { live: string }
      ? never
      : Settings[K] extends { option: infer Name extends string }
        ? Name
        : K
    : never]: unknown;
};

/** What the built-in defaults say for the options a resumed run compares (the table's planned rows with a default). */
export const RUN_DEFAULTS = Object.fromEntries(
  settingEntries().flatMap(([key, spec]) =>
    spec.planned && spec.default !== undefined && !spec.live ? [[spec.option ?? key, spec.default]] : [],
  ),
) as Pick<RunOptions, keyof PlannedDefaults & keyof RunOptions>;

/** The RunOptions a layer (config file or flags) sets: each row's value under its field, live ones under `live`. */
export function runOptionsOf(layer: SettingValues): RunOptions {
  const options: Record<string, unknown> = {};
  const live: Record<string, unknown> = {};
  for (const [key, spec] of settingEntries()) {
    const value = layer[key as SettingKey];
    const target = optionTarget(spec, key);
    if (value === undefined || !target) continue;
    const scaled = spec.scale !== undefined ? (value as number) * spec.scale : value;
    if (target.live) live[target.live] = scaled;
    else options[target.option!] = scaled;
  }
  if (Object.keys(live).length) options.live = live;
  return options as RunOptions;
}

/** A run's settings resolved: the options for runBenchmark, the config file read, and what the command reads itself. */
export interface ResolvedSettings {
  /** Defaults < config file < flags; live settings merged key by key (the API key only from its flag). */
  options: RunOptions;
  /** The config file's settings (empty without one). */
  config: MembenchConfig;
  /** Every setting the flags or the config file set, the flags winning: `out`, `recallThreshold`, `judgeThreshold`... */
  values: SettingValues;
  /** Worker processes: flags, config file, else one more than the cores (as many as the cores for a run that ranks only). */
  workers: number;
}

/**
 * Resolves the layers: the config file (`flags.config`, else the one in `cwd`), under the flags.
 * A bad config file is a MembenchError locating each problem (exit 2).
 */
export async function resolveSettings(flags: SettingValues, cwd = process.cwd()): Promise<ResolvedSettings> {
  if (typeof flags !== 'object' || flags === null || Array.isArray(flags))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `resolveSettings: expected an object of setting values (SettingValues), got ${kindOf(flags)}`,
    );
  const file = findConfigFile(flags.config, cwd);
  const config: MembenchConfig = file ? await loadConfig(file, flags) : {};
  const [fromConfig, fromFlags] = [runOptionsOf(config), runOptionsOf(flags)];
  const options: RunOptions = {
    ...RUN_DEFAULTS,
    ...fromConfig,
    ...fromFlags,
    live: { ...fromConfig.live, ...fromFlags.live },
  };
  const values: SettingValues = { ...config, ...flags };
  return { options, config, values, workers: values.workers ?? defaultWorkers(ranksOnlyRun(options)) };
}

/**
 * Whether, as far as its options tell, every cell of a run takes the ranking-only path
 * (rank-only.ts decides cell by cell): a retrieval protocol over datasets alone, not forced whole,
 * no crash fuzzing or isolation, every strategy named and a built-in that ranks in memory.
 */
export function ranksOnlyRun(options: RunOptions): boolean {
  const strategies = options.strategies ?? [];
  return (
    rankOnlySettings({ ...options, isolate: options.agentProcesses === true }) &&
    (options.datasets ?? []).length > 0 &&
    (options.scenarios ?? []).length === 0 &&
    strategies.length > 0 &&
    strategies.every((name) => {
      const definition = findStrategy(name);
      return definition !== undefined && ranksInMemory(definition);
    })
  );
}
