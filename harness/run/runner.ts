/**
 * The runner: scenarios × strategies × parameter sets × trials, each cell replayed in its own
 * temp dir with its own seed, every failure recorded as a result rather than thrown. Cells run
 * here one after another, or in a pool of worker processes; a shard runs every n-th cell; a
 * cell store persists finished cells so an interrupted run resumes where it stopped.
 */
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  needsProcesses,
  openProviders,
  runCell,
  type CellPlan,
  type CellTask,
  type LiveProviderSettings,
  type ProviderSettings,
} from './cell.js';
import { expandFillers, stretchScenario } from '../scenarios/filler.js';
import { durabilityMatrix, modePrices } from '../results/durability-matrix.js';
import { formatImportReport, importDataset, QuestionFilter, type ErrataReport } from '../scenarios/importers/index.js';
import { builtinScenarioNames, loadScenarios } from '../scenarios/builtins.js';
import { MembenchError } from '../core/errors.js';
import { machineId } from '../core/machine.js';
import { closestString } from '../core/text.js';
import { startCalibration, type Calibration } from '../core/calibration.js';
import { MEMBENCH_VERSION, membenchCommit } from '../core/package-info.js';
import { checkRunNumbers } from './limits.js';
import { expandStrategies, type StrategySetting } from './params.js';
import { runInPool, RunInterrupted } from './pool.js';
import { withinTimeLimit } from './cell-timeout.js';
import { makeRunTempDir } from './temp-dirs.js';
import { RESULTS_SCHEMA_VERSION, type CellResult, type RunResult } from '../results/schema.js';
import { DEFAULT_RETRIEVAL_K } from '../results/retrieval.js';
import { PROTOCOL_K, PROTOCOL_KNOBS, type Protocol } from '../results/protocols.js';
import {
  checkProtocolDatasets,
  checkProtocolOption,
  checkProtocolParams,
  checkProtocolScenarios,
  noRetrieverWarning,
} from './protocol-fit.js';
import type { Scenario } from '../scenarios/format.js';
import { inShard, type Shard, type ShardedRunHeader } from '../results/shard.js';
import { encodingForModel, knownTokenizerModel, TokenCounter } from '../core/tokens.js';
import { isLiveProvider } from '../models/index.js';
import { builtinStrategies } from '../../strategies/index.js';
import { isModuleSource, loadStrategyDefinition } from '../../strategies/loader.js';
import { DURABILITY_MODES, type DurabilityMode, type StrategyDefinition } from '../../strategies/types.js';
import { fnv1aCodePoints } from '../core/hash.js';

export { needsProcesses, runCell, type CellPlan, type CellTask, type LiveProviderSettings } from './cell.js';
export { RunInterrupted } from './pool.js';

/** Where the default run prices the durability modes: a crash after every acknowledged memory (the sync-or-async question). */
export const DEFAULT_PRICED_SCENARIOS: readonly string[] = ['remember-then-crash'];

