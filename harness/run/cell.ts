/**
 * One cell of the matrix: a scenario replayed against one strategy setting in a fresh temp dir,
 * in this process or in agent processes. Everything here also runs inside a pool worker, so a
 * cell travels as plain data (`CellTask`) and the providers are rebuilt from plain settings.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { storageProblem } from '../core/sqlite.js';
import { isDatasetReplay } from '../scenarios/importers/index.js';
import { runCellInProcesses } from '../process/crashes.js';
import { cellResult, errorCell, type CellRecords } from '../results/cell-result.js';
import type { ProbeScoringInput } from '../results/probe-record.js';
import type { Protocol } from '../results/protocols.js';
import { createEmbedder, createModel, ResponseCache, type ChatModel, type Embedder } from '../models/index.js';
import type { StrategySetting } from './params.js';
import { emptyPhases, type CellResult, type ErrorCell } from '../results/schema.js';
import type { Scenario } from '../scenarios/format.js';
import { agentTexts } from '../agent/agent-texts.js';
import { cellPaths } from '../process/protocol.js';
import { batchEnd, openCellSession, replayRun } from '../process/cell-session.js';
import { cellDirPrefix, returnScratchDir, takeScratchDir } from './temp-dirs.js';
import type { PreloadHint, StrategyDefinition } from '../../strategies/types.js';
import { hasCjkIn } from '../core/text.js';
import { memoLast } from '../core/memo.js';
import type { LiveProviderSettings } from '../models/openai.js';
import { RANK_ONLY_DIRS, ranksOnly, runRankOnly } from './rank-only.js';
import { startCellSchedule } from './cell-sched.js';
import { errorMessage } from '../core/errors.js';
import { spawnsProcesses, type PlannedScenario } from './scenario-shelf.js';

/** A cell as plain data: what a pool worker receives (the strategy is found again from `strategy.source`). */
export interface CellTask {
  id: string;
  scenario: Scenario;
  strategy: StrategySetting;
  /** Tool effects carry idempotency keys. */
  idempotencyKeys: boolean;
  trial: number;
  seed: number;
  /** Run only to price a durability mode the strategy does not default to (see RunOptions.priceDurability). */
  pricing?: boolean;
}

/** A cell with its strategy definition resolved: what `runCell` replays. */
export interface CellPlan extends CellTask {
  definition: StrategyDefinition;
}

export type { LiveProviderSettings };

/** Everything that builds a cell's providers, as plain data: sent once to each pool worker. */
export interface ProviderSettings {
  modelProvider: string;
  embedderProvider: string;
  live: LiveProviderSettings;
  /** The response cache file for live models; undefined: no cache. */
  cacheFile?: string;
  crashFuzz?: number;
  isolate: boolean;
  tokenizerModel: string;
  keepCellDirs: boolean;
  /** A worker's warm-up replay (pool.ts warmUpTasks): discarded, so its time is recorded nowhere. */
  warmUp?: boolean;
  /** Where cell temp dirs are made (default: the OS temp dir). */
  tempRoot?: string;
  /** The k of retrieval metrics, ascending (probes rank to the deepest). */
  retrievalK?: readonly number[];
  /** `--protocol`: probes rank the whole store, and their rankings are also scored by the paper's rules. */
  protocol?: Protocol;
  /** Record where each cell's time went (`phases` in its result). */
  profile?: boolean;
  /** `--keep-rankings`: each probe record keeps its whole ranking, not only the top. */
  keepRankings?: boolean;
  /** An ISO instant the strategies' clock stands still at, in this process and in agent processes alike (tests); absent: the system clock. */
  clock?: string;
  /** `--protocol-full`: protocol cells replay as every cell does (answers, durable stores), not ranking-only (rank-only.ts). */
  protocolFull?: boolean;
}

/** The providers a cell runs with (shared by the cells of one process). */
export interface Providers extends ProviderSettings {
  /** The model of trial 0 (names the run in the header). */
  model: ChatModel;
  /** The model a cell of the given trial uses: the response cache is keyed by trial. */
  modelFor: (trial: number) => ChatModel;
  embedder: Embedder;
}

/** Builds the providers from settings; `close` releases the response cache. */
export function openProviders(settings: ProviderSettings): { providers: Providers; close: () => void } {
  const cacheStore = settings.cacheFile ? ResponseCache.open(settings.cacheFile) : undefined;
  const cache = cacheStore ? { store: cacheStore } : false;
  const models = new Map<number, ChatModel>();
  const modelFor = (trial: number): ChatModel => {
    let model = models.get(trial);
    if (!model) {
      model = createModel(settings.modelProvider, { ...settings.live, cache: cache && { ...cache, trial } });
      models.set(trial, model);
    }
    return model;
  };
  const providers: Providers = {
    ...settings,
    model: modelFor(0),
    modelFor,
    embedder: createEmbedder(settings.embedderProvider, { ...settings.live, cache }),
  };
  return { providers, close: () => cacheStore?.close() };
}

