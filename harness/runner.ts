/**
 * The runner: scenarios × strategies × parameter sets × trials, each cell replayed in its own
 * temp dir with its own seed, every failure recorded as a result rather than thrown.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { AgentSession, type ProbeRecord, type TurnRecord } from './agent.js';
import { runCellInProcesses, type DurabilityResult } from './durability.js';
import { Ledger, type LedgerCounts } from './ledger.js';
import { cellPaths } from './worker.js';
import { expandFillers } from './filler.js';
import { durabilityMatrix, modePrices } from './durability-matrix.js';
import { formatImportReport, importDataset } from './importers/index.js';
import { loadScenarios } from './builtin-scenarios.js';
import { builtinScenarioNames } from './builtin-scenarios.js';
import { MembenchError } from './errors.js';
import { assertRunnable } from './load-scenario.js';
import { distribution, recallByCategory, summarizeRecall } from './metrics.js';
import { createEmbedder, createModel, MeteredModel, ResponseCache, type ChatModel, type Embedder, type ModelUsage } from './models/index.js';
import { MEMBENCH_VERSION, membenchCommit } from './package-info.js';
import { expandStrategies, type StrategySpec } from './params.js';
import { RESULTS_SCHEMA_VERSION, type CellResult, type RunResult } from './results.js';
import type { Scenario } from './scenario.js';
import { TokenCounter } from './tokens.js';
import { builtinStrategies } from '../strategies/index.js';
import { isModuleSpec, loadStrategyDefinition } from './strategy-loader.js';
import type { DurabilityMode, StrategyDefinition } from '../strategies/types.js';

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
  /** Resolves relative scenario and strategy module paths (default: the process's cwd). */
  cwd?: string;
  /** Kill agent processes at this many seeded random crash points per cell (implies processes). */
  crashFuzz?: number;
  /** Run every cell's agent in child processes, even without faults. */
  isolate?: boolean;
  /** Durability modes applied to every strategy not given one by `--param S.durability=` (default: each strategy's own). */
  durabilities?: readonly DurabilityMode[];
  /**
   * Idempotency keys on tool effects: `on`, `off`, or `both` (default) — cells whose scenario
   * has side-effecting tools and runs in processes are run with and without keys.
   */
  idempotency?: 'on' | 'off' | 'both';
  /** Keep each cell's temp dir (for debugging a strategy's files). */
  keepCellDirs?: boolean;
  onProgress?: (event: ProgressEvent) => void;
  onWarning?: (message: string) => void;
  /** Injected clock, for tests. */
  now?: () => Date;
}

export type ProgressEvent =
  | { type: 'start'; cells: number }
  | { type: 'cell'; index: number; cells: number; result: CellResult };

export const DEFAULT_SEED = 42;
/** Where live model responses are cached unless `--no-cache` or `--cache FILE` says otherwise. */
export const DEFAULT_CACHE_FILE = '.membench/cache.sqlite';

/** FNV-1a of the run seed and the cell id: each cell's seed, stable across runs and orderings. */
export function cellSeed(seed: number, cellId: string): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (const char of cellId) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/**
 * Built-in names resolve through the registry; module paths and `langchain:NAME` through the
 * strategy loader. Returns each definition with the source an agent process reloads it from.
 */
async function selectStrategies(names: readonly string[] | undefined, cwd: string): Promise<{ definitions: StrategyDefinition[]; sources: Map<string, string> }> {
  if (!names || names.length === 0) return { definitions: [...builtinStrategies], sources: new Map() };
  const definitions: StrategyDefinition[] = [];
  const sources = new Map<string, string>();
  for (const name of names) {
    const definition = await loadStrategyDefinition(name, { cwd });
    if (definitions.includes(definition)) continue; // the same built-in named twice
    if (definitions.some((item) => item.name === definition.name)) {
      throw new MembenchError('INVALID_ARGUMENT', `--strategy ${name}: another selected strategy is already named "${definition.name}"`);
    }
    definitions.push(definition);
    sources.set(definition.name, isModuleSpec(name) ? path.resolve(cwd, name) : name);
  }
  return { definitions, sources };
}

