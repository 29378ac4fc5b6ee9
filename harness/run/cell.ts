/**
 * One cell of the matrix: a scenario replayed against one strategy setting in a fresh temp dir,
 * in this process or in agent processes. Everything here also runs inside a pool worker, so a
 * cell travels as plain data (`CellTask`) and the providers are rebuilt from plain settings.
 */
import type { OpenAIProviderOptions } from '../models/openai.js';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { AgentSession } from '../agent/loop.js';
import { emptyPhases, runCellInProcesses } from '../process/crashes.js';
import { Ledger } from '../agent/ledger.js';
import { distribution } from '../core/metrics.js';
import { recallByCategory, summarizeRecall } from '../results/recall.js';
import { createEmbedder, createModel, emptyUsage, MeteredModel, ResponseCache, type ChatModel, type Embedder, type ModelUsage } from '../models/index.js';
import type { StrategySpec } from './params.js';
import type { CellPhases, CellResult, DurabilityResult, LedgerCounts, ProbeRecord, TurnRecord } from '../results/schema.js';
import type { Scenario } from '../scenarios/format.js';
import { TokenCounter } from '../core/tokens.js';
import { cellPaths } from '../process/protocol.js';
import type { StrategyDefinition } from '../../strategies/types.js';

/** A cell as plain data: what a pool worker receives (the strategy is found again from `spec.source`). */
export interface CellTask {
  id: string;
  scenario: Scenario;
  spec: StrategySpec;
  /** Tool effects carry idempotency keys. */
  idempotencyKeys: boolean;
  trial: number;
  seed: number;
}

/** A cell with its strategy definition resolved: what `runCell` replays. */
export interface CellPlan extends CellTask {
  definition: StrategyDefinition;
}

import type { LiveProviderSettings } from '../models/openai.js';

export type { LiveProviderSettings };

/** Everything that builds a cell's providers, as plain data: sent once to each pool worker. */
export interface ProviderSettings {
  modelSpec: string;
  embedderSpec: string;
  live: LiveProviderSettings;
  /** The response cache file for live models; undefined: no cache. */
  cacheFile?: string;
  crashFuzz?: number;
  isolate: boolean;
  tokenizerModel: string;
  keepCellDirs: boolean;
  /** Where cell temp dirs are made (default: the OS temp dir). */
  tempRoot?: string;
  /** Record where each cell's time went (`phases` in its result). */
  profile?: boolean;
}

/** The providers a cell runs with (shared by the cells of one process). */
export interface Providers extends ProviderSettings {
  /** The model of trial 0 (names the run in the header). */
  model: ChatModel;
  /** The model a cell of the given trial uses: the response cache is keyed by trial. */
  modelFor: (trial: number) => ChatModel;
  embedder: Embedder;
  now: () => Date;
}

/** Builds the providers from settings; `close` releases the response cache. */
export function openProviders(settings: ProviderSettings, now: () => Date = () => new Date()): { providers: Providers; close: () => void } {
  const cacheStore = settings.cacheFile ? ResponseCache.open(settings.cacheFile) : undefined;
  const cache = cacheStore ? { store: cacheStore } : false;
  const models = new Map<number, ChatModel>();
  const modelFor = (trial: number): ChatModel => {
    let model = models.get(trial);
    if (!model) {
      model = createModel(settings.modelSpec, { ...settings.live, cache: cache && { ...cache, trial } });
      models.set(trial, model);
    }
    return model;
  };
  const providers: Providers = { ...settings, model: modelFor(0), modelFor, embedder: createEmbedder(settings.embedderSpec, { ...settings.live, cache }), now };
  return { providers, close: () => cacheStore?.close() };
}

/** Whether a cell needs agent processes: crashes, concurrent sessions, fuzzing, or asked for. */
export function needsProcesses(scenario: Scenario, providers: Pick<ProviderSettings, 'crashFuzz' | 'isolate'>): boolean {
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
  /** Peak resident set of the agent processes, in kB (0 when the cell ran in this process). */
  agentPeakRssKb?: number;
  phases: CellPhases;
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
  const phases = emptyPhases();
  const timed = async (phase: 'openMs' | 'replayMs' | 'closeMs', work: () => Promise<void>): Promise<void> => {
    const started = performance.now();
    await work();
    phases[phase] += performance.now() - started;
  };
  try {
    await timed('openMs', () => session.start());
    await timed('replayMs', () => session.run(plan.scenario.steps));
    await timed('closeMs', () => session.finish());
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  }
  const effects = ledger.counts();
  ledger.close();
  return { turns: session.turns, probes: session.probes, usage: model.usage, modelLatencies: model.latencies, effects, phases, ...(error !== undefined ? { error } : {}) };
}

/** Replays the scenario in agent processes, with the scenario's and the fuzzer's crashes. */
async function runInProcesses(plan: CellPlan, providers: Providers, dir: string): Promise<CellRecords> {
  const outcome = await runCellInProcesses({
    scenario: plan.scenario,
    fuzzKills: providers.crashFuzz,
    strategyCrashPoints: plan.definition.crashPoints,
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
  return { ...outcome, agentPeakRssKb: outcome.peakRssKb, effects: { effects: counts.effects, duplicates: counts.effectsDuplicated, refused: counts.effectsRefused } };
}

/** The cell's result from what its replay recorded. */
function cellResult(plan: CellTask, records: CellRecords, durationMs: number, profile = false): CellResult {
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
      contextMax: contextPerTurn.reduce((max, value) => Math.max(max, value), 0),
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
    // The process that replayed the cell (this one, or its agent processes): a ceiling, since a
    // worker process that ran earlier cells reports its peak over all of them.
    peakRssMb: Math.round(Math.max(process.resourceUsage().maxRSS, records.agentPeakRssKb ?? 0) / 1024),
    turns,
    probes,
    durationMs,
    ...(profile ? { phases: records.phases } : {}),
  };
}

/** A cell that never produced records (its pool worker died, its strategy would not load): an error result. */
export function failedCell(plan: CellTask, error: string, durationMs = 0): CellResult {
  return cellResult(plan, { turns: [], probes: [], usage: emptyUsage(), modelLatencies: [], effects: { effects: 0, duplicates: 0, refused: 0 }, phases: emptyPhases(), error }, durationMs);
}

/** Runs one cell in a fresh temp dir; a strategy's exception becomes `status: 'error'`. */
export async function runCell(plan: CellPlan, providers: Providers): Promise<CellResult> {
  const started = performance.now();
  const dir = await mkdtemp(path.join(providers.tempRoot ?? os.tmpdir(), 'membench-cell-'));
  let records: CellRecords;
  try {
    records = needsProcesses(plan.scenario, providers) ? await runInProcesses(plan, providers, dir) : await runInline(plan, providers, dir);
  } finally {
    if (!providers.keepCellDirs) await rm(dir, { recursive: true, force: true });
  }
  return cellResult(plan, records, performance.now() - started, providers.profile);
}
