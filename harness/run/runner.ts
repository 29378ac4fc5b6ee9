/**
 * The runner: scenarios × strategies × parameter sets × trials, each cell replayed in its own
 * temp dir with its own seed, every failure recorded as a result rather than thrown. Cells run
 * here one after another, or in a pool of worker processes; a shard runs every n-th cell; a
 * cell store persists finished cells so an interrupted run resumes where it stopped. The plan is
 * made in plan.ts, the providers' settings in provider-settings.ts, the options are options.ts (derived from the settings table, settings.ts).
 */
import { rm } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { openProviders, runCell, type ProviderSettings } from './cell.js';
import { durabilityMatrix, modePrices } from '../results/durability-matrix.js';
import { machineId } from '../core/machine.js';
import { startCalibration, type Calibration } from '../core/calibration.js';
import { MEMBENCH_VERSION, membenchCommit } from '../core/package-info.js';
import { runInPool, RunInterrupted, type PoolTask } from './pool.js';
import { withinTimeLimit } from './cell-timeout.js';
import { checkCellScheduleFile } from './cell-sched.js';
import { checkProfileDir } from '../process/worker.js';
import { makeRunTempDir, reclaimAbandonedTempDirs } from './temp-dirs.js';
import { checkRunOptions } from './limits.js';
import { RESULTS_SCHEMA_VERSION, type CellResult, type RunHeader, type RunResult } from '../results/schema.js';
import { emptyShardWords, inShard, type ShardedRunHeader } from '../results/shard.js';
import { shareRankings } from '../results/shared-rankings.js';
import { cutAnswersWords } from '../results/cells.js';
import { TokenCounter } from '../core/tokens.js';
import { isShelved } from './scenario-shelf.js';
import { costliestFirst, loadedCell, planDigest, planRun, type PlannedCell, type RunPlan } from './plan.js';
import { providerSettings } from './provider-settings.js';
import type { RunOptions } from './options.js';
import { DEFAULT_CELL_TIMEOUT_MS, DEFAULT_SEED, SETTINGS } from './settings.js';

export { needsProcesses, runCell, type CellPlan, type CellTask, type LiveProviderSettings } from './cell.js';
export { RunInterrupted } from './pool.js';
export type { CellStore, IdempotencyChoice, ProgressEvent, RunOptions } from './options.js';
export { DEFAULT_CACHE_FILE, DEFAULT_CELL_TIMEOUT_MS, DEFAULT_SEED } from './settings.js';
export { retrievalKs } from './setting-values.js';
export {
  CONTRAST_STRATEGY,
  DEFAULT_PRICED_SCENARIOS,
  cellSeed,
  costliestFirst,
  estimatedCost,
  loadedCell,
  planDigest,
  planRun,
  type PlannedCell,
} from './plan.js';
export { providerSettings } from './provider-settings.js';

function toTask({ definition: _definition, ...task }: PlannedCell): PoolTask['task'] {
  return task;
}

/** The pool's task for a planned cell (by its position). */
const toPoolTask =
  (plans: readonly (PlannedCell | undefined)[]) =>
  (position: number): PoolTask => ({ index: position, task: toTask(plans[position]!) });

interface Planned extends Omit<RunPlan, 'plans' | 'scenarios'> {
  /** Each cell's plan until its result is recorded. */
  plans: (PlannedCell | undefined)[];
  scenarioHeaders: RunHeader['scenarios'];
  digest: string;
}

/**
 * The run's plan with what the header and the digest need of its scenarios taken now: the
 * scenarios themselves (a built-in's or a file's; a dataset's questions are on the plan's shelf)
 * are then held only by the plans of cells not yet recorded, and each goes with its last cell.
 */
