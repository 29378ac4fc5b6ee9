/**
 * What `run` and `tune` share: the matrix and provider flags, the config file under them
 * (built-in defaults < config file < flags), progress output, and Ctrl-C handling.
 */
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import { SingleBar } from 'cli-progress';
import type { Argv } from 'yargs';
import { formatMs } from '../../reports/summary.js';
import { builtinScenarioNames, builtinSuiteNames } from '../scenarios/builtins.js';
import { findConfigFile, loadConfig, type MembenchConfig } from '../run/config.js';
import { MembenchError } from '../core/errors.js';
import { overwriteWithoutManifestWarning } from '../core/manifest.js';
import { parseNumberFlag } from '../core/numbers.js';
import { RUN_LIMITS } from '../run/limits.js';
import { checkProtocolOption } from '../run/protocol-fit.js';
import type { Protocol } from '../results/protocols.js';
import {
  DEFAULT_CACHE_FILE,
  DEFAULT_CELL_TIMEOUT_MS,
  DEFAULT_SEED,
  retrievalKs,
  type ProgressEvent,
  type RunOptions,
} from '../run/runner.js';
import { isLiveProvider, ResponseCache } from '../models/index.js';
import type { LiveProviderSettings } from '../models/openai.js';
import { loadPrompts } from '../results/judge-prompts.js';
import { checkJudged, createJudge, judgeRun, MAX_UNPARSED_SHARE } from '../results/judges.js';
import type { RunResult } from '../results/schema.js';
import { DURABILITY_MODES, type DurabilityMode } from '../../strategies/types.js';

/** Flags both commands take. No yargs defaults: an absent flag leaves the config file's value (or the built-in default) in place. */

/**
 * One worker more than the cores: a cell in mode sync spends much of its time waiting on fsync
 * (one per acknowledged message), and the extra worker keeps the cores busy meanwhile
 * (docs/default-run.md has the measurement).
 */
export function defaultWorkers(): number {
  return os.availableParallelism() + 1;
}