interface CellPlan {
  id: string;
  scenario: Scenario;
  spec: StrategySpec;
  definition: StrategyDefinition;
  /** Tool effects carry idempotency keys. */
  idempotencyKeys: boolean;
  trial: number;
  seed: number;
}

/** Validates everything (scenarios, strategies, params) before the first cell runs. */
export async function planRun(options: RunOptions): Promise<{ plans: CellPlan[]; scenarios: Scenario[]; specs: StrategySpec[] }> {
  const { definitions, sources } = await selectStrategies(options.strategies, options.cwd ?? process.cwd());
  const durabilityParams = (options.durabilities ?? []).length
    ? definitions.filter((definition) => !(options.params ?? []).some((flag) => flag.startsWith(`${definition.name}.durability=`))).map((definition) => `${definition.name}.durability=${options.durabilities!.join(',')}`)
    : [];
  const specs = expandStrategies(definitions, [...(options.params ?? []), ...durabilityParams], sources);
  const seed = options.seed ?? DEFAULT_SEED;
  const named = options.scenarios?.length ? options.scenarios : options.datasets?.length ? [] : builtinScenarioNames();
  const { scenarios: loaded, warnings } = await loadScenarios(named);
  // With no scenario named, long conversations (tagged `long`) stay out of the default run.
  const selected = options.scenarios?.length ? loaded : loaded.filter((scenario) => !scenario.tags?.includes('long'));
  for (const spec of options.datasets ?? []) {
    const { scenarios: imported, report } = await importDataset(spec, { limit: options.datasetLimit });
    if (report.repaired.length + report.skipped.length > 0) options.onWarning?.(formatImportReport(report));
    selected.push(...imported);
  }
  for (const warning of warnings) options.onWarning?.(warning);
  // Filler follows the run seed, so every strategy and trial sees the same conversation.
  const scenarios = selected.map((scenario) => expandFillers(scenario, seed));
  scenarios.forEach(assertRunnable);
  const trials = options.trials ?? 1;
  if (!Number.isInteger(trials) || trials < 1) throw new MembenchError('INVALID_ARGUMENT', `--trials ${trials}: expected a whole number >= 1`);
  const idempotency = options.idempotency ?? 'both';
  const keyVariants = (scenario: Scenario): boolean[] => {
    if (idempotency !== 'both') return [idempotency === 'on'];
    const hasEffects = scenario.steps.some((step) => step.kind === 'tool' && step.effect);
    return hasEffects && needsProcesses(scenario, { isolate: options.isolate ?? false, crashFuzz: options.crashFuzz }) ? [true, false] : [true];
  };
  const plans: CellPlan[] = [];
  for (const scenario of scenarios) {
    for (const spec of specs) {
      for (let trial = 0; trial < trials; trial++) {
        const definition = definitions.find((item) => item.name === spec.name)!;
        for (const idempotencyKeys of keyVariants(scenario)) {
          const id = `${scenario.name}/${spec.label}${idempotencyKeys ? '' : '/no-keys'}${trials > 1 ? `/t${trial}` : ''}`;
          plans.push({ id, scenario, spec, definition, idempotencyKeys, trial, seed: cellSeed(seed, id) });
        }
      }
    }
  }
  return { plans, scenarios, specs };
}

/** Live-provider settings that travel to agent processes as plain data (the key only over IPC). */
export interface LiveProviderSettings {
  baseUrl?: string;
  apiKey?: string;
  concurrency?: number;
  timeoutMs?: number;
  maxRetries?: number;
  temperature?: number;
}