async function planned(options: RunOptions, settings: ProviderSettings): Promise<Planned> {
  const { plans, scenarios, ...rest } = await planRun(options);
  try {
    return {
      ...rest,
      plans,
      scenarioHeaders: scenarios.map((scenario) => ({
        name: scenario.name,
        source: scenario.source,
        steps: isShelved(scenario) ? scenario.stepCount : scenario.steps.length,
        ...(scenario.group !== undefined ? { group: scenario.group } : {}),
      })),
      digest: planDigest(plans, scenarios, settings),
    };
  } catch (error) {
    await rest.shelf?.close();
    throw error;
  }
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

/**
 * The developer switches (docs/development.md) a cell or a child process would trip on, each in its
 * own way (every cell failing, a line per process): refused before the run, naming the variable.
 */
export function checkDeveloperSwitches(): void {
  checkCellScheduleFile();
  checkProfileDir();
}

/** Runs the whole matrix (or a shard of it) and returns typed results (nothing is written: see `writeRunOutput`). */
export async function runBenchmark(options: RunOptions = {}): Promise<RunResult> {
  checkRunOptions(options);
  checkDeveloperSwitches();
  const now = options.now ?? (() => new Date());
  const startedAt = now();
  const started = performance.now();
  const settings = providerSettings(options);
  const plan = await planned(options, settings);
  try {
    return await runPlanned(plan, options, settings, { startedAt, started });
  } finally {
    await plan.shelf?.close();
  }
}

/** Runs the planned cells (those of the shard, not yet in the store) and makes the run's result. */
async function runPlanned(
  { plans, scenarioHeaders, digest, strategies, errata, imports }: Planned,
  options: RunOptions,
  settings: ProviderSettings,
  clock: { startedAt: Date; started: number },
): Promise<RunResult> {
  const { startedAt, started } = clock;
  const workers = options.workers ?? 1;
  const positions = plans.flatMap((_, position) => (inShard(position, options.shard) ? [position] : []));
  // A legitimate case (a CI matrix with more shards than cells), said so that nobody reads its empty results as a pass.
  if (options.shard && positions.length === 0)
    options.onWarning?.(
      `warning: --${emptyShardWords(options.shard, plans.length)}: nothing runs; its results hold no cell (merge takes them), and a --recall-threshold fails on them`,
    );
  const results = new Map<number, CellResult>();
  const record = async (position: number, result: CellResult): Promise<void> => {
    await options.store?.save(position, result);
    // Held to the end of the run: its ranking entries become the process's shared ones.
    results.set(position, shareRankings(result));
    plans[position] = undefined;
    const empty = result.status === 'ok' ? (result.usage.emptyAnswers ?? 0) : 0;
    if (empty > 0)
      options.onWarning?.(
        `warning: ${result.id}: ${empty} model answer(s) came back with no text (content null or ""): scored as empty answers`,
      );
    const cut = result.status === 'ok' ? (result.usage.cutAnswers ?? 0) : 0;
    if (cut > 0) options.onWarning?.(`warning: ${result.id}: ${cutAnswersWords(cut)}`);
    options.onProgress?.({ type: 'cell', index: positions.indexOf(position), cells: positions.length, result });
  };

  // Providers first: a bad model name fails before the store writes anything.
  const { providers, close } = openProviders(settings);
  let tempRoot: string | undefined;
  // Dead runs' temp dirs go first: on a TMPDIR their stores filled, the calibration's commit is the first write.
  await reclaimAbandonedTempDirs();
  // The machine's speed over the cells: compare divides latencies by it.
  const calibrating = await startCalibration({ periodic: workers > 1 || options.workerProcesses === true });
  let calibration: Calibration | undefined;
  try {
    tempRoot = await makeRunTempDir(settings.keepCellDirs);
    providers.tempRoot = tempRoot;
    const earlier =
      (await options.store?.open({ digest, ids: plans.map((plan) => plan!.id) })) ?? new Map<number, CellResult>();
    for (const position of positions)
      if (earlier.has(position)) results.set(position, shareRankings(earlier.get(position)!));
    const todo = positions.filter((position) => !results.has(position));
    const units = positions.map((position) => ({
      setting: plans[position]!.strategy.setting,
      ...(plans[position]!.scenario.group !== undefined ? { group: plans[position]!.scenario.group } : {}),
      done: results.has(position),
    }));
    options.onProgress?.({ type: 'start', cells: positions.length, finished: results.size, units });
    // Cells of other shards and those an earlier attempt finished need their scenarios no more.
    const running = new Set(todo);
    plans.forEach((_, position) => {
      if (!running.has(position)) plans[position] = undefined;
    });
    const cellTimeoutMs = options.cellTimeoutMs ?? DEFAULT_CELL_TIMEOUT_MS;
    if ((workers > 1 || options.workerProcesses) && todo.length > 0) {
      // Not kept here: the pool lets go of a task once its cell is over.
      await runInPool(costliestFirst(todo, plans).map(toPoolTask(plans)), {
        workers,
        cellTimeoutMs,
        settings: { ...settings, tempRoot },
        onResult: record,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } else {
      for (const position of todo) {
        if (options.signal?.aborted) throw new RunInterrupted();
        const plan = loadedCell(plans[position]!);
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
    trials: options.trials ?? SETTINGS.trials.default,
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
    scenarios: scenarioHeaders,
    ...(options.shard ? { shard: { ...options.shard, planned: plans.length, digest } } : {}),
    startedAt: startedAt.toISOString(),
    durationMs: performance.now() - started,
    machine: machineId(),
    ...(calibration ? { calibration } : {}),
    ...(options.protocol !== undefined ? { protocol: options.protocol } : {}),
    ...(imports.length > 0 ? { imports } : {}),
    ...(options.keepRankings === true ? { keepRankings: true as const } : {}),
  };
  return {
    header,
    cells,
    durabilityMatrix: durabilityMatrix(cells),
    durabilityPrices: modePrices(cells),
    ...(errata.length > 0 ? { errata } : {}),
  };
}