export function sharedOptions<T>(yargs: Argv<T>) {
  const matrix = yargs
    .option('config', {
      type: 'string',
      describe:
        'config file with the matrix and settings (default: membench.config.yaml, .yml or .json in the working dir, if there is one)',
    })
    .option('scenario', {
      alias: 'c',
      type: 'string',
      array: true,
      describe: `built-in scenario or suite names, or .yaml/.json paths (default: every built-in but the long ones: ${builtinScenarioNames()
        .filter((name) => name !== 'long-recipes')
        .join(', ')}); a suite (${builtinSuiteNames().join(', ')}) expands into its generated scenarios`,
    })
    .option('out', { alias: 'o', type: 'string', describe: 'output dir (default: a fresh .membench/run-<timestamp>)' })
    .option('overwrite', { type: 'boolean', default: false, describe: 'replace the files of an earlier run in --out' })
    .option('workers', {
      alias: 'w',
      type: 'string',
      describe: `cells run at once, each in a worker process (default: one more than the core count, here ${defaultWorkers()}; 1 runs them one after another in one worker; strategy code never runs in this process)`,
    })
    .option('seed', {
      type: 'string',
      describe: `run seed; each cell derives its own from it (default ${DEFAULT_SEED})`,
    })
    .option('trials', { type: 'string', describe: 'repetitions of every cell (default 1)' })
    .option('model', {
      type: 'string',
      describe: 'offline (deterministic reference model, the default) or openai:NAME',
    })
    .option('embedder', {
      type: 'string',
      describe:
        'hashed[:DIM] (the default) or openai:NAME[:DIM] (an OpenAI-compatible model; its dimension is learned from its first response unless given)',
    })
    .option('tokenizer', {
      type: 'string',
      describe: "model name whose tiktoken encoding counts tokens (default: the model's; e.g. gpt-4o for o200k_base)",
    })
    .option('dataset', {
      type: 'string',
      array: true,
      describe: 'import and run a dataset file directly: locomo:FILE or longmemeval:FILE',
    })
    .option('limit', { type: 'string', describe: 'with --dataset: only the first N conversations / questions' })
    .option('question', {
      type: 'string',
      array: true,
      describe:
        "with --dataset: only this question (LongMemEval's question_id) or conversation (LoCoMo's sample_id), as reports name it (longmemeval-ID or ID); repeatable",
    })
    .option('errata', {
      type: 'string',
      describe:
        'with --dataset: a JSON file of corrected or dropped gold answers, applied at import (see docs/judging.md)',
    })
    .option('question-prompts', {
      type: 'string',
      describe:
        "with --dataset: a YAML file of templates for how LoCoMo's temporal and adversarial questions are asked ({{question}}; {{a}}, {{b}} for the choices; see docs/datasets.md)",
    })
    .option('stretch', {
      type: 'string',
      describe: 'stretch every selected scenario to N user turns with seeded filler, probes kept (e.g. 1000, 10000)',
    })
    .option('durability', {
      type: 'string',
      describe: 'durability modes for every strategy not given one by --param: sync,async,exit,none',
    })
    .option('price-durability', {
      type: 'string',
      array: true,
      describe:
        "also replay these scenarios in every strategy's other durability modes, to price sync/async/exit/none (default: remember-then-crash in the default run; none to turn off)",
    })
    .option('crash-fuzz', {
      type: 'string',
      describe: "kill each cell's agent process at N seeded random crash points (reproducible with --seed)",
    })
    .option('isolate', { type: 'boolean', describe: "run every cell's agent in child processes, even without faults" })
    .option('idempotency', {
      choices: ['one', 'both', 'on', 'off'] as const,
      describe:
        'idempotency keys on tool effects: crash cells with side effects run with and without keys for one strategy (one, the default: buffer, else the first), for every strategy (both), or only with (on) or without (off)',
    });
  return liveOptions(matrix)
    .option('retrieval-k', {
      type: 'string',
      describe:
        'k of the retrieval metrics (recall_any@k, recall_all@k, NDCG@k against probe evidence), comma-separated (default 1,5,10)',
    })
    .option('protocol', {
      choices: ['longmemeval', 'locomo'] as const,
      describe:
        "also score retrieval by a paper's own protocol: longmemeval (user turns indexed, session and turn documents, k 1,3,5,10,30,50, abstention left out) or locomo (one utterance per document, and the file's observations and session summaries each replayed in place of the dialog; the share of evidence in the top 5,10,25,50); see docs/protocols.md",
    })
    .option('keep-rankings', {
      type: 'boolean',
      describe:
        "store each probe's whole ranking in results.json (default: the top 50, or the deepest k; every figure is scored on the whole ranking either way)",
    })
    .option('cell-timeout', {
      type: 'string',
      describe: `seconds a cell may run before it is stopped and recorded as an error naming the phase it hung in (default ${DEFAULT_CELL_TIMEOUT_MS / 1000})`,
    })
    .option('keep-cell-dirs', { type: 'boolean', describe: "keep each cell's temp dir for inspection" })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'no progress output' });
}

/** The flags of a live endpoint (`run`, `tune`, and `judge` for its LLM judges); the key is never written anywhere. */
export function liveOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('base-url', {
      type: 'string',
      describe: 'OpenAI-compatible endpoint for openai:NAME (default: $OPENAI_BASE_URL)',
    })
    .option('api-key', { type: 'string', describe: 'API key (default: $OPENAI_API_KEY; never written anywhere)' })
    .option('concurrency', {
      type: 'string',
      describe: 'live model requests in flight at once, per worker (default 4)',
    })
    .option('timeout', { type: 'string', describe: 'live model request timeout in ms (default 60000)' })
    .option('retries', { type: 'string', describe: 'retries on 429/5xx/timeouts (default 3)' })
    .option('cache', {
      type: 'string',
      describe: 'response cache file for live models (default .membench/cache.sqlite); --no-cache to disable',
    });
}

/** The parsed shared flags. */
export type SharedArgs = ReturnType<typeof sharedOptions<object>> extends Argv<infer T> ? T : never;

