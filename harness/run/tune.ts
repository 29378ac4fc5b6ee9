/**
 * `membench tune`: sweeps one numeric knob of one strategy over a list of values (one run of the
 * matrix, so workers, shards of work and reports all come from the runner) and finds the
 * cheapest setting whose pooled context recall meets a target.
 */
import { MembenchError } from '../core/errors.js';
import { checkNumber, decimalNumber } from '../core/numbers.js';
import { RUN_LIMITS } from './limits.js';
import type { Rate } from '../core/metrics.js';
import { cellsByStatus } from '../results/cells.js';
import type { CellResult, OkCell, RunResult } from '../results/schema.js';
import { wilsonInterval, type Interval } from '../results/stats.js';
import { runBenchmark, type RunOptions } from './runner.js';
import { loadStrategyDefinition } from '../../strategies/loader.js';
import { TUNE_METRICS, type TuneMetric } from './tune-metrics.js';

/** More values than this is a typo (`1..100000`), not a sweep. */
export const MAX_TUNE_VALUES = 200;

/** A run's options minus the matrix, which the swept knob defines. */
export interface TuneOptions extends Omit<RunOptions, 'strategies' | 'params' | 'shard' | 'store'> {
  /** A built-in name, `langchain:NAME` or a module path. */
  strategy: string;
  knob: string;
  values: readonly number[];
  /** Pooled context recall a setting must reach (0..1). */
  targetRecall: number;
  metric?: TuneMetric;
}

/** One swept value: its pooled recall and cost. */
export interface TuneRow {
  value: number;
  /** The strategy setting (`window(k=4)`). */
  setting: string;
  recall: Rate;
  cost: number;
  /** Cells that errored (a setting with errors never meets the target). */
  errors: number;
  meets: boolean;
  /** 95 % Wilson interval of the recall. */
  interval: Interval | null;
  /** The target lies inside the interval or below it: with this many probes the setting cannot be told from one that meets it. */
  withinNoise: boolean;
}

/** The sweep, its verdict and the run behind it (for the reports). */
export interface TuneResult {
  strategy: string;
  knob: string;
  metric: TuneMetric;
  targetRecall: number;
  /** Ascending by value. */
  rows: TuneRow[];
  /** The cheapest row that meets the target (the smaller value on a tie); undefined when none does. */
  best?: TuneRow;
  /** The cheapest row whose recall is within noise of the target (its 95 % interval reaches it). */
  withinNoise?: TuneRow;
  run: RunResult;
}

/** `1..16`, `0.5..2..0.5` or `1,2,4,8` → the values, ascending; a value listed twice is refused (as `-p window.k=2,2` is). */
export function parseValues(text: string): number[] {
  const fail = (why: string): never => {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--values ${text}: ${why} (expected A..B, A..B..STEP or a list like 1,2,4,8)`,
    );
  };
  const number = (part: string): number => {
    // Decimal notation, as every numeric flag: Number() read 0x2 as 2 and 1e400 as Infinity.
    const value = decimalNumber(part);
    if (!Number.isFinite(value)) fail(`"${part}" is not a number`);
    return value;
  };
  let values: number[];
  if (text.includes('..')) {
    const parts = text.split('..');
    if (parts.length > 3) fail('too many ".."');
    const [from, to, step = 1] = parts.map(number) as [number, number, number?];
    if (step <= 0) fail('the step must be above 0');
    if (from > to) fail(`${from} is above ${to}`);
    const count = Math.floor((to - from) / step + 1e-9) + 1;
    if (count > MAX_TUNE_VALUES) fail(`${count} values, more than ${MAX_TUNE_VALUES}`);
    // Computed from the start each time, rounded: 0.1 steps do not drift.
    values = Array.from({ length: count }, (_, index) => Number((from + index * step).toPrecision(12)));
  } else {
    values = text.split(',').map(number);
    if (values.length > MAX_TUNE_VALUES) fail(`more than ${MAX_TUNE_VALUES} values`);
    const repeated = values.find((value, index) => values.indexOf(value) !== index);
    if (repeated !== undefined) fail(`${repeated} is listed twice: give each value once`);
  }
  return values.sort((a, b) => a - b);
}

/**
 * What a knob that is not one was meant to be: run's `-p STRATEGY.KNOB=V1,V2` form (tune takes the
 * knob alone, its strategy from -s and its values from --values); '' for any other name.
 */
function knobHint(knob: string, strategy: string): string {
  const [named, ...rest] = knob.split('=');
  const dot = named!.lastIndexOf('.');
  const prefix = dot > 0 ? named!.slice(0, dot) : undefined;
  const bare = dot > 0 ? named!.slice(dot + 1) : named!;
  if (rest.length > 0 || prefix !== undefined) {
    const values = rest.length > 0 ? ` --values ${rest.join('=')}` : '';
    return prefix !== undefined && prefix !== strategy
      ? `: tune sweeps a knob of the -s strategy (${strategy}), named alone; for ${prefix}'s: -s ${prefix} -p ${bare}${values}`
      : `: tune takes the knob alone, its strategy from -s and its values from --values: -p ${bare}${values}`;
  }
  return '';
}

