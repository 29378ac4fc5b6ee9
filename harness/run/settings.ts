/**
 * Every setting of a run, described once: its name, what it does, its unit, bounds and default, and
 * where it may come from (a flag of which commands, the config file, or the library only). The
 * yargs flags (`settingFlags`), the config file's schema (`configSchema`), the `RunOptions` type
 * (run/options.ts), the library's check of RunOptions (`checkRunOptions`) and the config reference in
 * docs/scale-out.md (`renderSettingsReference`) are all read from this table: a setting added here
 * appears in `--help`, in the config file and in the docs.
 */
import { ENDPOINT_DEFAULTS } from '../models/endpoint.js';
import { z } from 'zod';
import { decimalNumber, rangeSchema, SEED_RANGE, SHARE_RANGE, type NumberRange } from '../core/numbers.js';
import { PEER_NAMES } from '../core/peers.js';
import { describeInput } from '../core/user-input.js';
import { MAX_UNPARSED_SHARE } from '../results/judge-limits.js';
import { DEFAULT_RETRIEVAL_K } from '../results/retrieval.js';
import { PROTOCOLS } from '../results/schema.js';
import { parseShard } from '../results/shard.js';
import { builtinScenarioNames, builtinSuiteNames } from '../scenarios/builtin-names.js';
import { BUILTIN_STRATEGY_NAMES } from '../../strategies/names.js';
import { DURABILITY_MODES, type DurabilityMode } from '../../strategies/types.js';
import { setting, type SettingSpec } from './setting-spec.js';
import {
  cacheFlag,
  defaultWorkers,
  judgeFlag,
  oneProtocol,
  parseDurabilities,
  parseRetrievalK,
} from './setting-values.js';

export {
  defaultOf,
  describeSetting,
  optionTarget,
  type Command,
  type SettingGroup,
  type SettingSpec,
} from './setting-spec.js';

const whole = (min: number, max: number = Number.MAX_SAFE_INTEGER): NumberRange => ({ whole: true, min, max });
const SHARE = SHARE_RANGE;

/**
 * A string or a list of them, read as a list (`strategies: x` is `strategies: [x]`); `example` shows
 * one in a refusal. An empty list is refused unless it `mayBeEmpty` (a list that turns something
 * off): `scenarios: []` meant nothing, and ran every default scenario.
 */
const listOf = (example: string, mayBeEmpty = false) =>
  z
    .union([z.string(), z.array(z.string())], {
      error: (issue) => `expected a name or a list of names, like ${example}; got ${listItemShown(issue.input)}`,
    })
    .transform((value) => (typeof value === 'string' ? [value] : value))
    .refine((list) => mayBeEmpty || list.length > 0, {
      error: `expected at least one name, like ${example} (leave the key out for the default)`,
    });
/** What a list setting holds instead of strings: the value, or its first item that is not a string. */
const listItemShown = (input: unknown): string => {
  const item = Array.isArray(input) ? input.find((value) => typeof value !== 'string') : undefined;
  return item === undefined ? describeInput(input) : `${describeInput(item)} in the list`;
};
const knobValue = z.union([z.string(), z.number(), z.boolean()]);
const knobValues = z.union([knobValue, z.array(knobValue)]);
const PARAMS_FORM = 'expected a mapping of STRATEGY.KNOB to values, like window.k: [2, 4], or a list of -p values';
/** Why `params` is refused: the usual mistake is a strategy's knobs nested under its name (`window: {k: 2}`). */
const paramsRefusal = (input: unknown): string => {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    return `${PARAMS_FORM}; got ${listItemShown(input)}`;
  const [strategy, nested] = Object.entries(input).find(([, value]) => !knobValues.safeParse(value).success) ?? [];
  if (strategy === undefined) return PARAMS_FORM;
  const [knob, value] =
    nested !== null && typeof nested === 'object' && !Array.isArray(nested) ? (Object.entries(nested)[0] ?? []) : [];
  return knob === undefined
    ? `${PARAMS_FORM}; "${strategy}" holds ${describeInput(nested)}`
    : `${PARAMS_FORM}; "${strategy}" holds a mapping: write its knobs as ${strategy}.${knob}: ${JSON.stringify(value)}`;
};
/** `["window.k=2,4,8"]`, one such string, or `{ window.k: [2, 4, 8] }`: always the `-p` strings. */
const params = z
  .union([listOf('[window.k=2, "bm25.k=4,8"]', true), z.record(z.string(), knobValues)], {
    error: (issue) => paramsRefusal(issue.input),
  })
  .transform((value) =>
    Array.isArray(value)
      ? value
      : Object.entries(value).map(
          ([knob, values]) => `${knob}=${(Array.isArray(values) ? values : [values]).join(',')}`,
        ),
  );
