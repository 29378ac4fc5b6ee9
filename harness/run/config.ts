/**
 * `membench.config.yaml` / `.json`: the run matrix and settings in a file, so CI invocations stay
 * short. Validated with zod at the edge; every problem located as `file:line:col: path: message`
 * with the scenario loader's helpers. Relative paths in the file resolve against its own dir.
 */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { MembenchError } from '../core/errors.js';
import { didYouMean } from '../core/user-input.js';
import { jsonSyntaxError, positionOf } from '../core/json-errors.js';
import {
  describeIssue,
  documentValue,
  formatPath,
  formatProblem,
  invalidSyntax,
  isJsonFile,
  Locator,
  readDocumentFile,
  yamlErrorMessage,
  yamlLineBreaks,
  type Problem,
} from '../scenarios/load.js';
import { Errata, parseDatasetArg } from '../scenarios/importers/index.js';
import { loadQuestionPrompts } from '../scenarios/importers/question-prompts.js';
import { builtinSuiteFile, builtinSuiteOf, resolveScenarioFile } from '../scenarios/builtins.js';
import { checkModuleFile, isModuleSource, loadStrategyDefinition } from '../../strategies/loader.js';
import { builtinStrategies } from '../../strategies/index.js';
import type { StrategyDefinition } from '../../strategies/types.js';
import { checkBaseUrl } from '../models/endpoint.js';
import { checkProviderName } from '../models/index.js';
import { expandStrategies } from './params.js';
import { checkProtocolParams } from './protocol-fit.js';
import { configSchema } from './setting-sources.js';
import { settingEntries } from './settings.js';

/** Looked for in the working dir when no `--config` is given, in this order (two at once is an error). */
export const CONFIG_FILES = ['membench.config.yaml', 'membench.config.yml', 'membench.config.json'] as const;

/** A validated config file, paths resolved and `params` as `-p` strings; its schema is the settings table's (harness/run/settings.ts). */
export type MembenchConfig = z.output<typeof configSchema>;

const KNOWN_KEYS = Object.keys(configSchema.shape);

const CONFIG_DOCUMENT = { noun: 'config file', holds: 'run settings, e.g. `strategies: [buffer, window]`' };
/** A config file larger than this is refused: a matrix and its settings take a few kB, so more is the wrong file. */
export const MAX_CONFIG_BYTES = 1024 * 1024;
const SECRET_KEYS = new Set(['apiKey', 'api-key', 'api_key', 'key']);
const FROM_CONFIG_DIR = "; relative paths are read from the config file's dir";

/** A `scenarios` entry naming a file (read next to the config file) rather than a built-in scenario or suite. */
const isScenarioPath = (nameOrPath: string): boolean =>
  nameOrPath.includes('/') || nameOrPath.includes(path.sep) || /\.(ya?ml|json)$/iu.test(nameOrPath);