/** `sync,exit` → ['sync', 'exit'], refusing unknown modes. */
export function parseDurabilities(value: string | undefined): DurabilityMode[] | undefined {
  if (value === undefined) return undefined;
  const modes = value.split(',').map((mode) => mode.trim());
  const bad = modes.find((mode) => !DURABILITY_MODES.includes(mode as DurabilityMode));
  if (bad !== undefined)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--durability ${value}: "${bad}" is not one of ${DURABILITY_MODES.join(', ')}`,
    );
  return modes as DurabilityMode[];
}

/** `1,5,10` → [1, 5, 10], refusing anything but whole numbers >= 1. */
export function parseRetrievalK(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  return retrievalKs(
    value.split(',').map((k) => (k.trim() === '' ? Number.NaN : Number(k.trim()))),
    value,
  );
}

/** Keeps the keys whose value is defined: what a layer actually sets. */
function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, inner]) => inner !== undefined)) as Partial<T>;
}

/** The run options a layer (config file or flags) sets; `strategies`/`params` come in from the caller's own flags. */
export function layerOptions(layer: Omit<MembenchConfig, 'out' | 'workers' | 'recallThreshold'>): RunOptions {
  const live = defined({
    baseUrl: layer.baseUrl,
    concurrency: layer.concurrency,
    timeoutMs: layer.timeout,
    maxRetries: layer.retries,
  });
  return defined({
    strategies: layer.strategies,
    scenarios: layer.scenarios,
    params: layer.params,
    seed: layer.seed,
    trials: layer.trials,
    model: layer.model,
    embedder: layer.embedder,
    tokenizer: layer.tokenizer,
    durabilities: layer.durability,
    idempotency: layer.idempotency,
    crashFuzz: layer.crashFuzz,
    isolate: layer.isolate,
    datasets: layer.datasets,
    datasetLimit: layer.limit,
    questions: layer.questions,
    errata: layer.errata,
    questionPrompts: layer.questionPrompts,
    stretch: layer.stretch,
    priceDurability: layer.priceDurability,
    cache: layer.cache,
    keepCellDirs: layer.keepCellDirs,
    retrievalK: layer.retrievalK,
    protocol: layer.protocol,
    keepRankings: layer.keepRankings,
    cellTimeoutMs: layer.cellTimeout === undefined ? undefined : layer.cellTimeout * 1000,
    live: Object.keys(live).length ? live : undefined,
  });
}

/** The live endpoint's numeric flags, parsed (`run`, `tune`, `judge`): the config file's key names. */
export function liveNumbers(argv: { concurrency?: string; timeout?: string; retries?: string }): {
  concurrency?: number;
  timeout?: number;
  retries?: number;
} {
  return {
    concurrency: parseNumberFlag('--concurrency', argv.concurrency, RUN_LIMITS.concurrency),
    timeout: parseNumberFlag('--timeout', argv.timeout, RUN_LIMITS.timeout),
    retries: parseNumberFlag('--retries', argv.retries, RUN_LIMITS.retries),
  };
}

/** The flags' layer, in the config file's shape. */
export function flagLayer(argv: SharedArgs, own: Pick<MembenchConfig, 'strategies' | 'params'> = {}): MembenchConfig {
  return defined({
    ...own,
    scenarios: argv.scenario,
    seed: parseNumberFlag('--seed', argv.seed, RUN_LIMITS.seed),
    trials: parseNumberFlag('--trials', argv.trials, RUN_LIMITS.trials),
    model: argv.model,
    embedder: argv.embedder,
    tokenizer: argv.tokenizer,
    durability: parseDurabilities(argv.durability),
    idempotency: argv.idempotency,
    crashFuzz: parseNumberFlag('--crash-fuzz', argv['crash-fuzz'], RUN_LIMITS.crashFuzz),
    isolate: argv.isolate,
    datasets: argv.dataset,
    limit: parseNumberFlag('--limit', argv.limit, RUN_LIMITS.limit),
    questions: argv.question?.map(String),
    errata: argv.errata,
    questionPrompts: argv['question-prompts'],
    stretch: parseNumberFlag('--stretch', argv.stretch, RUN_LIMITS.stretch),
    priceDurability: argv['price-durability']?.flatMap((name) => (name === 'none' ? [] : name.split(','))),
    // yargs turns --no-cache into cache: false.
    cache: argv.cache as string | false | undefined,
    baseUrl: argv['base-url'],
    ...liveNumbers(argv),
    keepCellDirs: argv['keep-cell-dirs'],
    retrievalK: parseRetrievalK(argv['retrieval-k']),
    protocol: oneProtocol(argv.protocol),
    keepRankings: argv['keep-rankings'],
    cellTimeout: parseNumberFlag('--cell-timeout', argv['cell-timeout'], RUN_LIMITS.cellTimeout),
    workers: parseNumberFlag('--workers', argv.workers, RUN_LIMITS.workers),
    out: argv.out,
  }) as MembenchConfig;
}

/** `--protocol` given once: yargs hands a repeated flag over as a list, refused here with its values. */
function oneProtocol(value: unknown): Protocol | undefined {
  checkProtocolOption(value);
  return value;
}

/** What the built-in defaults say for the options a resumed run compares. */
export const RUN_DEFAULTS = {
  seed: DEFAULT_SEED,
  trials: 1,
  model: 'offline',
  embedder: 'hashed',
  idempotency: 'one',
  isolate: false,
} as const satisfies RunOptions;

/** The layers merged: defaults < config file < flags (live settings merged key by key; the API key only from the flag). */
export async function resolveLayers(
  argv: SharedArgs,
  flags: MembenchConfig,
): Promise<{ options: RunOptions; config: MembenchConfig; workers: number; out?: string }> {
  const file = findConfigFile(argv.config);
  const config = file ? await loadConfig(file) : {};
  const [fromConfig, fromFlags] = [layerOptions(config), layerOptions(flags)];
  const live = {
    ...fromConfig.live,
    ...fromFlags.live,
    ...(argv['api-key'] !== undefined ? { apiKey: argv['api-key'] } : {}),
  };
  const options: RunOptions = { ...RUN_DEFAULTS, ...fromConfig, ...fromFlags, live };
  const workers = flags.workers ?? config.workers ?? defaultWorkers();
  const out = flags.out ?? config.out;
  return { options, config, workers, ...(out !== undefined ? { out } : {}) };
}

/** Per strategy setting of a scenario group: questions done of planned, and an ETA from this run's pace for that setting. */
export class GroupProgress {
  private readonly units = new Map<string, { total: number; done: number; ran: number; ms: number }>();

  constructor(
    plan: readonly { setting: string; group?: string; done: boolean }[],
    private readonly workers = 1,
  ) {
    for (const cell of plan) {
      if (cell.group === undefined) continue;
      const unit = this.units.get(GroupProgress.key(cell.group, cell.setting)) ?? { total: 0, done: 0, ran: 0, ms: 0 };
      unit.total++;
      if (cell.done) unit.done++;
      this.units.set(GroupProgress.key(cell.group, cell.setting), unit);
    }
  }

  private static key(group: string, setting: string): string {
    return `${group} · ${setting}`;
  }

  /**
   * Counts a finished cell; returns "GROUP · SETTING 40/500 questions, ETA 1m20s" for a grouped one
   * (without " · SETTING" when `named` is false: a line that names the cell already).
   */
  finished(cell: { group?: string; setting: string; durationMs: number }, named = true): string | undefined {
    if (cell.group === undefined) return undefined;
    const key = GroupProgress.key(cell.group, cell.setting);
    const unit = this.units.get(key);
    if (!unit) return undefined;
    unit.done++;
    unit.ran++;
    unit.ms += cell.durationMs;
    const left = unit.total - unit.done;
    const eta = left > 0 ? `, ETA ${formatDuration(((unit.ms / unit.ran) * left) / this.workers)}` : ', done';
    return `${named ? key : cell.group} ${unit.done}/${unit.total} questions${eta}`;
  }
}

/** 75 s → "1m15s". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds >= 60 ? `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s` : `${seconds}s`;
}

/** Progress on stderr: a bar with ETA on a terminal, one line per cell otherwise; a scenario group's questions counted per strategy; nothing when quiet. */
export function progressReporter(
  quiet: boolean,
  tty = Boolean(process.stderr.isTTY),
  workers = 1,
): { onProgress: (event: ProgressEvent) => void; stop: () => void } {
  if (quiet) return { onProgress: () => undefined, stop: () => undefined };
  let groups = new GroupProgress([], workers);
  if (tty) {
    const bar = new SingleBar({
      format: 'membench |{bar}| {value}/{total} cells | {percentage}% | ETA {eta_formatted} | {last}',
      hideCursor: true,
      etaBuffer: 20,
    });
    let started = false;
    return {
      onProgress: (event) => {
        if (event.type === 'start') {
          groups = new GroupProgress(event.units, workers);
          bar.start(event.cells, event.finished, { last: event.finished ? `${event.finished} finished earlier` : '' });
          started = true;
        } else
          bar.increment({
            last: groups.finished(event.result) ?? `${event.result.id}${event.result.status === 'ok' ? '' : ' ERROR'}`,
          });
      },
      stop: () => {
        if (started) bar.stop();
        started = false;
      },
    };
  }
  const log = (line: string): boolean => process.stderr.write(`${line}\n`);
  /** Cells finished, those of an earlier attempt included: `[i/n]` counts cells done, not plan positions (cells run costliest first). */
  let done = 0;
  return {
    onProgress: (event) => {
      if (event.type === 'start') {
        groups = new GroupProgress(event.units, workers);
        done = event.finished;
        log(
          `membench: running ${event.cells - event.finished} cells${event.finished ? ` (${event.finished} of ${event.cells} finished earlier)` : ''}`,
        );
        return;
      }
      const { result: cell } = event;
      const recall = cell.status === 'ok' ? cell.recall.contextRecall.value : null;
      const status =
        cell.status === 'ok' ? `recall ${recall === null ? '–' : recall.toFixed(2)}` : `ERROR ${cell.error}`;
      // The line starts with the cell's id (scenario/setting): the group's part names no setting again.
      const group = groups.finished(cell, false);
      done++;
      log(
        `[${done}/${event.cells}] ${cell.id}  ${status}  ${formatMs(cell.durationMs)} ms${group ? `  (${group})` : ''}`,
      );
    },
    stop: () => undefined,
  };
}

/**
 * Ctrl-C (and SIGTERM, e.g. a CI job cancelled) abort the signal instead of killing the process;
 * a second one exits at once. Either way the exit code is 130, as documented for an interrupt.
 */
export function interruptOnSignals(): { signal: AbortSignal; dispose: () => void; exitCode: () => number } {
  const controller = new AbortController();
  const code = 130;
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((name) => {
    const handler = (): void => {
      if (controller.signal.aborted) process.exit(code);
      controller.abort();
    };
    process.on(name, handler);
    return [name, handler] as const;
  });
  return {
    signal: controller.signal,
    dispose: () => handlers.forEach(([name, handler]) => process.off(name, handler)),
    exitCode: () => code,
  };
}

/** Refuses an empty `--out` (`-o ""`, an unset variable in a script), which would write into the working dir. */
export function checkOutFlag(out: string): void {
  if (out.trim() === '')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      '--out is empty (an unset variable?): give the output dir, or leave --out out for the default',
    );
}

/** Refuses to write scenario files into a dir that already holds some (an earlier import or generate), unless `overwrite`. */
export async function refuseScenarioFiles(dir: string, overwrite: boolean): Promise<void> {
  let existing: string[];
  try {
    existing = (await readdir(dir)).filter((name) => /\.ya?ml$/iu.test(name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new MembenchError('INVALID_ARGUMENT', `--out ${dir}: cannot read: ${(error as Error).message}`);
  }
  if (existing.length > 0 && !overwrite) {
    throw new MembenchError(
      'OUTPUT_EXISTS',
      `${dir} already holds ${existing.length} scenario file${existing.length === 1 ? '' : 's'} (${existing.slice(0, 3).join(', ')}${existing.length > 3 ? ', ...' : ''}): choose another --out, or pass --overwrite`,
    );
  }
}

/** With `--overwrite`, says on stderr what an output dir without a manifest keeps (docs/failing-loudly.md). */
export async function warnOverwriteWithoutManifest(
  dir: string,
  overwrite: boolean,
  replaced: readonly string[],
): Promise<void> {
  if (!overwrite) return;
  const warning = await overwriteWithoutManifestWarning(dir, replaced);
  if (warning) process.stderr.write(`${warning}\n`);
}

/** The judge flags `run` and `judge` share. */
export function judgeOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('judge', {
      type: 'string',
      array: true,
      describe:
        "judge every answer: offline (deterministic rules) or openai:NAME (an LLM at temperature 0); twice for agreement (Cohen's κ)",
    })
    .option('judge-prompts', {
      type: 'string',
      describe:
        'YAML file with one judge prompt template per question type (default, temporal, knowledge-update, preference, abstention), with {{question}}, {{gold}}, {{response}}',
    })
    .option('judge-threshold', {
      type: 'string',
      describe: `exit 1 when a judge's answer accuracy is below this share (0..1), it judged nothing, or more than ${100 * MAX_UNPARSED_SHARE} % of its replies were neither yes nor no`,
    });
}