const bounded = (range: NumberRange) => rangeSchema(range);
const flagOnly = <T>() => z.custom<T>();

/** Where live model responses are cached unless `--no-cache` or `--cache FILE` says otherwise. */
export const DEFAULT_CACHE_FILE = '.membench/cache.sqlite';

const RUN_TUNE = ['run', 'tune'] as const;
const EVERY = ['run', 'tune', 'judge'] as const;
const RUN_JUDGE = ['run', 'judge'] as const;

/**
 * The table, in the order `--help` lists the flags. A run's `RunOptions` field is the key unless
 * `option` or `live` says otherwise; a config key is always the table's key.
 */
export const SETTINGS = {
  strategies: setting(listOf('[buffer, window]'), {
    group: 'matrix',
    describe: () =>
      `strategies to run (default: all built-ins): ${BUILTIN_STRATEGY_NAMES.join(', ')}; peers ${PEER_NAMES.join(', ')}; langchain:NAME; or a module path`,
    defaultText: 'every built-in',
    flag: { name: 'strategy', alias: 's', commands: ['run'], yargs: { type: 'string', array: true } },
    config: true,
    planned: true,
  }),
  params: setting(params, {
    group: 'matrix',
    describe: 'STRATEGY.KNOB=V1,V2 sweeps a knob, e.g. window.k=2,4,8 (repeatable; durability is a knob too)',
    flag: { name: 'param', alias: 'p', commands: ['run'], yargs: { type: 'string', array: true } },
    config: true,
    planned: true,
  }),
  config: setting(flagOnly<string>(), {
    group: 'output',
    describe:
      'config file with the matrix and settings (default: membench.config.yaml, .yml or .json in the working dir, if there is one)',
    flag: { name: 'config', commands: RUN_TUNE, yargs: { type: 'string' } },
  }),
  scenarios: setting(listOf('[recipes-en, ./my-scenario.yaml]'), {
    group: 'matrix',
    describe: () =>
      `built-in scenario or suite names, or .yaml/.json paths (default: every built-in but the long ones: ${builtinScenarioNames()
        .filter((name) => name !== 'long-recipes')
        .join(
          ', ',
        )}); a suite (${builtinSuiteNames().join(', ')}) expands into its generated scenarios, each also named alone (generated-en)`,
    defaultText: 'every built-in but the long ones',
    flag: { name: 'scenario', alias: 'c', commands: RUN_TUNE, yargs: { type: 'string', array: true } },
    config: true,
    planned: true,
  }),
  out: setting(
    z.string().refine((out) => out.trim() !== '', {
      error: 'is empty: give the output dir, or remove `out` for the default',
    }),
    {
      group: 'output',
      describe: 'output dir (default: a fresh .membench/run-<timestamp>)',
      defaultText: 'a fresh .membench/run-<timestamp>',
      flag: { name: 'out', alias: 'o', commands: RUN_TUNE, yargs: { type: 'string' } },
      config: true,
    },
  ),
  overwrite: setting(flagOnly<boolean>(), {
    group: 'output',
    describe: 'replace the files of an earlier run in --out',
    default: false,
    flag: { name: 'overwrite', commands: RUN_TUNE, yargs: { type: 'boolean', default: false } },
  }),
  workers: setting(bounded(whole(1, 1024)), {
    group: 'execution',
    describe: (where) =>
      `cells run at once, each in a worker process (default: the core count when every cell ranks only under --protocol, else one more than it${where === 'help' ? `, here ${defaultWorkers()}` : ''}; 1 runs them one after another in one worker; strategy code never runs in this process)`,
    bounds: whole(1, 1024),
    defaultText:
      'one more than the core count; the core count when every cell ranks only (the library: 1, in its own process)',
    flag: { name: 'workers', alias: 'w', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
  }),
  seed: setting(bounded(SEED_RANGE), {
    group: 'matrix',
    describe: 'run seed; each cell derives its own from it',
    helpDefault: true,
    bounds: SEED_RANGE,
    default: 42,
    flag: { name: 'seed', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  trials: setting(bounded(whole(1, 1000)), {
    group: 'matrix',
    describe: 'repetitions of every cell',
    helpDefault: true,
    bounds: whole(1, 1000),
    default: 1,
    flag: { name: 'trials', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  model: setting(z.string(), {
    group: 'providers',
    describe: 'offline (deterministic reference model, the default) or openai:NAME',
    default: 'offline',
    flag: { name: 'model', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  embedder: setting(z.string(), {
    group: 'providers',
    describe:
      'hashed[:DIM] (the default) or openai:NAME[:DIM] (an OpenAI-compatible model; its dimension is learned from its first response unless given)',
    default: 'hashed',
    flag: { name: 'embedder', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  tokenizer: setting(z.string(), {
    group: 'providers',
    describe: "model name whose tiktoken encoding counts tokens (default: the model's; e.g. gpt-4o for o200k_base)",
    defaultText: "the model's",
    flag: { name: 'tokenizer', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  datasets: setting(listOf('[locomo:data/locomo.json]'), {
    group: 'matrix',
    describe: 'import and run a dataset file directly: locomo:FILE or longmemeval:FILE',
    flag: { name: 'dataset', commands: RUN_TUNE, yargs: { type: 'string', array: true } },
    config: true,
    planned: true,
  }),
  limit: setting(bounded(whole(1)), {
    group: 'matrix',
    describe: 'with --dataset: only the first N conversations / questions',
    bounds: whole(1),
    option: 'datasetLimit',
    flag: { name: 'limit', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
    datasetOnly: true,
  }),
  questions: setting(z.array(z.string()).min(1, 'expected at least one id (leave the key out for every question)'), {
    group: 'matrix',
    describe:
      "with --dataset: only this question (LongMemEval's question_id) or conversation (LoCoMo's sample_id), its id exactly as the file writes it or its scenario name in reports (longmemeval-ID); repeatable",
    flag: {
      name: 'question',
      commands: RUN_TUNE,
      yargs: { type: 'string', array: true },
      parse: (raw: readonly unknown[]) => raw.map(String),
    },
    config: true,
    datasetOnly: true,
  }),
  errata: setting(z.string(), {
    group: 'matrix',
    describe:
      'with --dataset: a JSON file of corrected or dropped gold answers, applied at import (see docs/judging.md)',
    flag: { name: 'errata', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
    datasetOnly: true,
  }),
  questionPrompts: setting(z.string(), {
    group: 'matrix',
    describe:
      "with --dataset: a YAML file of templates for how LoCoMo's temporal and adversarial questions are asked ({{question}}; {{a}}, {{b}} for the choices; see docs/datasets.md)",
    flag: { name: 'question-prompts', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
    datasetOnly: true,
  }),
  stretch: setting(bounded(whole(1, 100_000)), {
    group: 'matrix',
    describe: 'stretch every selected scenario to N user turns with seeded filler, probes kept (e.g. 1000, 10000)',
    unit: 'user turns',
    // As long as a `filler` step may be: further growth curves run out of memory, not into insight.
    bounds: whole(1, 100_000),
    flag: { name: 'stretch', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
  }),
  durability: setting(
    z
      .union([z.string().transform((value) => value.split(',').map((mode) => mode.trim())), z.array(z.string())])
      .pipe(z.array(z.enum(DURABILITY_MODES))),
    {
      group: 'matrix',
      describe: 'durability modes for every strategy not given one by --param: sync,async,exit,none',
      defaultText: "each strategy's own",
      option: 'durabilities',
      flag: {
        name: 'durability',
        commands: RUN_TUNE,
        yargs: { type: 'string' },
        parse: (raw: string): DurabilityMode[] | undefined => parseDurabilities(raw),
      },
      config: true,
      planned: true,
    },
  ),
  priceDurability: setting(
    // `none`, as on the flag, turns pricing off (the config file refused the value its own message named).
    listOf('[remember-then-crash]', true).transform((names) => names.filter((name) => name !== 'none')),
    {
      group: 'matrix',
      describe:
        "also replay these scenarios in every strategy's other durability modes, to price sync/async/exit/none (default: remember-then-crash in the default run; none to turn off)",
      defaultText: 'remember-then-crash in the default run',
      flag: {
        name: 'price-durability',
        commands: RUN_TUNE,
        yargs: { type: 'string', array: true },
        parse: (raw: readonly string[]) => raw.flatMap((name) => (name === 'none' ? [] : name.split(','))),
      },
      config: true,
    },
  ),
  crashFuzz: setting(bounded(whole(0, 10_000)), {
    group: 'matrix',
    describe: "kill each cell's agent process at N seeded random crash points (reproducible with --seed)",
    unit: 'crash points per cell',
    bounds: whole(0, 10_000),
    flag: { name: 'crash-fuzz', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  isolate: setting(z.boolean(), {
    group: 'execution',
    describe: "run every cell's agent in child processes, even without faults",
    default: false,
    option: 'agentProcesses',
    flag: { name: 'isolate', commands: RUN_TUNE, yargs: { type: 'boolean' } },
    config: true,
    planned: true,
  }),
  idempotency: setting(z.enum(['one', 'both', 'on', 'off']), {
    group: 'matrix',
    describe:
      'idempotency keys on tool effects: crash cells with side effects run with and without keys for one strategy (one, the default: buffer, else the first), for every strategy (both), or only with (on) or without (off)',
    default: 'one',
    flag: { name: 'idempotency', commands: RUN_TUNE, yargs: { choices: ['one', 'both', 'on', 'off'] as const } },
    config: true,
    planned: true,
  }),
  baseUrl: setting(z.string(), {
    group: 'providers',
    describe: 'OpenAI-compatible endpoint for openai:NAME (default: $OPENAI_BASE_URL)',
    defaultText: '$OPENAI_BASE_URL',
    live: 'baseUrl',
    flag: { name: 'base-url', commands: EVERY, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  apiKey: setting(z.string(), {
    group: 'providers',
    describe: 'API key (default: $OPENAI_API_KEY; never written anywhere)',
    defaultText: '$OPENAI_API_KEY',
    live: 'apiKey',
    flag: { name: 'api-key', commands: EVERY, yargs: { type: 'string' } },
  }),
  concurrency: setting(bounded(whole(1, 1024)), {
    group: 'providers',
    describe: 'live model requests in flight at once, per worker',
    helpDefault: true,
    bounds: whole(1, 1024),
    default: ENDPOINT_DEFAULTS.concurrency,
    live: 'concurrency',
    flag: { name: 'concurrency', commands: EVERY, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  timeout: setting(bounded({ whole: false, min: 1, max: 3_600_000 }), {
    group: 'providers',
    describe: 'live model request timeout in ms',
    helpDefault: true,
    unit: 'ms',
    bounds: { whole: false, min: 1, max: 3_600_000 },
    default: ENDPOINT_DEFAULTS.timeoutMs,
    live: 'timeoutMs',
    flag: { name: 'timeout', commands: EVERY, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  retries: setting(bounded(whole(0, 100)), {
    group: 'providers',
    describe: 'retries on 429/5xx/timeouts',
    helpDefault: true,
    bounds: whole(0, 100),
    default: ENDPOINT_DEFAULTS.maxRetries,
    live: 'maxRetries',
    flag: { name: 'retries', commands: EVERY, yargs: { type: 'string' } },
    config: true,
    planned: true,
  }),
  cache: setting(
    z.union(
      [
        // An empty path (an unset variable) failed in the store's first write: ENOENT, link '.N.new' -> ''.
        z.string().refine((file) => file.trim() !== '', {
          error: 'is empty: give the cache file, or false (--no-cache) for no cache',
        }),
        z.literal(false),
      ],
      { error: (issue) => `expected a file path, or false for no cache; got ${describeInput(issue.input)}` },
    ),
    {
      group: 'providers',
      describe: `response cache file for live models (default ${DEFAULT_CACHE_FILE}); --no-cache to disable`,
      defaultText: `${DEFAULT_CACHE_FILE} (live models only)`,
      flag: {
        name: 'cache',
        commands: EVERY,
        yargs: { type: 'string' },
        // yargs turns --no-cache into false.
        parse: (raw: string | false, flag: string) => cacheFlag(raw, flag),
      },
      config: true,
      planned: true,
    },
  ),
  retrievalK: setting(
    z
      .union([z.string().transform((value) => value.split(',').map(decimalNumber)), z.array(z.number())])
      .pipe(z.array(z.number().int().min(1)).min(1)),
    {
      group: 'matrix',
      describe: `k of the retrieval metrics (recall_any@k, recall_all@k, NDCG@k against probe evidence), comma-separated (default ${DEFAULT_RETRIEVAL_K.join(',')})`,
      defaultText: `${DEFAULT_RETRIEVAL_K.join(',')} (under --protocol, the paper's)`,
      flag: {
        name: 'retrieval-k',
        commands: RUN_TUNE,
        yargs: { type: 'string' },
        parse: (raw: string): number[] | undefined => parseRetrievalK(raw),
      },
      config: true,
      planned: true,
    },
  ),
  protocol: setting(z.enum(PROTOCOLS), {
    group: 'matrix',
    describe:
      "also score retrieval by a paper's own protocol: longmemeval (user turns indexed, session and turn documents, k 1,3,5,10,30,50, abstention left out) or locomo (one utterance per document, and the file's observations and session summaries each replayed in place of the dialog; the share of evidence in the top 5,10,25,50); see docs/protocols.md",
    flag: {
      name: 'protocol',
      commands: RUN_TUNE,
      yargs: { choices: ['longmemeval', 'locomo'] as const },
      parse: (raw: unknown) => oneProtocol(raw),
    },
    config: true,
  }),
  protocolFull: setting(z.boolean(), {
    group: 'matrix',
    describe:
      'with --protocol: run the cells of strategies that rank whole (answers, sampled contexts, durable stores) instead of ranking only (docs/protocols.md)',
    defaultText: 'ranking only',
    flag: { name: 'protocol-full', commands: RUN_TUNE, yargs: { type: 'boolean' } },
    config: true,
  }),
  keepRankings: setting(z.boolean(), {
    group: 'execution',
    describe:
      "store each probe's whole ranking in results.json (default: the top 50, or the deepest k; every figure is scored on the whole ranking either way)",
    defaultText: 'the top 50, or the deepest k',
    flag: { name: 'keep-rankings', commands: RUN_TUNE, yargs: { type: 'boolean' } },
    config: true,
    // What results.json holds: a resumed run keeps it (its earlier cells kept whole rankings or the top).
    planned: true,
  }),
  cellTimeout: setting(bounded({ whole: false, min: 1, max: 604_800 }), {
    group: 'execution',
    describe: 'seconds a cell may run before it is stopped and recorded as an error naming the phase it hung in',
    helpDefault: true,
    unit: 'seconds',
    // A week at most.
    bounds: { whole: false, min: 1, max: 604_800 },
    default: 1800,
    option: 'cellTimeoutMs',
    scale: 1000,
    flag: { name: 'cell-timeout', commands: RUN_TUNE, yargs: { type: 'string' } },
    config: true,
  }),
  keepCellDirs: setting(z.boolean(), {
    group: 'execution',
    describe: "keep each cell's temp dir for inspection",
    default: false,
    flag: { name: 'keep-cell-dirs', commands: RUN_TUNE, yargs: { type: 'boolean' } },
    config: true,
  }),
  quiet: setting(flagOnly<boolean>(), {
    group: 'output',
    describe: 'no progress output',
    default: false,
    flag: { name: 'quiet', alias: 'q', commands: RUN_TUNE, yargs: { type: 'boolean', default: false } },
  }),
  judges: setting(flagOnly<string[]>(), {
    group: 'judging',
    describe:
      "judge every answer: offline (deterministic rules) or openai:NAME (an LLM at temperature 0); twice for agreement (Cohen's κ)",
    flag: {
      name: 'judge',
      commands: RUN_JUDGE,
      yargs: { type: 'string', array: true },
      parse: (raw: readonly string[]) => judgeFlag(raw),
    },
  }),
  judgePrompts: setting(flagOnly<string>(), {
    group: 'judging',
    describe:
      'YAML file with one judge prompt template per question type (default, temporal, knowledge-update, preference, abstention), with {{question}}, {{gold}}, {{response}}',
    flag: { name: 'judge-prompts', commands: RUN_JUDGE, yargs: { type: 'string' } },
  }),
  judgeThreshold: setting(bounded(SHARE), {
    group: 'judging',
    describe: `exit 1 when a judge's answer accuracy is below this share (0..1), it judged nothing, or more than ${100 * MAX_UNPARSED_SHARE} % of its replies were neither yes nor no`,
    bounds: SHARE,
    flag: { name: 'judge-threshold', commands: RUN_JUDGE, yargs: { type: 'string' } },
    config: true,
  }),
  shard: setting(
    z
      .object({ index: z.number().int().min(1), count: z.number().int().min(1) })
      .refine((shard) => shard.index <= shard.count, { error: 'expected index from 1 to count' }),
    {
      group: 'execution',
      describe:
        'run shard I of N of the planned cells (e.g. 2/3; every N-th cell): combine the shards with membench merge',
      flag: { name: 'shard', commands: ['run'], yargs: { type: 'string' }, parse: (raw: string) => parseShard(raw) },
      planned: true,
    },
  ),
  resume: setting(flagOnly<string>(), {
    group: 'output',
    describe:
      'continue the interrupted run in DIR: its finished cells are kept, the rest run (the matrix comes from DIR/plan.json)',
    flag: { name: 'resume', commands: ['run'], yargs: { type: 'string' } },
  }),
  recallThreshold: setting(bounded(SHARE), {
    group: 'output',
    describe: 'junit.xml fails (and the run exits 1 on) cells whose context recall is below this share (0..1)',
    bounds: SHARE,
    flag: { name: 'recall-threshold', commands: ['run'], yargs: { type: 'string' } },
    config: true,
  }),
  detail: setting(flagOnly<boolean>(), {
    group: 'output',
    describe:
      "list every cell in the console, also a scenario group's questions (pooled in their group's leaderboard by default)",
    default: false,
    flag: { name: 'detail', commands: ['run'], yargs: { type: 'boolean', default: false } },
  }),
  profile: setting(z.boolean(), {
    group: 'execution',
    describe:
      'print where the time went by phase (process start, module loading, strategy open, replay, recovery, checks, reports, charts) on stderr',
    default: false,
    flag: { name: 'profile', commands: ['run'], yargs: { type: 'boolean', default: false } },
  }),
  cwd: setting(z.string(), {
    group: 'execution',
    describe: 'resolves relative scenario and strategy module paths',
    defaultText: "the process's working dir",
  }),
  workerProcesses: setting(z.boolean(), {
    group: 'execution',
    describe:
      'run cells in worker processes even with one worker (the CLI always does): strategy code that blocks, hangs or exits costs only its cell',
    default: false,
  }),
} as const;

/** The table's type, for the types derived from it. */
export type Settings = typeof SETTINGS;
export type SettingKey = keyof Settings;
/** A setting's value, as its schema gives it. */
export type SettingValue<K extends SettingKey> = z.output<Settings[K]['schema']>;
/** Values by setting key: what one layer (flags, a config file) sets. */
export type SettingValues = { [K in SettingKey]?: SettingValue<K> };

/** The table's rows with their keys, in table order. */
export function settingEntries(table: Record<string, SettingSpec> = SETTINGS): [string, SettingSpec][] {
  return Object.entries(table);
}

/** The seed a run takes when none is given. */
export const DEFAULT_SEED: number = SETTINGS.seed.default;
/** Half an hour: far beyond any built-in cell offline; long live-model conversations may need --cell-timeout. */
export const DEFAULT_CELL_TIMEOUT_MS: number = SETTINGS.cellTimeout.default * SETTINGS.cellTimeout.scale;