/** Checks the knob exists and takes every value as a number, before anything runs. */
async function assertNumericKnob(options: TuneOptions): Promise<string> {
  const definition = await loadStrategyDefinition(options.strategy, { cwd: options.cwd ?? process.cwd() });
  const shape = (definition.options as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  if (!(options.knob in shape)) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--param ${options.knob}: strategy "${definition.name}" has no knob "${options.knob}" (knobs: ${Object.keys(shape).join(', ') || 'none'})${knobHint(options.knob, definition.name)}`,
    );
  }
  for (const value of options.values) {
    const parsed = definition.options.safeParse({ [options.knob]: String(value) });
    const taken = parsed.success ? (parsed.data as Record<string, unknown>)[options.knob] : undefined;
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      // zod's own words for a fraction given a whole-number knob ("expected int, received number") say less.
      const why =
        issue.code === 'invalid_type' && issue.expected === 'int'
          ? `${options.knob} takes whole numbers`
          : `${value < 0 ? `${options.knob} cannot be negative` : 'out of range'}: ${issue.message.toLowerCase()}`;
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--values ${options.values.join(',')}: ${definition.name}.${options.knob}=${value}: ${why}`,
      );
    }
    if (typeof taken !== 'number')
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--param ${options.knob}: ${definition.name}.${options.knob} is not a numeric knob (${value} became ${JSON.stringify(taken)})`,
      );
  }
  return definition.name;
}

/** Sum over scenarios of the mean over trials (of ok cells), like the charts' token totals. */
function cost(cells: readonly OkCell[], metric: TuneMetric): number {
  const perScenario = new Map<string, number[]>();
  for (const cell of cells)
    perScenario.set(cell.scenario, [...(perScenario.get(cell.scenario) ?? []), cell.tokens[metric]]);
  return Math.round(
    [...perScenario.values()].reduce((sum, values) => sum + values.reduce((a, b) => a + b, 0) / values.length, 0),
  );
}

/**
 * Refuses tune's own fields of the wrong type (the rest go to runBenchmark, which checks its own):
 * `values: '1,2'` failed with a TypeError, and the messages named flags a program never gave.
 */
function checkTuneOptions(options: TuneOptions): void {
  const refuse = (message: string): MembenchError => new MembenchError('INVALID_ARGUMENT', message);
  if (typeof options !== 'object' || options === null)
    throw refuse(`tune takes an object of options (TuneOptions), not ${String(options)}`);
  for (const field of ['strategy', 'knob'] as const)
    if (typeof options[field] !== 'string' || options[field].trim() === '')
      throw refuse(
        `tune ${field} ${JSON.stringify(options[field]) ?? 'undefined'}: expected a name (the strategy, e.g. window; its knob, e.g. k)`,
      );
  if (
    !Array.isArray(options.values) ||
    options.values.some((value) => typeof value !== 'number' || !Number.isFinite(value))
  )
    throw refuse(
      `tune values ${JSON.stringify(options.values) ?? 'undefined'}: expected a list of numbers, like [2, 4, 8]`,
    );
  if (options.values.length === 0) throw refuse('tune values: no values to sweep');
  if (typeof options.targetRecall !== 'number')
    throw refuse(
      `tune targetRecall ${JSON.stringify(options.targetRecall) ?? 'undefined'}: expected a share between 0 and 1`,
    );
  checkNumber('tune targetRecall', options.targetRecall, RUN_LIMITS.recallThreshold);
  if (options.metric !== undefined && !(TUNE_METRICS as readonly string[]).includes(options.metric))
    throw refuse(`tune metric ${JSON.stringify(options.metric)}: expected one of ${TUNE_METRICS.join(', ')}`);
}

/** Runs the sweep and picks the cheapest setting meeting the target. */
export async function tune(options: TuneOptions): Promise<TuneResult> {
  checkTuneOptions(options);
  if ((options.durabilities?.length ?? 0) > 1)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--durability ${options.durabilities!.join(',')}: tune sweeps one knob; give at most one durability mode`,
    );
  const metric = options.metric ?? 'contextTotal';
  const name = await assertNumericKnob(options);
  const { strategy, knob, values, targetRecall, metric: _metric, ...runOptions } = options;
  const run = await runBenchmark({
    ...runOptions,
    strategies: [strategy],
    params: [`${name}.${knob}=${values.join(',')}`],
  });
  const bySetting = new Map<string, CellResult[]>();
  for (const cell of run.cells) bySetting.set(cell.setting, [...(bySetting.get(cell.setting) ?? []), cell]);
  const rows = [...bySetting].map(([setting, cells]): TuneRow => {
    const { ok } = cellsByStatus(cells);
    const n = ok.reduce((sum, cell) => sum + cell.recall.contextRecall.n, 0);
    const hits = ok.reduce((sum, cell) => sum + cell.recall.contextRecall.hits, 0);
    const errors = cells.length - ok.length;
    return {
      value: Number(cells[0]!.options[knob]),
      setting,
      recall: { n, hits, value: n ? hits / n : null },
      cost: cost(ok, metric),
      errors,
      // hits/n >= target, without float noise at the boundary.
      meets: errors === 0 && n > 0 && hits >= targetRecall * n - 1e-9,
      interval: wilsonInterval(hits, n),
      withinNoise: errors === 0 && n > 0 && wilsonInterval(hits, n)!.hi >= targetRecall - 1e-9,
    };
  });
  rows.sort((a, b) => a.value - b.value);
  const cheapestOf = (candidates: readonly TuneRow[]) =>
    candidates.reduce<TuneRow | undefined>(
      (cheapest, row) => (!cheapest || row.cost < cheapest.cost ? row : cheapest),
      undefined,
    );
  const best = cheapestOf(rows.filter((row) => row.meets));
  const withinNoise = cheapestOf(rows.filter((row) => row.withinNoise));
  return {
    strategy: name,
    knob,
    metric,
    targetRecall,
    rows,
    ...(best ? { best } : {}),
    ...(withinNoise ? { withinNoise } : {}),
    run,
  };
}