/** `--judge-threshold`, parsed (0..1). */
export function judgeThreshold(raw: string | undefined): number | undefined {
  return parseNumberFlag('--judge-threshold', raw, RUN_LIMITS.recallThreshold);
}

/**
 * Says on stderr what the judges that just ran did not measure (a judge that judged nothing or could
 * not read its replies) and, with `threshold`, why the judge gate fails; returns whether it failed.
 */
export function reportJudgeGate(result: RunResult, judges: readonly string[], threshold: number | undefined): boolean {
  const gate = checkJudged(result, judges, threshold);
  for (const warning of gate.warnings) process.stderr.write(`${warning}\n`);
  for (const failure of gate.failures) process.stderr.write(`FAILED judge: ${failure}\n`);
  return gate.failures.length > 0;
}

/** What judging needs besides the judges: where live judges connect (flags and env) and the response cache. */
export interface JudgeSettings {
  judges: readonly string[];
  promptsFile?: string | undefined;
  live?: LiveProviderSettings | undefined;
  /** A file, or false for none (default DEFAULT_CACHE_FILE). */
  cache?: string | false | undefined;
}

/** `--judge` as given: a flag with no value (`--judge` last, or before another flag) is refused, never read as "no judge". */
export function judgeFlag(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  if (values.length === 0 || values.some((value) => value.trim() === ''))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      '--judge needs a value: offline (deterministic rules) or openai:NAME (an LLM judge)',
    );
  return [...values];
}