export interface RunOptions {
  /** Strategy names (default: every built-in). */
  strategies?: readonly string[];
  /** Built-in scenario names or file paths (default: every built-in). */
  scenarios?: readonly string[];
  /** `--param` values: `window.k=2,4,8`. */
  params?: readonly string[];
  seed?: number;
  trials?: number;
  /** `offline` (default) or `openai:NAME`. */
  model?: string;
  /** `hashed` (default) or `openai:NAME`. */
  embedder?: string;
  /** Model name whose tokenizer counts tokens (default: the model's name). */
  tokenizer?: string;
  /** Base URL, key, concurrency, timeout, retries and temperature for `openai:` providers. */
  live?: LiveProviderSettings;
  /** Response cache for live models: a file path, `false` for none (default: .membench/cache.sqlite). */
  cache?: string | false;
  /** Datasets to import and run directly: `locomo:FILE` or `longmemeval:FILE`. */
  datasets?: readonly string[];
  /** With `datasets`: the first N conversations / questions. */
  datasetLimit?: number;
  /** `--question ID`: only these questions / conversations of the datasets (ids as reports show them, or the file's own). */
  questions?: readonly string[];
  /** With `datasets`: an errata file correcting or dropping gold answers at import (docs/judging.md). */
  errata?: string;
  /** With `datasets`: a YAML file of templates for how LoCoMo's temporal and adversarial questions are asked (docs/datasets.md). */
  questionPrompts?: string;
  /** Stretch every selected scenario to this many user turns with filler (probes kept); names become `NAME~N`. */
  stretch?: number;
  /** Resolves relative scenario and strategy module paths (default: the process's cwd). */
  cwd?: string;
  /** Kill agent processes at this many seeded random crash points per cell (implies processes). */
  crashFuzz?: number;
  /** Run every cell's agent in child processes, even without faults. */
  isolate?: boolean;
  /** Durability modes applied to every strategy not given one by `--param S.durability=` (default: each strategy's own). */
  durabilities?: readonly DurabilityMode[];
  /**
   * Scenarios on which every strategy also runs in its other durability modes, so the report can
   * price sync, async, exit and none (save latency beside what each lost). Default: the crash
   * scenarios of DEFAULT_PRICED_SCENARIOS when the run names no scenario and no durability; [] for none.
   */
  priceDurability?: readonly string[];
  /**
   * Idempotency keys on tool effects: `on`, `off`, `both` — cells whose scenario has
   * side-effecting tools and runs in processes are run with and without keys — or `one` (the
   * default): that contrast for one strategy only (CONTRAST_STRATEGY, else the run's first), the
   * others with keys. A duplicated effect is the harness's tool-call recovery, not the strategy's.
   */
  idempotency?: IdempotencyChoice;
  /** Keep each cell's temp dir (for debugging a strategy's files). */
  keepCellDirs?: boolean;
  /** Record where each cell's time went (`phases` in each cell result; `--profile`). */
  profile?: boolean;
  /** Worker processes running cells at once (default 1: every cell in this process, one after another). */
  workers?: number;
  /** Run only this shard of the planned cells. */
  shard?: Shard;
  /** Persists finished cells and hands back those of an earlier, interrupted attempt. */
  store?: CellStore;
  /** Aborting stops the run: no new cell starts, running workers are killed, the run rejects with RunInterrupted. */
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  onWarning?: (message: string) => void;
  /** Injected clock, for tests (cells in pool workers use the real clock). */
  now?: () => Date;
  /** The k of retrieval metrics (default 1, 5, 10; under a protocol, the paper's): recall_any@k, recall_all@k, NDCG@k. */
  retrievalK?: readonly number[];
  /**
   * `--protocol`: a paper's own retrieval protocol (harness/results/protocols.ts). It sets the
   * paper's k, ranks the whole store at each probe, sets the knobs the paper's corpus needs on the
   * strategies that have them (`index=user` for LongMemEval; a `--param` may narrow them, one that
   * contradicts them is refused), and scores every ranking by the paper's rules beside membench's
   * own figures. It applies to its paper's dataset only (harness/run/protocol-fit.ts).
   */
  protocol?: Protocol;
  /** Keep each probe's whole ranking in results.json (default: the top 50, cut after scoring). */
  keepRankings?: boolean;
  /** A cell running longer than this is stopped and recorded as an error naming the phase it hung in (default DEFAULT_CELL_TIMEOUT_MS). */
  cellTimeoutMs?: number;
  /**
   * Run cells in pool worker processes even with one worker (the CLI does): strategy code never
   * runs in this process, so one that blocks, hangs or calls process.exit costs only its cell.
   */
  cellProcesses?: boolean;
}

/** `index` is the cell's position among this run's `cells` (a shard's own, when sharded); `finished` counts cells an earlier attempt already ran. */
export type ProgressEvent =
  /** `units`: every planned cell's strategy setting and scenario group, so progress can count a dataset's questions per strategy. */
  | { type: 'start'; cells: number; finished: number; units: { setting: string; group?: string; done: boolean }[] }
  | { type: 'cell'; index: number; cells: number; result: CellResult };