/** The sweep as a table, the cheapest setting marked, and the verdict. */
export function renderTune(result: TuneResult): string {
  const { knob, metric, rows, best, withinNoise } = result;
  const header = [knob, 'recall (hits/n) [95% CI]', `${metric} tokens`, ''];
  const table = rows.map((row) => [
    String(row.value),
    `${row.recall.value === null ? '–' : row.recall.value.toFixed(2)} (${row.recall.hits}/${row.recall.n})${row.interval ? ` [${row.interval.lo.toFixed(2)}, ${row.interval.hi.toFixed(2)}]` : ''}`,
    String(row.cost),
    row === best
      ? '<- cheapest meeting the target'
      : row === withinNoise
        ? '<- cheapest within noise of the target'
        : row.errors
          ? `${row.errors} cell(s) failed`
          : row.meets
            ? 'meets'
            : row.withinNoise
              ? 'within noise'
              : '',
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...table.map((line) => line[column]!.length)));
  const format = (line: string[]): string =>
    line
      .map((cell, column) =>
        column === 3 ? cell : column === 1 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  const scenarios = result.run.header.scenarios.map((scenario) => scenario.name).join(', ');
  const target = `context recall >= ${result.targetRecall}`;
  const lines = [
    `membench tune: ${result.strategy}.${knob} over ${rows.length} values on ${scenarios} (target: ${target}; cost: ${metric} tokens, summed over scenarios)`,
    format(header),
    ...table.map(format),
  ];
  if (best)
    lines.push(
      `cheapest setting meeting the target: ${best.setting}: recall ${best.recall.value!.toFixed(2)} (${best.recall.hits}/${best.recall.n}) at ${best.cost} ${metric} tokens`,
    );
  if (withinNoise && withinNoise !== best) {
    lines.push(
      `cheapest setting within noise of the target: ${withinNoise.setting}: recall ${withinNoise.recall.value!.toFixed(2)} [${withinNoise.interval!.lo.toFixed(2)}, ${withinNoise.interval!.hi.toFixed(2)}] at ${withinNoise.cost} ${metric} tokens (its 95 % Wilson interval reaches ${result.targetRecall}: more probes would tell)`,
    );
  } else if (!best) {
    const top = rows
      .filter((row) => row.recall.value !== null)
      .sort((a, b) => b.recall.value! - a.recall.value! || a.value - b.value)[0];
    lines.push(
      `no value of ${knob} meets ${target}${top ? ` (best recall: ${top.recall.value!.toFixed(2)} at ${knob}=${top.value})` : ''}`,
    );
  }
  return lines.join('\n');
}