/** Whether a cell needs agent processes: crashes, concurrent sessions, fuzzing, or asked for. */
export function needsProcesses(
  scenario: PlannedScenario,
  providers: Pick<ProviderSettings, 'crashFuzz' | 'isolate'>,
): boolean {
  return providers.isolate || (providers.crashFuzz ?? 0) > 0 || spawnsProcesses(scenario);
}

/** Told where a cell is (`open`, `step 12 (user)`, `close`...), so a cell that hangs can be reported with the phase it hung in. */
export type PhaseListener = (phase: string) => void;

/** A step's phase name: its index and kind. */
export const stepPhase = (index: number, step: Scenario['steps'][number]): string => `step ${index} (${step.kind})`;

/** The phase of a replayed dataset's run of saved turns and session boundaries, announced once: `steps 3–250 (saved turns)`. */
export const batchPhase = (first: number, last: number): string => `steps ${first}–${last} (saved turns)`;

/**
 * Whether a scenario's steps hold CJK text, for the scenario a process ran last: a worker runs a
 * question's cells back to back on one scenario object, and the check reads all of its text
 * (~0.2 ms a LongMemEval_S question, asked up to twice a cell).
 */
const stepsHoldCjk = memoLast((steps: Scenario['steps']) => hasCjkIn(steps));

/** What the scenario's text will need a strategy to load (fillers are expanded by now): a Chinese dictionary only where there is Chinese. */
function preloadHint(scenario: Scenario): PreloadHint {
  return { cjk: stepsHoldCjk(scenario.steps) };
}

/** Replays the scenario in this process (no faults): the fast path for plain cells. */
async function runInline(
  plan: CellPlan,
  providers: Providers,
  dir: string,
  onPhase: PhaseListener,
): Promise<CellRecords> {
  const datasetReplay = isDatasetReplay(plan.scenario);
  const { definition } = plan;
  const { session, model, ledger, close } = openCellSession({
    dir,
    definition,
    source: plan.strategy.source,
    options: plan.strategy.options,
    durability: plan.strategy.durability,
    seed: plan.seed,
    tokenizerModel: providers.tokenizerModel,
    model: providers.modelFor(plan.trial),
    embedder: providers.embedder,
    ...(providers.clock !== undefined ? { clock: providers.clock } : {}),
    scenario: plan.scenario.name,
    scoring: probeScoringOf(plan, providers),
    datasetReplay,
  });
  let error: string | undefined;
  const phases = emptyPhases();
  const timed = async (phase: 'openMs' | 'replayMs' | 'closeMs', work: () => Promise<void>): Promise<void> => {
    const started = performance.now();
    await work();
    phases[phase] += performance.now() - started;
  };
  try {
    onPhase('open');
    await timed('openMs', () => session.start());
    const steps = plan.scenario.steps;
    // A replayed dataset's saved turns and session boundaries share one fsync per file per run of them, up to the next probe, and one commit per session.
    await timed('replayMs', async () => {
      for (let index = 0; index < steps.length; ) {
        const end = batchEnd(steps, index, datasetReplay);
        // A batch is announced once (each phase may cross a process boundary: ~500 messages a question otherwise).
        if (end - index > 1) onPhase(batchPhase(index, end - 1));
        await replayRun(session, steps.slice(index, end), index, (at) => {
          if (end - index === 1) onPhase(stepPhase(at, steps[at]!));
        });
        index = end;
      }
    });
    onPhase('close');
    await timed('closeMs', () => session.finish());
  } catch (caught) {
    // SQLite's "database or disk is full" names no file: the cell's store dir (under TMPDIR) is named instead.
    error = storageProblem(caught, cellPaths(dir).strategyDir) ?? errorMessage(caught);
  }
  const effects = ledger.counts();
  close();
  const unreadable = [...session.unreadable];
  return {
    turns: session.turns,
    probes: session.probes,
    usage: model.usage,
    modelLatencies: model.latencies,
    effects,
    phases,
    peakRssKb: session.peakRssBytes / 1024,
    ...(error !== undefined ? { error } : {}),
    ...(unreadable.length ? { unreadable } : {}),
  };
}