/** Where a resumable run keeps its finished cells (see harness/run/run-dir.ts). Positions are indexes into the whole plan. */
export interface CellStore {
  /** Called once the matrix is planned: checks it is the store's matrix and returns the cells already finished. */
  open(plan: { digest: string; ids: readonly string[] }): Promise<ReadonlyMap<number, CellResult>>;
  /** Called as each cell finishes, before its progress event. */
  save(position: number, result: CellResult): Promise<void>;
}

export const DEFAULT_SEED = 42;

/** How `--idempotency` spreads the with / without keys contrast over a run's strategies. */
export type IdempotencyChoice = 'on' | 'off' | 'both' | 'one';

/** The strategy that runs the with / without idempotency keys contrast under `--idempotency one` (the default), when the run has it. */
export const CONTRAST_STRATEGY = 'buffer';

/** The retrieval k, checked, distinct and ascending (default 1, 5, 10). */
export function retrievalKs(ks: readonly number[] | undefined, given = ks?.join(',')): number[] {
  if (ks === undefined) return [...DEFAULT_RETRIEVAL_K];
  const bad = ks.find((k) => !Number.isInteger(k) || k < 1);
  if (bad !== undefined || ks.length === 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--retrieval-k ${given}: expected whole numbers >= 1 separated by commas, e.g. 1,5,10`,
    );
  return [...new Set(ks)].sort((a, b) => a - b);
}
/** Half an hour: far beyond any built-in cell offline; long live-model conversations may need --cell-timeout. */
export const DEFAULT_CELL_TIMEOUT_MS = 30 * 60 * 1000;
/** Where live model responses are cached unless `--no-cache` or `--cache FILE` says otherwise. */
export const DEFAULT_CACHE_FILE = '.membench/cache.sqlite';

/** FNV-1a of the run seed and the cell id: each cell's seed, stable across runs and orderings. */
export function cellSeed(seed: number, cellId: string): number {
  return fnv1aCodePoints(cellId, seed);
}

/**
 * Built-in names resolve through the registry; module paths and `langchain:NAME` through the
 * strategy loader. Returns each definition with the source an agent process reloads it from.
 */
async function selectStrategies(
  names: readonly string[] | undefined,
  cwd: string,
): Promise<{ definitions: StrategyDefinition[]; sources: Map<string, string> }> {
  if (!names || names.length === 0) return { definitions: [...builtinStrategies], sources: new Map() };
  const definitions: StrategyDefinition[] = [];
  const sources = new Map<string, string>();
  for (const name of names) {
    const definition = await loadStrategyDefinition(name, { cwd });
    if (definitions.includes(definition)) continue; // the same built-in named twice
    if (definitions.some((item) => item.name === definition.name)) {
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--strategy ${name}: another selected strategy is already named "${definition.name}"`,
      );
    }
    definitions.push(definition);
    sources.set(definition.name, isModuleSource(name) ? path.resolve(cwd, name) : name);
  }
  return { definitions, sources };
}

/**
 * Scenario names become cell ids, so two sources under one name would give two cells one id (and
 * `compare` would match the wrong ones): refused, naming both. The same file named twice runs once.
 */
function uniqueScenarios(scenarios: readonly Scenario[]): Scenario[] {
  const byName = new Map<string, Scenario>();
  for (const scenario of scenarios) {
    const first = byName.get(scenario.name);
    if (!first) byName.set(scenario.name, scenario);
    else if (first.source !== scenario.source) {
      throw new MembenchError(
        'INVALID_SCENARIO',
        `two scenarios are named "${scenario.name}": ${first.source} and ${scenario.source}; cell ids would collide: rename one (its \`name:\` key)`,
      );
    }
  }
  return [...byName.values()];
}

/** The `S.KNOB=V` params a protocol sets: on each strategy whose options take the knob, unless the user's params set it (checked by checkProtocolParams). */
function protocolParams(
  definitions: readonly StrategyDefinition[],
  options: Pick<RunOptions, 'protocol' | 'params'>,
): string[] {
  if (options.protocol === undefined) return [];
  return definitions.flatMap((definition) =>
    Object.entries(PROTOCOL_KNOBS[options.protocol!])
      .filter(
        ([knob, values]) =>
          values.split(',').every((value) => definition.options.safeParse({ [knob]: value }).success) &&
          !(options.params ?? []).some((flag) => flag.startsWith(`${definition.name}.${knob}=`)),
      )
      .map(([knob, value]) => `${definition.name}.${knob}=${value}`),
  );
}