interface Providers {
  /** The model of trial 0 (names the run in the header). */
  model: ChatModel;
  /** The model a cell of the given trial uses: the response cache is keyed by trial. */
  modelFor: (trial: number) => ChatModel;
  embedder: Embedder;
  live: LiveProviderSettings;
  /** The response cache file for live models; undefined: no cache. */
  cacheFile?: string;
  modelSpec: string;
  embedderSpec: string;
  /** Fuzzed kills per process-run cell. */
  crashFuzz?: number;
  /** Run every cell in agent processes, faults or not. */
  isolate: boolean;
  tokenizerModel: string;
  now: () => Date;
  keepCellDirs: boolean;
}

/** Whether a cell needs agent processes: crashes, concurrent sessions, fuzzing, or asked for. */
export function needsProcesses(scenario: Scenario, providers: Pick<Providers, 'crashFuzz' | 'isolate'>): boolean {
  return providers.isolate || (providers.crashFuzz ?? 0) > 0 || scenario.steps.some((step) => step.kind === 'crash' || step.kind === 'concurrent');
}

interface CellRecords {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  usage: ModelUsage;
  modelLatencies: number[];
  error?: string;
  durability?: DurabilityResult;
  effects: LedgerCounts;
}

/** Replays the scenario in this process (no faults): the fast path for plain cells. */
async function runInline(plan: CellPlan, providers: Providers, dir: string): Promise<CellRecords> {
  const paths = cellPaths(dir);
  await mkdir(paths.strategyDir, { recursive: true });
  const tokens = new TokenCounter(providers.tokenizerModel);
  const model = new MeteredModel(providers.modelFor(plan.trial), tokens);
  const ledger = new Ledger(paths.ledger);
  const { definition } = plan;
  const session = new AgentSession({
    model,
    tokens,
    ledger,
    createStrategy: () =>
      definition.create(
        { dir: paths.strategyDir, tokens, model, embedder: providers.embedder, durability: plan.spec.durability, seed: plan.seed, now: providers.now },
        plan.spec.options,
      ),
  });
  let error: string | undefined;
  try {
    await session.start();
    await session.run(plan.scenario.steps);
    await session.finish();
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  }
  const effects = ledger.counts();
  ledger.close();
  return { turns: session.turns, probes: session.probes, usage: model.usage, modelLatencies: model.latencies, effects, ...(error !== undefined ? { error } : {}) };
}

/** Replays the scenario in agent processes, with the scenario's and the fuzzer's crashes. */
async function runInProcesses(plan: CellPlan, providers: Providers, dir: string): Promise<CellRecords> {
  const outcome = await runCellInProcesses({
    scenario: plan.scenario,
    fuzzKills: providers.crashFuzz,
    cell: {
      cellId: plan.id,
      strategy: plan.spec.source,
      options: plan.spec.options,
      durability: plan.spec.durability,
      dir,
      model: providers.modelSpec,
      embedder: providers.embedderSpec,
      live: providers.live,
      ...(providers.cacheFile ? { cache: { file: providers.cacheFile, trial: plan.trial } } : {}),
      tokenizerModel: providers.tokenizerModel,
      seed: plan.seed,
      sessionId: 'main',
      idempotencyKeys: plan.idempotencyKeys,
    },
  });
  const { counts } = outcome.durability;
  return { ...outcome, effects: { effects: counts.effects, duplicates: counts.effectsDuplicated, refused: counts.effectsRefused } };
}