/** The config file to read: `--config FILE`, else the one in `cwd` (undefined: none). */
export function findConfigFile(explicit: string | undefined, cwd = process.cwd()): string | undefined {
  // `--config ""` (an unset variable in a script) would resolve to the working dir itself.
  if (explicit?.trim() === '')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      '--config is empty (an unset variable?): give the config file, or leave --config out to read membench.config.yaml from the working dir',
    );
  if (explicit !== undefined) return path.resolve(cwd, explicit);
  const found = CONFIG_FILES.filter((name) => existsSync(path.join(cwd, name)));
  if (found.length > 1)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${cwd} holds ${found.join(' and ')}: keep one config file, or name one with --config`,
    );
  return found[0] && path.join(cwd, found[0]);
}

/**
 * Reads and validates a config file; every problem is located, all reported at once (exit 2).
 * `flags`: the ones the file sits under, whose --dataset is what the file's `limit` or `questions` may act on.
 */
export async function loadConfig(file: string, flags: { datasets?: readonly string[] } = {}): Promise<MembenchConfig> {
  // Relative where it is under the working dir, else as the user can find it (`../../etc/x.yaml` read as a puzzle).
  const relative = path.relative(process.cwd(), file);
  const shown = relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
  const read = await readDocumentFile(file, MAX_CONFIG_BYTES, CONFIG_DOCUMENT);
  if ('problems' in read)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      formatProblem({ ...read.problems[0]!, file: shown }).replace(': cannot read:', ': cannot read the config file:'),
    );
  const text = yamlLineBreaks(read.text.replace(/^\uFEFF/u, ''));
  const problems: Problem[] = [];
  const fail = (where: { line: number; col: number }, at: readonly (string | number)[], message: string): void => {
    problems.push({ file: shown, ...where, path: formatPath(at), message, severity: 'error' });
  };
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    lineCounter: lines,
    prettyErrors: false,
    uniqueKeys: true,
  });
  const jsonError = isJsonFile(file) ? jsonSyntaxError(text) : undefined;
  if (jsonError) fail(jsonError.where, [], `${invalidSyntax(file)}: ${jsonError.message}`);
  else
    for (const error of doc.errors)
      fail(
        error.linePos?.[0] ?? positionOf(text, error.pos[0]),
        [],
        `${invalidSyntax(file)}: ${yamlErrorMessage(error, text, CONFIG_DOCUMENT)}`,
      );
  const locate = new Locator(doc, lines);
  let value: unknown;
  if (problems.length === 0) {
    const converted = documentValue(doc, file);
    if ('problem' in converted)
      fail(
        converted.offset === undefined ? { line: 1, col: 1 } : lines.linePos(converted.offset),
        [],
        converted.problem,
      );
    // An empty file is a mistake (a truncated commit, the wrong file), not "the default matrix".
    else if (converted.value === null || converted.value === undefined)
      fail(
        { line: 1, col: 1 },
        [],
        'the config file is empty: give at least one setting, e.g. `strategies: [buffer, window]`, or remove the file',
      );
    else value = converted.value;
  }
  if (problems.length === 0 && (value === null || typeof value !== 'object' || Array.isArray(value)))
    fail(locate.value([]), [], 'expected a mapping of settings, e.g. `strategies: [buffer, window]`');
  if (problems.length === 0) {
    for (const key of Object.keys(value as object)) {
      if (SECRET_KEYS.has(key))
        fail(
          locate.key([key]),
          [key],
          'API keys do not belong in a config file (it gets committed): set $OPENAI_API_KEY',
        );
      else if (!KNOWN_KEYS.includes(key))
        fail(
          locate.key([key]),
          [key],
          `unknown setting "${key}"${didYouMean(key, KNOWN_KEYS)} (known: ${KNOWN_KEYS.join(', ')})`,
        );
    }
    const parsed = configSchema.safeParse(value, { reportInput: true });
    if (!parsed.success)
      for (const issue of parsed.error.issues)
        fail(locate.value(issue.path as (string | number)[]), issue.path as (string | number)[], describeIssue(issue));
    if (problems.length === 0 && parsed.success) {
      const config = parsed.data;
      if (!config.datasets?.length && !flags.datasets?.length)
        for (const [key] of settingEntries().filter(
          ([name, spec]) => spec.datasetOnly && config[name as keyof MembenchConfig] !== undefined,
        ))
          fail(
            locate.key([key]),
            [key],
            'applies to dataset imports only: it needs `datasets:` (e.g. `datasets: [locomo:data/locomo10.json]`) or --dataset; else drop it',
          );
      await checkSettings(value as Record<string, unknown>, config, path.dirname(file), (at, message) =>
        fail(locate.value(at), at, message),
      );
      if (problems.length === 0) return resolvePaths(config, path.dirname(file));
    }
  }
  problems.sort((a, b) => a.line - b.line || a.col - b.col);
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `${shown}: invalid config file (${problems.length} problem${problems.length === 1 ? '' : 's'})`,
    problems.map(formatProblem),
  );
}

/** The path of the `index`th item of a setting that is a string or a list (`strategies: x` or `strategies: [x, y]`). */
const itemPath = (raw: unknown, key: string, index: number): (string | number)[] =>
  Array.isArray(raw) ? [key, index] : [key];

/** A flag's message reworded for a config entry: `--param window.k=0: …` → `window.k=0: …`. */
const unflagged = (error: unknown): string =>
  (error as Error).message.replace(/(^| )--param /gu, '$1').replace(/^openai: /u, '');

/**
 * What the schema cannot see but the run would refuse, checked here so the message names the
 * file, line and column: unknown strategy names, `params` entries (unknown strategy or knob, a bad
 * or repeated value), a `model` or `embedder` no provider answers to (`embedder: hashed:0`) and a
 * `baseUrl` carrying credentials. Strategy modules are loaded by the run
 * only (importing a user's module twice would run its side effects twice).
 */
async function checkSettings(
  raw: Record<string, unknown>,
  config: MembenchConfig,
  dir: string,
  fail: (at: (string | number)[], message: string) => void,
): Promise<void> {
  await checkDataFiles(raw, config, dir, fail);
  for (const [index, nameOrPath] of (config.scenarios ?? []).entries()) {
    const at = itemPath(raw.scenarios, 'scenarios', index);
    if (isScenarioPath(nameOrPath)) {
      const where = path.resolve(dir, nameOrPath);
      const info = await stat(where).catch(() => undefined);
      if (!info?.isFile())
        fail(at, `${nameOrPath}: ${info ? 'not a file' : 'no such file'} (${where}${FROM_CONFIG_DIR})`);
    } else
      try {
        if (!builtinSuiteFile(nameOrPath) && !builtinSuiteOf(nameOrPath)) resolveScenarioFile(nameOrPath);
      } catch (error) {
        if (!(error instanceof MembenchError)) throw error;
        fail(at, error.message);
      }
  }
  const definitions: StrategyDefinition[] = [];
  let checkable = true;
  for (const [index, source] of (config.strategies ?? []).entries()) {
    if (isModuleSource(source)) {
      checkable = false;
      try {
        await checkModuleFile(source, dir);
      } catch (error) {
        if (!(error instanceof MembenchError)) throw error;
        const missing = error.code === 'UNKNOWN_STRATEGY' && !path.isAbsolute(source) && !source.startsWith('file:');
        fail(
          itemPath(raw.strategies, 'strategies', index),
          `${error.message}${missing ? ` (${FROM_CONFIG_DIR.slice(2)})` : ''}`,
        );
      }
      continue;
    }
    try {
      definitions.push(await loadStrategyDefinition(source));
    } catch (error) {
      if (!(error instanceof MembenchError)) throw error;
      fail(itemPath(raw.strategies, 'strategies', index), error.message);
      checkable = false;
    }
  }
  if (checkable && config.params) {
    const selected = config.strategies ? definitions : [...builtinStrategies];
    const paths = Array.isArray(raw.params)
      ? config.params.map((_, index) => ['params', index])
      : typeof raw.params === 'string'
        ? [['params']]
        : Object.keys(raw.params as object).map((knob) => ['params', knob]);
    let located = false;
    for (const [index, param] of config.params.entries()) {
      try {
        expandStrategies(selected, [param]);
      } catch (error) {
        if (!(error instanceof MembenchError)) throw error;
        fail(paths[index] ?? ['params'], unflagged(error));
        located = true;
      }
    }
    // A knob the file's protocol sets, given another value (`protocol: locomo` with `bm25.unit=session`).
    for (const [index, param] of config.protocol !== undefined && !located ? config.params.entries() : []) {
      try {
        checkProtocolParams(config.protocol!, [param]);
      } catch (error) {
        if (!(error instanceof MembenchError)) throw error;
        fail(paths[index] ?? ['params'], unflagged(error));
        located = true;
      }
    }
    // Entries fine one by one may still repeat a setting between them (`window.k=2` twice).
    if (!located) {
      try {
        expandStrategies(selected, config.params);
      } catch (error) {
        if (!(error instanceof MembenchError)) throw error;
        fail(['params'], unflagged(error));
      }
    }
  }
  for (const kind of ['model', 'embedder'] as const) {
    const provider = config[kind];
    if (provider === undefined) continue;
    try {
      checkProviderName(kind, provider);
    } catch (error) {
      if (!(error instanceof MembenchError)) throw error;
      fail([kind], error.message);
    }
  }
  if (config.baseUrl !== undefined) {
    try {
      checkBaseUrl(config.baseUrl);
    } catch (error) {
      if (!(error instanceof MembenchError)) throw error;
      fail(['baseUrl'], unflagged(error));
    }
  }
}

/**
 * The `datasets` entries (a known dataset, a file that is there), the `errata` and
 * `questionPrompts` files (readable and valid), so the run's refusal of them names the config
 * file's line instead of a flag or the bare file.
 */
async function checkDataFiles(
  raw: Record<string, unknown>,
  config: MembenchConfig,
  dir: string,
  fail: (at: (string | number)[], message: string) => void,
): Promise<void> {
  const refusal = (error: unknown): string => {
    if (!(error instanceof MembenchError)) throw error;
    return [error.message.replace(/^--dataset /u, ''), ...error.details].join('; ');
  };
  for (const [index, arg] of (config.datasets ?? []).entries()) {
    try {
      const { file } = parseDatasetArg(arg);
      const where = path.resolve(dir, file);
      const info = await stat(where).catch(() => undefined);
      if (!info?.isFile())
        fail(
          itemPath(raw.datasets, 'datasets', index),
          `${arg}: ${info ? 'not a file' : 'no such file'} (${where}${FROM_CONFIG_DIR})`,
        );
    } catch (error) {
      fail(itemPath(raw.datasets, 'datasets', index), refusal(error));
    }
  }
  if (config.errata !== undefined) {
    try {
      await Errata.load(path.resolve(dir, config.errata));
    } catch (error) {
      fail(['errata'], refusal(error));
    }
  }
  // The file only: whether the run's dataset takes templates (LoCoMo's do) is the run's own check.
  if (config.questionPrompts !== undefined) {
    try {
      await loadQuestionPrompts(path.resolve(dir, config.questionPrompts), 'locomo');
    } catch (error) {
      fail(['questionPrompts'], refusal(error));
    }
  }
}

/** Relative paths in the file mean "next to the file": module strategies, scenario files, dataset files, errata, question prompts, out, cache. */
function resolvePaths(config: MembenchConfig, dir: string): MembenchConfig {
  const resolve = (file: string): string => path.resolve(dir, file);
  return {
    ...config,
    ...(config.strategies
      ? {
          strategies: config.strategies.map((source) =>
            isModuleSource(source) && !source.startsWith('file:') ? resolve(source) : source,
          ),
        }
      : {}),
    ...(config.scenarios
      ? {
          scenarios: config.scenarios.map((nameOrPath) =>
            isScenarioPath(nameOrPath) ? resolve(nameOrPath) : nameOrPath,
          ),
        }
      : {}),
    ...(config.datasets
      ? {
          datasets: config.datasets.map((arg) =>
            arg.replace(/^([a-z]+):(.+)$/u, (_, kind: string, file: string) => `${kind}:${resolve(file)}`),
          ),
        }
      : {}),
    ...(config.errata ? { errata: resolve(config.errata) } : {}),
    ...(config.questionPrompts ? { questionPrompts: resolve(config.questionPrompts) } : {}),
    ...(config.out ? { out: resolve(config.out) } : {}),
    ...(typeof config.cache === 'string' ? { cache: resolve(config.cache) } : {}),
  };
}