/** Validates everything (scenarios, strategies, params) before the first cell runs. */
export async function planRun(
  options: RunOptions,
): Promise<{ plans: CellPlan[]; scenarios: Scenario[]; strategies: StrategySetting[]; errata: ErrataReport[] }> {
  checkRunNumbers(options);
  checkProtocolOption(options.protocol);
  const { definitions, sources } = await selectStrategies(options.strategies, options.cwd ?? process.cwd());
  if (options.protocol !== undefined) {
    checkProtocolParams(options.protocol, options.params ?? []);
    checkProtocolDatasets(options.protocol, options.datasets ?? []);
    const warning = noRetrieverWarning(options.protocol, definitions);
    if (warning) options.onWarning?.(warning);
  }
  const durabilityParams = (options.durabilities ?? []).length
    ? definitions
        .filter(
          (definition) => !(options.params ?? []).some((flag) => flag.startsWith(`${definition.name}.durability=`)),
        )
        .map((definition) => `${definition.name}.durability=${options.durabilities!.join(',')}`)
    : [];
  const settings = expandStrategies(
    definitions,
    [...(options.params ?? []), ...durabilityParams, ...protocolParams(definitions, options)],
    sources,
  );
  const userChoseModes =
    (options.durabilities ?? []).length > 0 || (options.params ?? []).some((flag) => /\.durability=/u.test(flag));
  const priced = new Set(
    options.priceDurability ?? (options.scenarios?.length || userChoseModes ? [] : DEFAULT_PRICED_SCENARIOS),
  );
  // Each strategy in every mode but its own, for the priced scenarios only.
  const priceSettings = priced.size
    ? expandStrategies(
        definitions,
        [
          ...(options.params ?? []),
          ...definitions.flatMap((definition) => {
            const others = (definition.durabilityModes ?? DURABILITY_MODES).filter(
              (mode) => mode !== definition.defaultDurability,
            );
            return others.length > 0 ? [`${definition.name}.durability=${others.join(',')}`] : [];
          }),
        ],
        sources,
      )
    : [];
  const seed = options.seed ?? DEFAULT_SEED;
  const named = options.scenarios?.length ? options.scenarios : options.datasets?.length ? [] : builtinScenarioNames();
  const { scenarios: loaded, warnings } = await loadScenarios(named);
  // With no scenario named, long conversations (tagged `long`) stay out of the default run.
  const selected = options.scenarios?.length ? loaded : loaded.filter((scenario) => !scenario.tags?.includes('long'));
  if (options.errata !== undefined && !options.datasets?.length)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--errata ${options.errata}: errata correct a dataset's gold at import: name the dataset with --dataset`,
    );
  if (options.questionPrompts !== undefined && !options.datasets?.length)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--question-prompts ${options.questionPrompts}: the templates word a dataset's questions at import: name the dataset with --dataset`,
    );
  const errata: ErrataReport[] = [];
  if (options.questions?.length && !options.datasets?.length)
    throw new MembenchError('INVALID_ARGUMENT', '--question picks questions of a dataset: name it with --dataset');
  const questions = options.questions?.length ? new QuestionFilter(options.questions) : undefined;
  for (const arg of options.datasets ?? []) {
    const { scenarios: imported, report } = await importDataset(arg, {
      ...(questions ? { only: questions } : {}),
      limit: options.datasetLimit,
      ...(options.errata !== undefined ? { errata: options.errata } : {}),
      ...(options.questionPrompts !== undefined ? { questionPrompts: options.questionPrompts } : {}),
      // LoCoMo's protocol also retrieves over the file's observations and session summaries.
      ...(options.protocol === 'locomo' ? { documents: true } : {}),
    });
    // An erratum naming no question (a typo in its id) is said even when the import needed no repair.
    if (report.repaired.length + report.skipped.length + (report.errata?.unused ?? 0) > 0)
      options.onWarning?.(formatImportReport(report));
    if (report.errata) errata.push(report.errata);
    selected.push(...imported);
  }
  const unknown = options.questions?.find((id) => !questions?.matched.has(id));
  if (unknown !== undefined) {
    const closest = closestString(unknown, questions?.seen ?? []);
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--question ${unknown}: no such question in ${(options.datasets ?? []).join(', ')}${closest !== undefined ? ` (closest: ${closest})` : ''}`,
    );
  }
  for (const warning of warnings) options.onWarning?.(warning);
  const unique = uniqueScenarios(selected);
  if (options.protocol !== undefined) checkProtocolScenarios(options.protocol, unique, options.datasets?.length ?? 0);
  // Filler follows the run seed, so every strategy and trial sees the same conversation.
  const stretched = options.stretch ? unique.map((scenario) => stretchScenario(scenario, options.stretch!)) : unique;
  const scenarios = stretched.map((scenario) => expandFillers(scenario, seed));
  // A priced scenario that is not in the run would price nothing, silently.
  const unpriced = (options.priceDurability ?? []).filter(
    (name) => !scenarios.some((scenario) => scenario.name === name),
  );
  if (unpriced.length > 0) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--price-durability ${unpriced.join(',')}: not among the run's scenarios (${scenarios.map((scenario) => scenario.name).join(', ')}): select it with -c, or drop it (none turns pricing off)`,
    );
  }
  if (options.tokenizer !== undefined && !knownTokenizerModel(options.tokenizer)) {
    options.onWarning?.(
      `warning: --tokenizer ${options.tokenizer}: not a model whose encoding membench knows: counting with ${encodingForModel(options.tokenizer)} (give a model name such as gpt-4o or gpt-4, or an encoding, o200k_base or cl100k_base)`,
    );
  }
  const trials = options.trials ?? 1;
  const idempotency = options.idempotency ?? 'one';
  const contrasted = definitions.some((definition) => definition.name === CONTRAST_STRATEGY)
    ? CONTRAST_STRATEGY
    : definitions[0]?.name;
  const keyVariants = (scenario: Scenario, strategy: string): boolean[] => {
    if (idempotency === 'on' || idempotency === 'off') return [idempotency === 'on'];
    if (idempotency === 'one' && strategy !== contrasted) return [true];
    const hasEffects = scenario.steps.some((step) => step.kind === 'tool' && step.effect);
    return hasEffects && needsProcesses(scenario, { isolate: options.isolate ?? false, crashFuzz: options.crashFuzz })
      ? [true, false]
      : [true];
  };
  const plans: CellPlan[] = [];
  for (const scenario of scenarios) {
    for (const [strategy, pricing] of [
      ...settings.map((item) => [item, false] as const),
      ...(priced.has(scenario.name) ? priceSettings.map((item) => [item, true] as const) : []),
    ]) {
      for (let trial = 0; trial < trials; trial++) {
        const definition = definitions.find((item) => item.name === strategy.name)!;
        for (const idempotencyKeys of keyVariants(scenario, strategy.name)) {
          const id = `${scenario.name}/${strategy.setting}${idempotencyKeys ? '' : '/no-keys'}${trials > 1 ? `/t${trial}` : ''}`;
          plans.push({
            id,
            scenario,
            strategy,
            definition,
            idempotencyKeys,
            trial,
            seed: cellSeed(seed, id),
            ...(pricing ? { pricing: true } : {}),
          });
        }
      }
    }
  }
  return { plans, scenarios, strategies: settings, errata };
}