/** Replays the scenario in agent processes, with the scenario's and the fuzzer's crashes. */
async function runInProcesses(
  plan: CellPlan,
  providers: Providers,
  dir: string,
  onPhase: PhaseListener,
): Promise<CellRecords> {
  const outcome = await runCellInProcesses({
    onStep: (index, step) => onPhase(`${stepPhase(index, step)} in an agent process`),
    onBatch: (first, last) => onPhase(`${batchPhase(first, last)} in an agent process`),
    scenario: plan.scenario,
    fuzzKills: providers.crashFuzz,
    strategyCrashPoints: plan.definition.crashPoints,
    ...(plan.definition.preloadShared && stepsHoldCjk(plan.scenario.steps)
      ? { preloadShared: plan.definition.preloadShared(agentTexts(plan.scenario.steps)) }
      : {}),
    cell: {
      cellId: plan.id,
      strategy: plan.strategy.source,
      options: plan.strategy.options,
      durability: plan.strategy.durability,
      dir,
      model: providers.modelProvider,
      embedder: providers.embedderProvider,
      live: providers.live,
      ...(providers.cacheFile ? { cache: { file: providers.cacheFile, trial: plan.trial } } : {}),
      tokenizerModel: providers.tokenizerModel,
      seed: plan.seed,
      sessionId: 'main',
      idempotencyKeys: plan.idempotencyKeys,
      scoring: probeScoringOf(plan, providers),
      scenario: plan.scenario.name,
      datasetReplay: isDatasetReplay(plan.scenario),
      ...(providers.clock !== undefined ? { clock: providers.clock } : {}),
    },
  });
  const { counts } = outcome.durabilityOutcome;
  return {
    ...outcome,
    effects: {
      effects: counts.effects,
      effectsDuplicated: counts.effectsDuplicated,
      effectsRefused: counts.effectsRefused,
    },
  };
}

/** What the cell's probes are scored against (harness/results/probe-record.ts). */
const probeScoringOf = (
  plan: CellPlan,
  settings: Pick<ProviderSettings, 'retrievalK' | 'protocol' | 'keepRankings'>,
): ProbeScoringInput => ({
  steps: plan.scenario.steps,
  // Rarity weights judge only a strategy that transforms what it keeps (metrics.ts evidenceRecall).
  ...(plan.definition.keepsVerbatim === false ? { rarity: true } : {}),
  ...(plan.strategy.options.unit === 'session' ? { unit: 'session' as const } : {}),
  ...(settings.retrievalK !== undefined ? { retrievalK: settings.retrievalK } : {}),
  ...(settings.protocol !== undefined ? { protocol: settings.protocol } : {}),
  ...(settings.keepRankings === true ? { keepRankings: true } : {}),
});

/** A cell that never produced records (its pool worker died, it timed out, its strategy would not load): an error result, with the phase it was in when known. */
export function failedCell(plan: CellTask, error: string, durationMs = 0, phase?: string): ErrorCell {
  return errorCell(plan, error, durationMs, { phase });
}

/** Runs one cell in a fresh temp dir; a strategy's exception becomes an error cell (`status: 'error'`, no figures). `onPhase` hears where the cell is. */
export async function runCell(
  plan: CellPlan,
  providers: Providers,
  onPhase: PhaseListener = () => undefined,
): Promise<CellResult> {
  // What the process loads once for every cell after it (jieba's dictionary, hnswlib) is loaded
  // before the cell's clock starts, as its modules are: else whichever cell of a worker first
  // meets a Han character pays ~0.2 s for all of them (a LongMemEval_S question with one in a
  // pasted article took 25x the median cell).
  try {
    plan.definition.preload?.(preloadHint(plan.scenario));
  } catch {
    // Loaded again on first use, inside the cell: a failure there is the cell's error, recorded as such.
  }
  const started = performance.now();
  const cpu = process.cpuUsage();
  const schedule = providers.warmUp ? undefined : startCellSchedule();
  const rankOnly = ranksOnly(plan, providers);
  // A ranking-only cell's dir stays as it made it (its stores are in memory): reused by the next one.
  const root = rankOnly && !providers.keepCellDirs ? providers.tempRoot : undefined;
  const dir =
    root !== undefined
      ? await takeScratchDir(root)
      : await mkdtemp(path.join(providers.tempRoot ?? os.tmpdir(), cellDirPrefix(plan.id)));
  let records: CellRecords;
  try {
    records = rankOnly
      ? await runRankOnly(plan, providers, dir, probeScoringOf(plan, providers), onPhase)
      : needsProcesses(plan.scenario, providers)
        ? await runInProcesses(plan, providers, dir, onPhase)
        : await runInline(plan, providers, dir, onPhase);
  } finally {
    if (root !== undefined) await returnScratchDir(root, dir, RANK_ONLY_DIRS);
    else if (!providers.keepCellDirs) await rm(dir, { recursive: true, force: true });
  }
  const result = cellResult(plan, records, performance.now() - started, providers.profile, providers.protocol);
  const used = process.cpuUsage(cpu);
  const cpuMs = (used.user + used.system) / 1000;
  await schedule?.(plan.id, result.durationMs, cpuMs);
  return { ...result, cpuMs };
}