/** Runs one cell in a fresh temp dir; a strategy's exception becomes `status: 'error'`. */
export async function runCell(plan: CellPlan, providers: Providers): Promise<CellResult> {
  const started = performance.now();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-cell-'));
  let records: CellRecords;
  try {
    records = needsProcesses(plan.scenario, providers) ? await runInProcesses(plan, providers, dir) : await runInline(plan, providers, dir);
  } finally {
    if (!providers.keepCellDirs) await rm(dir, { recursive: true, force: true });
  }
  const { turns, probes, usage, error } = records;
  const contextPerTurn = turns.flatMap((turn) => (turn.contextTokens === null ? [] : [turn.contextTokens]));
  const contextTotal = contextPerTurn.reduce((sum, value) => sum + value, 0);
  return {
    id: plan.id,
    scenario: plan.scenario.name,
    strategy: plan.spec.name,
    label: plan.spec.label,
    options: plan.spec.options,
    durability: plan.spec.durability,
    trial: plan.trial,
    seed: plan.seed,
    status: error === undefined ? 'ok' : 'error',
    ...(error !== undefined ? { error } : {}),
    tokens: {
      contextTotal,
      contextMeanPerTurn: contextPerTurn.length ? contextTotal / contextPerTurn.length : 0,
      contextMax: Math.max(0, ...contextPerTurn),
      maintenance: usage.maintenanceTokens,
      maintenanceCalls: usage.maintenanceCalls,
      answer: usage.answerTokens,
      reply: usage.replyTokens,
    },
    recall: summarizeRecall(probes),
    recallByCategory: recallByCategory(probes),
    latency: {
      loadMs: distribution(turns.flatMap((turn) => (turn.loadMs === null ? [] : [turn.loadMs]))),
      saveMs: distribution(turns.map((turn) => turn.saveMs)),
      modelMs: distribution(records.modelLatencies),
    },
    usage,
    effects: records.effects,
    ...(records.durability ? { faults: records.durability } : {}),
    turns,
    probes,
    durationMs: performance.now() - started,
  };
}

/** Runs the whole matrix and returns typed results (nothing is written: see `writeRunOutput`). */
export async function runBenchmark(options: RunOptions = {}): Promise<RunResult> {
  const startedAt = (options.now ?? (() => new Date()))();
  const started = performance.now();
  const { plans, scenarios, specs } = await planRun(options);
  const modelSpec = options.model ?? 'offline';
  const live: LiveProviderSettings = options.live ?? {};
  const embedderSpec = options.embedder ?? 'hashed';
  const isLive = modelSpec.startsWith('openai:') || embedderSpec.startsWith('openai:');
  const cacheFile = isLive && options.cache !== false ? (typeof options.cache === 'string' ? options.cache : DEFAULT_CACHE_FILE) : undefined;
  const cacheStore = cacheFile ? ResponseCache.open(cacheFile) : undefined;
  const cache = cacheStore ? { store: cacheStore } : false;
  const models = new Map<number, ChatModel>();
  const modelFor = (trial: number): ChatModel => {
    let model = models.get(trial);
    if (!model) {
      model = createModel(modelSpec, { ...live, cache: cache && { ...cache, trial } });
      models.set(trial, model);
    }
    return model;
  };
  const providers: Providers = {
    model: modelFor(0),
    modelFor,
    embedder: createEmbedder(embedderSpec, { ...live, cache }),
    live,
    ...(cacheFile ? { cacheFile } : {}),
    modelSpec,
    embedderSpec,
    crashFuzz: options.crashFuzz,
    isolate: options.isolate ?? false,
    tokenizerModel: options.tokenizer ?? modelSpec.replace(/^openai:/u, ''),
    now: options.now ?? (() => new Date()),
    keepCellDirs: options.keepCellDirs ?? false,
  };
  options.onProgress?.({ type: 'start', cells: plans.length });
  const cells: CellResult[] = [];
  for (const [index, plan] of plans.entries()) {
    const result = await runCell(plan, providers);
    cells.push(result);
    options.onProgress?.({ type: 'cell', index, cells: plans.length, result });
  }
  cacheStore?.close();
  const tokenizer = new TokenCounter(providers.tokenizerModel);
  return {
    header: {
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
      tokenizer: { model: providers.tokenizerModel, encoding: tokenizer.encoding },
      strategies: specs.map((spec) => ({ name: spec.name, label: spec.label, options: spec.options, durability: spec.durability })),
      scenarios: scenarios.map((scenario) => ({ name: scenario.name, source: scenario.source, steps: scenario.steps.length })),
      startedAt: startedAt.toISOString(),
      durationMs: performance.now() - started,
    },
    cells,
    durabilityMatrix: durabilityMatrix(cells),
    durabilityPrices: modePrices(cells),
  };
}