/** What the matrix's results depend on, hashed: a resumed run or a shard must see the same digest. */
export function planDigest(
  plans: readonly CellTask[],
  scenarios: readonly Scenario[],
  settings: ProviderSettings,
): string {
  const head = {
    membench: MEMBENCH_VERSION,
    providers: [
      settings.modelProvider,
      settings.embedderProvider,
      settings.tokenizerModel,
      settings.crashFuzz ?? 0,
      settings.isolate,
      settings.retrievalK,
      ...(settings.protocol ? [settings.protocol] : []),
    ],
  };
  const cells = plans.map((plan) => [
    plan.id,
    plan.scenario.name,
    plan.strategy.name,
    plan.strategy.options,
    plan.strategy.durability,
    plan.idempotencyKeys,
    plan.trial,
    plan.seed,
  ]);
  // The hash of JSON.stringify({ ...head, scenarios, cells }), fed one scenario at a time: the whole
  // string of 500 LongMemEval_S questions is ~300 MB, held twice (as a string and as UTF-8) at once.
  const hash = createHash('sha256').update(JSON.stringify(head).slice(0, -1)).update(',"scenarios":[');
  // Scenario content, not where it was read from: a resume from another checkout still matches.
  for (const [index, { source: _source, ...scenario }] of scenarios.entries())
    hash.update(`${index > 0 ? ',' : ''}${JSON.stringify(scenario)}`);
  return hash
    .update(`],"cells":${JSON.stringify(cells)}}`)
    .digest('hex')
    .slice(0, 16);
}

