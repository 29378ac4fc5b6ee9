/**
 * The runner: scenarios × strategies × parameter sets × trials, each cell replayed in its own
 * temp dir with its own seed, every failure recorded as a result rather than thrown.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { AgentSession } from './agent.js';
import { loadScenarios } from './builtin-scenarios.js';
import { builtinScenarioNames } from './builtin-scenarios.js';
import { MembenchError } from './errors.js';
import { assertRunnable } from './load-scenario.js';
import { distribution, recallByCategory, summarizeRecall } from './metrics.js';
import { createEmbedder, createModel, MeteredModel, type ChatModel, type Embedder } from './models/index.js';
import { MEMBENCH_VERSION, membenchCommit } from './package-info.js';
import { expandStrategies, type StrategySpec } from './params.js';
import { RESULTS_SCHEMA_VERSION, type CellResult, type RunResult } from './results.js';
import type { Scenario } from './scenario.js';
import { TokenCounter } from './tokens.js';
import { builtinStrategies, findStrategy } from '../strategies/index.js';
import type { StrategyDefinition } from '../strategies/types.js';

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

/** FNV-1a of the run seed and the cell id: each cell's seed, stable across runs and orderings. */
export function cellSeed(seed: number, cellId: string): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (const char of cellId) {
    hash ^= char.codePointAt(0)!;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Built-in names resolve through the registry; anything else through the strategy loader (module paths, `langchain:NAME`). */
async function selectStrategies(names: readonly string[] | undefined): Promise<StrategyDefinition[]> {
  if (!names || names.length === 0) return [...builtinStrategies];
  const definitions: StrategyDefinition[] = [];
  for (const name of names) {
    const definition = findStrategy(name);
    if (definition) definitions.push(definition);
    else throw new MembenchError('UNKNOWN_STRATEGY', `unknown strategy "${name}": built-ins are ${builtinStrategies.map((item) => item.name).join(', ')}`);
  }
  return definitions;
}

interface CellPlan {
  id: string;
  scenario: Scenario;
  spec: StrategySpec;
  definition: StrategyDefinition;
  trial: number;
  seed: number;
}

/** Validates everything (scenarios, strategies, params) before the first cell runs. */
export async function planRun(options: RunOptions): Promise<{ plans: CellPlan[]; scenarios: Scenario[]; specs: StrategySpec[] }> {
  const definitions = await selectStrategies(options.strategies);
  const specs = expandStrategies(definitions, options.params ?? []);
  const { scenarios, warnings } = await loadScenarios(options.scenarios?.length ? options.scenarios : builtinScenarioNames());
  for (const warning of warnings) options.onWarning?.(warning);
  scenarios.forEach(assertRunnable);
  const trials = options.trials ?? 1;
  if (!Number.isInteger(trials) || trials < 1) throw new MembenchError('INVALID_ARGUMENT', `--trials ${trials}: expected a whole number >= 1`);
  const seed = options.seed ?? DEFAULT_SEED;
  const plans: CellPlan[] = [];
  for (const scenario of scenarios) {
    for (const spec of specs) {
      for (let trial = 0; trial < trials; trial++) {
        const id = `${scenario.name}/${spec.label}${trials > 1 ? `/t${trial}` : ''}`;
        const definition = definitions.find((item) => item.name === spec.name)!;
        plans.push({ id, scenario, spec, definition, trial, seed: cellSeed(seed, id) });
      }
    }
  }
  return { plans, scenarios, specs };
}

interface Providers {
  model: ChatModel;
  embedder: Embedder;
  tokenizerModel: string;
  now: () => Date;
  keepCellDirs: boolean;
}

/** Runs one cell in a fresh temp dir; a strategy's exception becomes `status: 'error'`. */
export async function runCell(plan: CellPlan, providers: Providers): Promise<CellResult> {
  const started = performance.now();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-cell-'));
  const tokens = new TokenCounter(providers.tokenizerModel);
  const model = new MeteredModel(providers.model, tokens);
  const { definition } = plan;
  const session = new AgentSession({
    model,
    tokens,
    createStrategy: () =>
      definition.create(
        { dir, tokens, model, embedder: providers.embedder, durability: plan.spec.durability, seed: plan.seed, now: providers.now },
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
  } finally {
    if (!providers.keepCellDirs) await rm(dir, { recursive: true, force: true });
  }
  const contextPerTurn = session.turns.flatMap((turn) => (turn.contextTokens === null ? [] : [turn.contextTokens]));
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
      maintenance: model.usage.maintenanceTokens,
      maintenanceCalls: model.usage.maintenanceCalls,
      answer: model.usage.answerTokens,
      reply: model.usage.replyTokens,
    },
    recall: summarizeRecall(session.probes),
    recallByCategory: recallByCategory(session.probes),
    latency: {
      loadMs: distribution(session.turns.flatMap((turn) => (turn.loadMs === null ? [] : [turn.loadMs]))),
      saveMs: distribution(session.turns.map((turn) => turn.saveMs)),
    },
    usage: model.usage,
    turns: session.turns,
    probes: session.probes,
    durationMs: performance.now() - started,
  };
}

/** Runs the whole matrix and returns typed results (nothing is written: see `writeRunOutput`). */
export async function runBenchmark(options: RunOptions = {}): Promise<RunResult> {
  const startedAt = (options.now ?? (() => new Date()))();
  const started = performance.now();
  const { plans, scenarios, specs } = await planRun(options);
  const modelSpec = options.model ?? 'offline';
  const providers: Providers = {
    model: createModel(modelSpec),
    embedder: createEmbedder(options.embedder ?? 'hashed'),
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
  };
}