/**
 * Refuses a live provider (`openai:NAME` as model, embedder or judge) with neither a base URL nor an
 * API key, before any request: the SDK's default endpoint is the public api.openai.com, where the
 * answers (and their gold) would go unasked.
 */
export function checkLiveEndpoint(
  providers: readonly { flag: string; provider: string | undefined }[],
  live: LiveProviderSettings | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): void {
  const chosen = [live?.baseUrl, env.OPENAI_BASE_URL, live?.apiKey, env.OPENAI_API_KEY].some(
    (value) => value !== undefined && value.trim() !== '',
  );
  if (chosen) return;
  const first = providers.find(({ provider }) => provider !== undefined && isLiveProvider(provider));
  if (!first) return;
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `${first.flag} ${first.provider}: no endpoint is set: with neither a base URL (--base-url, $OPENAI_BASE_URL) nor an API key (--api-key, $OPENAI_API_KEY) the requests would go to the public https://api.openai.com/v1 without a key: give --base-url for a local server (Ollama, vLLM, membench serve), or a key for OpenAI`,
  );
}

/** Refuses an unknown judge or a bad prompts file before any work is done (a run is not replayed to fail at its end). */
export async function checkJudgeSettings(settings: JudgeSettings): Promise<void> {
  if (settings.promptsFile !== undefined && !settings.judges.some(isLiveProvider))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      settings.judges.length === 0
        ? `--judge-prompts ${settings.promptsFile}: name a judge with --judge openai:NAME`
        : `--judge-prompts ${settings.promptsFile}: no LLM judge reads it (the offline judge scores by its rules): name one with --judge openai:NAME, or drop --judge-prompts`,
    );
  const twice = settings.judges.find((judge, index) => settings.judges.indexOf(judge) !== index);
  if (twice !== undefined)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--judge ${twice} is given twice: name two different judges for agreement`,
    );
  for (const judge of settings.judges) createJudge(judge, { cache: false, provider: settings.live ?? {} });
  checkLiveEndpoint(
    settings.judges.map((judge) => ({ flag: '--judge', provider: judge })),
    settings.live,
  );
  if (settings.promptsFile !== undefined) await loadPrompts(settings.promptsFile);
}

/** Judges `result` with each judge in turn (live ones through the response cache), returning the judged copy. */
export async function judgeResults(result: RunResult, settings: JudgeSettings): Promise<RunResult> {
  const prompts = settings.promptsFile === undefined ? undefined : await loadPrompts(settings.promptsFile);
  const live = settings.judges.some(isLiveProvider);
  const cache = live && settings.cache !== false ? ResponseCache.open(settings.cache ?? DEFAULT_CACHE_FILE) : undefined;
  try {
    const judges = settings.judges.map((judge) =>
      createJudge(judge, { ...(prompts ? { prompts } : {}), provider: settings.live ?? {}, cache: cache ?? false }),
    );
    return await judgeRun(result, judges);
  } finally {
    cache?.close();
  }
}
