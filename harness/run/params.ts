/** `--param S.K=V1,V2` parsing and the strategy columns of the matrix (cartesian product per strategy). */
import type { z } from 'zod';
import { MembenchError } from '../core/errors.js';
import { notANumber } from '../core/numbers.js';
import type { StrategyTraits } from '../core/strategy-traits.js';
import {
  DURABILITY_MODES,
  strategyKnobs,
  traitsOf,
  type DurabilityMode,
  type StrategyDefinition,
} from '../../strategies/types.js';

/** One strategy with one parameter set: a column of the run matrix. */
export interface StrategySetting {
  name: string;
  /** How an agent process finds the definition again: a built-in name, `langchain:NAME` or an absolute module path. */
  source: string;
  /** Validated options, defaults filled in. */
  options: Record<string, unknown>;
  durability: DurabilityMode;
  /** `window(k=2)`: name plus the options that have values. */
  setting: string;
  /** What kind of memory the strategy is, for the reports (absent when its definition declares no kind). */
  traits?: StrategyTraits;
}

/** Parses `window.k=2,4,8` into { strategy: 'window', key: 'k', values: ['2','4','8'] }. */
export function parseParamFlag(flag: string): { strategy: string; key: string; values: string[] } {
  const match = /^([^.=\s]+)\.([^.=\s]+)=(.+)$/u.exec(flag.trim());
  if (!match)
    throw new MembenchError('INVALID_ARGUMENT', `--param ${flag}: expected STRATEGY.KEY=V1,V2 (e.g. window.k=2,4,8)`);
  const values = match[3]!.split(',').map((value) => value.trim());
  if (values.some((value) => value === ''))
    throw new MembenchError('INVALID_ARGUMENT', `--param ${flag}: empty value in the list`);
  return { strategy: match[1]!, key: match[2]!, values };
}

function cartesian(axes: readonly [string, string[]][]): Record<string, string>[] {
  return axes.reduce<Record<string, string>[]>(
    (sets, [key, values]) => sets.flatMap((set) => values.map((value) => ({ ...set, [key]: value }))),
    [{}],
  );
}

/** `window(k=2)`: the name, the knobs the strategy always shows and the swept ones, and a non-default durability. */
export function strategyLabel(
  name: string,
  options: Record<string, unknown>,
  shown: ReadonlySet<string>,
  durability: DurabilityMode,
  defaultDurability: DurabilityMode,
): string {
  const parts = Object.entries(options)
    .filter(([key, value]) => value !== undefined && shown.has(key))
    .map(([key, value]) => `${key}=${String(value)}`);
  if (durability !== defaultDurability) parts.push(`durability=${durability}`);
  return parts.length ? `${name}(${parts.join(',')})` : name;
}

/** Expands the selected strategies by their `--param` lists; every value is checked against the strategy's schema. */
export function expandStrategies(
  definitions: readonly StrategyDefinition[],
  paramFlags: readonly string[],
  sources: ReadonlyMap<string, string> = new Map(),
): StrategySetting[] {
  const axesByStrategy = new Map<string, Map<string, string[]>>();
  for (const flag of paramFlags) {
    const { strategy, key, values } = parseParamFlag(flag);
    const definition = definitions.find((item) => item.name === strategy);
    if (!definition) {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--param ${flag}: strategy "${strategy}" is not selected (selected: ${definitions.map((item) => item.name).join(', ')})`,
      );
    }
    const knobs = strategyKnobs(definition).map(({ name }) => name);
    if (key !== 'durability' && !knobs.includes(key)) {
      const known = [...knobs, 'durability'];
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--param ${flag}: strategy "${strategy}" has no knob "${key}" (knobs: ${known.join(', ')})`,
      );
    }
    const axes = axesByStrategy.get(strategy) ?? new Map<string, string[]>();
    axes.set(key, [...(axes.get(key) ?? []), ...values]);
    axesByStrategy.set(strategy, axes);
  }

  // Every bad value is said, not only the first setting's (`window.k=a,b` names both).
  const refusals = new Map<string, string>();
  const settings = definitions.flatMap((definition) => {
    const axes = [...(axesByStrategy.get(definition.name) ?? new Map<string, string[]>())];
    return cartesian(axes).flatMap((set): StrategySetting[] => {
      const { durability = definition.defaultDurability, ...raw } = set;
      if (!DURABILITY_MODES.includes(durability as DurabilityMode)) {
        throw new MembenchError(
          'INVALID_ARGUMENT',
          `--param ${definition.name}.durability=${durability}: expected one of ${DURABILITY_MODES.join(', ')}`,
        );
      }
      const offered = definition.durabilityModes ?? DURABILITY_MODES;
      if (!offered.includes(durability as DurabilityMode)) {
        throw new MembenchError(
          'INVALID_ARGUMENT',
          `--param ${definition.name}.durability=${durability}: ${definition.name} offers ${offered.join(', ')} only`,
        );
      }
      const parsed = (definition.options as z.ZodType).safeParse(raw);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const key = issue.path.join('.');
          const value = String(raw[key] ?? '');
          refusals.set(`${definition.name}.${key}=${value}`, describeKnobIssue(issue, value));
        }
        return [];
      }
      const options = parsed.data as Record<string, unknown>;
      const traits = traitsOf(definition);
      const setting: StrategySetting = {
        name: definition.name,
        source: sources.get(definition.name) ?? definition.name,
        options,
        durability: durability as DurabilityMode,
        setting: strategyLabel(
          definition.name,
          options,
          new Set([...(definition.labelKnobs ?? []), ...Object.keys(raw)]),
          durability as DurabilityMode,
          definition.defaultDurability,
        ),
        ...(traits ? { traits } : {}),
      };
      return [setting];
    });
  });
  if (refusals.size > 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      [...refusals].map(([param, reason]) => `--param ${param}: ${reason}`).join('; '),
    );
  // The same setting twice (`window.k=2,2`, or 2 and 2.0) would run identical cells under one id.
  const seen = new Set<string>();
  for (const strategy of settings) {
    if (seen.has(strategy.setting)) {
      const flags = paramFlags.filter((flag) => flag.trim().startsWith(`${strategy.name}.`));
      throw new MembenchError(
        'INVALID_ARGUMENT',
        flags.length
          ? `--param ${flags.join(' --param ')}: ${strategy.setting} is listed twice (a value repeated?): give each setting once`
          : `${strategy.setting} is selected twice (two strategies with one name?)`,
      );
    }
    seen.add(strategy.setting);
  }
  return settings;
}

/** A knob's schema refusal in words: a value that is not a number is quoted (zod would say "received NaN"). */
function describeKnobIssue(issue: z.core.$ZodIssue, value: string): string {
  if (issue.code === 'invalid_type' && issue.expected === 'number') return notANumber(value);
  return issue.message;
}