/** The plain-data part of a plan: what a pool worker receives. */
/** A step that starts an agent process (a crash, a concurrent session) costs about as much as this many plain steps. */
const PROCESS_STEP_COST = 40;

/**
 * A cell's expected cost, for ordering only: its steps, a process start counting as many. The pool
 * takes the costliest cells first, so no long cell starts last while the other workers sit idle.
 */
export function estimatedCost(scenario: Scenario): number {
  let cost = 0;
  for (const step of scenario.steps) {
    if (step.kind === 'crash') cost += PROCESS_STEP_COST;
    else if (step.kind === 'concurrent')
      cost += PROCESS_STEP_COST * step.concurrent.length + step.concurrent.flat().length;
    else cost += step.kind === 'filler' ? step.filler : 1;
  }
  return cost;
}

function toTask({ definition: _definition, ...task }: CellPlan): CellTask {
  return task;
}

/** Settles with the promise, or rejects with RunInterrupted as soon as the signal fires. */
function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => reject(new RunInterrupted());
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

/** Runs the whole matrix (or a shard of it) and returns typed results (nothing is written: see `writeRunOutput`). */
export async function runBenchmark(options: RunOptions = {}): Promise<RunResult> {
  const now = options.now ?? (() => new Date());
  const startedAt = now();
  const started = performance.now();
  const { plans, scenarios, strategies, errata } = await planRun(options);
  const workers = options.workers ?? 1;
  const modelProvider = options.model ?? 'offline';
  const embedderProvider = options.embedder ?? 'hashed';
  const isLive = isLiveProvider(modelProvider) || isLiveProvider(embedderProvider);
  const cacheFile =
    isLive && options.cache !== false
      ? typeof options.cache === 'string'
        ? options.cache
        : DEFAULT_CACHE_FILE
      : undefined;
  const settings: ProviderSettings = {
    modelProvider,
    embedderProvider,
    live: options.live ?? {},
    ...(cacheFile ? { cacheFile: path.resolve(cacheFile) } : {}),
    ...(options.crashFuzz !== undefined ? { crashFuzz: options.crashFuzz } : {}),
    isolate: options.isolate ?? false,
    tokenizerModel: options.tokenizer ?? modelProvider.replace(/^openai:/u, ''),
    keepCellDirs: options.keepCellDirs ?? false,
    retrievalK: retrievalKs(options.retrievalK ?? (options.protocol ? PROTOCOL_K[options.protocol] : undefined)),
    ...(options.protocol ? { protocol: options.protocol } : {}),
    ...(options.keepRankings ? { keepRankings: true } : {}),
    ...(options.profile ? { profile: true } : {}),
  };
  const digest = planDigest(plans, scenarios, settings);
  const positions = plans.flatMap((_, position) => (inShard(position, options.shard) ? [position] : []));
  const results = new Map<number, CellResult>();
  const record = async (position: number, result: CellResult): Promise<void> => {
    await options.store?.save(position, result);
    results.set(position, result);
    const empty = result.status === 'ok' ? (result.usage.emptyAnswers ?? 0) : 0;
    if (empty > 0)
      options.onWarning?.(
        `warning: ${result.id}: ${empty} model answer(s) came back with no text (content null or ""): scored as empty answers`,
      );
    options.onProgress?.({ type: 'cell', index: positions.indexOf(position), cells: positions.length, result });
  };

  // Providers first: a bad model name fails before the store writes anything.
  const { providers, close } = openProviders(settings, now);
  let tempRoot: string | undefined;
  // The machine's speed over the cells: compare divides latencies by it.
  const calibrating = await startCalibration({ periodic: workers > 1 || options.cellProcesses === true });
  let calibration: Calibration | undefined;
  try {
    tempRoot = await makeRunTempDir(settings.keepCellDirs);
    providers.tempRoot = tempRoot;
    const earlier =
      (await options.store?.open({ digest, ids: plans.map((plan) => plan.id) })) ?? new Map<number, CellResult>();
    for (const position of positions) if (earlier.has(position)) results.set(position, earlier.get(position)!);
    const todo = positions.filter((position) => !results.has(position));
    const units = positions.map((position) => ({
      setting: plans[position]!.strategy.setting,
      ...(plans[position]!.scenario.group !== undefined ? { group: plans[position]!.scenario.group } : {}),
      done: results.has(position),
    }));
    options.onProgress?.({ type: 'start', cells: positions.length, finished: results.size, units });
    const cellTimeoutMs = options.cellTimeoutMs ?? DEFAULT_CELL_TIMEOUT_MS;
    if ((workers > 1 || options.cellProcesses) && todo.length > 0) {
      const byCost = [...todo].sort(
        (a, b) => estimatedCost(plans[b]!.scenario) - estimatedCost(plans[a]!.scenario) || a - b,
      );
      const tasks = byCost.map((position) => ({ index: position, task: toTask(plans[position]!) }));
      await runInPool(tasks, {
        workers,
        cellTimeoutMs,
        settings: { ...settings, tempRoot },
        onResult: record,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } else {
      for (const position of todo) {
        if (options.signal?.aborted) throw new RunInterrupted();
        const plan = plans[position]!;
        await record(
          position,
          await unlessAborted(
            withinTimeLimit(plan, cellTimeoutMs, (onPhase) => runCell(plan, providers, onPhase)),
            options.signal,
          ),
        );
      }
    }
    calibration = await calibrating.stop();
  } finally {
    await calibrating.stop();
    close();
    if (tempRoot && !settings.keepCellDirs) await rm(tempRoot, { recursive: true, force: true });
    if (tempRoot && settings.keepCellDirs)
      options.onWarning?.(`kept the cell dirs in ${tempRoot} (one per cell, named after the cell id)`);
  }

  const cells = positions.map((position) => results.get(position)!);
  const tokenizer = new TokenCounter(settings.tokenizerModel);
  const header: ShardedRunHeader = {
    schemaVersion: RESULTS_SCHEMA_VERSION,
    membenchVersion: MEMBENCH_VERSION,
    gitCommit: membenchCommit(),
    nodeVersion: process.version,
    platform: `${process.platform}-${process.arch}`,
    seed: options.seed ?? DEFAULT_SEED,
    trials: options.trials ?? 1,
    model: providers.model.id,
    offlineModel: providers.model.offline,
    embedder: providers.embedder.id,
    tokenizer: { model: settings.tokenizerModel, encoding: tokenizer.encoding },
    strategies: strategies.map((strategy) => ({
      name: strategy.name,
      setting: strategy.setting,
      options: strategy.options,
      durability: strategy.durability,
      ...(strategy.traits ? { traits: strategy.traits } : {}),
    })),
    scenarios: scenarios.map((scenario) => ({
      name: scenario.name,
      source: scenario.source,
      steps: scenario.steps.length,
      ...(scenario.group !== undefined ? { group: scenario.group } : {}),
    })),
    ...(options.shard ? { shard: { ...options.shard, planned: plans.length, digest } } : {}),
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - started,
    machine: machineId(),
    ...(calibration ? { calibration } : {}),
  };
  return {
    header,
    cells,
    durabilityMatrix: durabilityMatrix(cells),
    durabilityPrices: modePrices(cells),
    ...(errata.length > 0 ? { errata } : {}),
  };
}
