/**
 * A run into an output dir, as `membench run` makes it: a fresh run or a resumed one (its matrix
 * from plan.json), the dir locked from before its state is read until its reports are written,
 * the answers judged, the reports written, the run state cleared once no cell is in error, and
 * the verdicts returned as data. `cli/run.ts` maps flags onto it and prints what it returns.
 */
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import {
  assertWritableOutDir,
  defaultOutDir,
  REPORT_FILES_WITHOUT_MANIFEST,
  writeRunOutput,
} from '../../reports/index.js';
import { ChartDrawer, renderChartsInParallel } from '../../reports/chart-thread.js';
import { cellVerdict, emptyRunFailure, verdictFails, type CellVerdict } from '../../reports/junit.js';
import type { RunPhase } from '../../reports/profile.js';
import { fullDiskProblem, isMembenchError, MembenchError } from '../core/errors.js';
import { warnOverwriteWithoutManifest } from '../core/manifest.js';
import { checkJudged, type JudgeGate } from '../results/judges.js';
import type { CellResult, RunResult } from '../results/schema.js';
import { checkJudgeSettings, checkLiveEndpoint, judgeResults, type JudgeSettings } from '../run/judging.js';
import { RUN_DEFAULTS, runOptionsOf, type ResolvedSettings } from '../run/layers.js';
import type { ProgressEvent, RunOptions } from '../run/options.js';
import { checkOutFlag, withOutDirLock } from '../run/out-lock.js';
import {
  assertNoInterruptedRun,
  CELLS_DIR,
  clearRunState,
  PLAN_FILE,
  PLANNED_KEYS,
  plannedOptions,
  RunDir,
} from '../run/run-dir.js';
import { checkDeveloperSwitches, runBenchmark, RunInterrupted } from '../run/runner.js';
import type { SettingValues } from '../run/settings.js';

/** What a run into a dir needs: its settings resolved, where it writes, and the caller's hooks. */
export interface RunToDirOptions {
  /** Defaults < config file < flags (`resolveSettings`). */
  settings: ResolvedSettings;
  /** The flag layer alone: a resumed run checks the planned options it sets against plan.json. */
  flags: SettingValues;
  /** Continue the run in this dir (its plan and finished cells) instead of starting one in `settings.values.out`. */
  resume?: string | undefined;
  /** Replace the reports of another run in the out dir. */
  overwrite?: boolean | undefined;
  /** Time the phases of this process too (`RunToDirFinished.phases`). */
  profile?: boolean | undefined;
  /** `--judge-threshold` as typed, quoted by the refusal of a gate with no judge. */
  judgeThresholdText?: string | undefined;
  onWarning: (warning: string) => void;
  /** Called once the out dir is locked and its run dir open, just before the first cell: what watches the cells. */
  onCells?: (() => CellWatch) | undefined;
  /** The judged result, before any file is written (a console summary is printed here). */
  onResult?: ((result: RunResult) => void) | undefined;
}

/** What watches the cells while they run: a progress display, a stop signal (Ctrl-C), and what ends with the cells. */
export interface CellWatch {
  /** Aborting stops the cells; the outcome is then `interrupted`. */
  signal?: AbortSignal | undefined;
  onProgress?: ((event: ProgressEvent) => void) | undefined;
  /** After the last cell, finished or interrupted, before judging: a progress bar stops, signal handlers go. */
  done?: (() => void) | undefined;
}

/** A cell that failed its verdict (an error, a violated invariant, recall below the threshold). */
export interface FailedCell {
  cell: CellResult;
  verdict: CellVerdict;
}

/** The run stopped by its signal; its finished cells are kept in `out` for a resume. */
export interface RunToDirInterrupted {
  status: 'interrupted';
  out: string;
}

/** The run finished and its reports are written. */
export interface RunToDirFinished {
  status: 'finished';
  out: string;
  result: RunResult;
  /** Every file written (reports, then charts). */
  files: string[];
  failed: FailedCell[];
  /** Why the recall threshold failed a run of no cell (an empty shard); undefined otherwise. */
  emptyRun: string | undefined;
  /** Cells in error: the run state stays in `out` so that a resume reruns only them. */
  errored: number;
  /** What the judges did not measure and why their gate failed; undefined when no judge ran. */
  judgeGate: JudgeGate | undefined;
  /** With `profile`: this process's phases (planning and cells, rendering, writing). */
  phases: RunPhase[] | undefined;
}

export type RunToDirOutcome = RunToDirInterrupted | RunToDirFinished;

/** Checks the settings, locks the out dir, runs (or resumes) the matrix, judges and writes every report. */
export async function runToDir(options: RunToDirOptions): Promise<RunToDirOutcome> {
  const { settings, flags, resume } = options;
  const judgeGate = settings.values.judgeThreshold;
  if (resume !== undefined && flags.out !== undefined && path.resolve(flags.out) !== path.resolve(resume))
    throw new MembenchError('INVALID_ARGUMENT', `--resume ${resume} writes into ${resume}: drop --out ${flags.out}`);
  const judging: JudgeSettings = {
    judges: flags.judges ?? [],
    promptsFile: flags.judgePrompts,
    live: settings.options.live,
    cache: settings.options.cache,
  };
  await checkJudgeSettings(judging);
  if (judgeGate !== undefined && judging.judges.length === 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      flags.judgeThreshold !== undefined
        ? `--judge-threshold ${options.judgeThresholdText ?? flags.judgeThreshold}: no judge runs; name one with --judge (offline or openai:NAME)`
        : `judgeThreshold ${judgeGate} (the config file's): no judge runs; name one with --judge (offline or openai:NAME)`,
    );
  const out = resume ?? settings.values.out ?? defaultOutDir(new Date());
  if (resume !== undefined && resume.trim() === '')
    throw new MembenchError('INVALID_ARGUMENT', '--resume needs the run dir to finish (an unset variable?)');
  checkOutFlag(out);
  // Before the out dir is touched (runBenchmark checks them too, for the library's callers).
  checkDeveloperSwitches();
  // One run per dir, from before its state is read until its reports are written.
  const [command, flag] = resume !== undefined ? ['membench run --resume', '--resume'] : ['membench run', '--out'];
  return withOutDirLock(out, command, () => runLocked(options, out, judging), flag);
}

/** A resumed run keeps its matrix: a planned option given as a flag must say what plan.json says. */
function assertSameMatrix(dir: string, stored: RunOptions, flags: RunOptions): void {
  const given = plannedOptions(flags);
  const planned = { ...RUN_DEFAULTS, ...stored };
  for (const key of PLANNED_KEYS) {
    const value = given[key];
    if (value === undefined || isDeepStrictEqual(value, planned[key])) continue;
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--resume ${dir}: the run was planned with ${key} ${planned[key] === undefined ? '(the default)' : JSON.stringify(planned[key])}, not ${JSON.stringify(value)}: a resumed run keeps its matrix (drop the flag, or start a fresh run)`,
    );
  }
}

/** A live model or embedder with no endpoint set is refused before the out dir is touched (see checkLiveEndpoint). */
export function checkRunEndpoint(options: RunOptions): void {
  checkLiveEndpoint(
    [
      { flag: '--model', provider: options.model },
      { flag: '--embedder', provider: options.embedder },
    ],
    options.live,
  );
}

/** The run dir to write into: the stored one with its matrix, or a fresh one after the out dir's checks. */
async function openRunDir(options: RunToDirOptions, out: string): Promise<{ store: RunDir; run: RunOptions }> {
  const { settings, onWarning } = options;
  const overwrite = options.overwrite ?? false;
  if (options.resume !== undefined) {
    const store = await RunDir.resume(out, onWarning);
    assertSameMatrix(out, store.options, runOptionsOf(options.flags));
    // The matrix from plan.json; settings that do not change results (workers, cell dirs, time limit, the API key) from flags and config.
    const { keepCellDirs, cellTimeoutMs } = settings.options;
    const run: RunOptions = {
      ...store.options,
      live: { ...store.options.live, ...settings.options.live },
      ...(keepCellDirs !== undefined ? { keepCellDirs } : {}),
      ...(cellTimeoutMs !== undefined ? { cellTimeoutMs } : {}),
    };
    checkRunEndpoint(run);
    return { store, run };
  }
  checkRunEndpoint(settings.options);
  assertWritableOutDir(out, overwrite);
  await assertNoInterruptedRun(out, overwrite);
  await warnOverwriteWithoutManifest(
    out,
    overwrite,
    [...REPORT_FILES_WITHOUT_MANIFEST, PLAN_FILE, CELLS_DIR],
    onWarning,
  );
  const store = RunDir.fresh(out, settings.options, onWarning, overwrite ? REPORT_FILES_WITHOUT_MANIFEST : []);
  return { store, run: settings.options };
}

/** The run itself, with the out dir locked: resume or start, run the cells, judge, write the reports. */
async function runLocked(options: RunToDirOptions, out: string, judging: JudgeSettings): Promise<RunToDirOutcome> {
  const { store, run } = await openRunDir(options, out);
  // Loads the chart drawing in a worker thread while the cells run: at the end it only draws.
  const drawer = new ChartDrawer();
  try {
    return await runAndReport(options, out, judging, store, run, drawer);
  } finally {
    drawer.close();
  }
}

/** runLocked's work once its run dir is open and its chart thread started: the cells, the judging, the reports. */
async function runAndReport(
  options: RunToDirOptions,
  out: string,
  judging: JudgeSettings,
  store: RunDir,
  run: RunOptions,
  drawer: ChartDrawer,
): Promise<RunToDirOutcome> {
  const { settings } = options;
  // A full disk stops the run with its finished cells on disk: say how to go on.
  const resumable = (error: unknown): unknown =>
    fullDiskProblem(error, `the finished cells are kept in ${out}`, `continue with membench run --resume ${out}`);
  const watch = options.onCells?.() ?? {};
  let result: RunResult;
  try {
    // Every cell in a worker process, also with -w 1: a strategy that hangs, blocks or exits costs only its cell.
    result = await runBenchmark({
      ...run,
      workers: settings.workers,
      workerProcesses: true,
      store,
      signal: watch.signal,
      onWarning: options.onWarning,
      onProgress: watch.onProgress,
      ...(options.profile ? { profile: true } : {}),
    });
  } catch (error) {
    if (error instanceof RunInterrupted) return { status: 'interrupted', out };
    throw resumable(error);
  } finally {
    watch.done?.();
  }
  // The answers are in: judge them before anything is printed or written (a failing judge keeps the finished cells for --resume).
  if (judging.judges.length > 0) {
    try {
      result = await judgeResults(result, { ...judging, live: run.live, cache: run.cache });
    } catch (error) {
      // The plan does not record the judges: a --resume without them would finish the run unjudged, without a word.
      const hint = `the finished cells are kept in ${out}: judge them with membench run --resume ${out} ${judging.judges.map((judge) => `--judge ${judge}`).join(' ')} and the other judge flags you gave (the run dir does not keep them)`;
      if (isMembenchError(error)) throw new MembenchError(error.code, error.message, [...error.details, hint]);
      throw error;
    }
  }
  // Drawn in a worker thread while the summary is printed and the other reports rendered.
  const charts = renderChartsInParallel(result, drawer);
  options.onResult?.(result);
  const recallThreshold = settings.values.recallThreshold;
  const verdictOptions = recallThreshold === undefined ? {} : { recallThreshold };
  const phases: RunPhase[] = [{ name: 'planning + cells (runBenchmark)', ms: result.header.durationMs }];
  const onPhase = (phase: string, ms: number): number =>
    phases.push({ name: phase === 'writing' ? 'writing files' : `rendering ${phase}`, ms });
  let files: string[];
  try {
    files = await writeRunOutput(result, out, {
      overwrite: (options.overwrite ?? false) || options.resume !== undefined,
      command: 'membench run',
      ...verdictOptions,
      onPhase,
      charts,
    });
    // Cells in error keep the plan and the finished cells beside the reports: --resume reruns only those.
    if (!result.cells.some((cell) => cell.status === 'error')) await clearRunState(out);
  } catch (error) {
    throw resumable(error);
  }
  const failed = result.cells.flatMap((cell) => {
    const verdict = cellVerdict(cell, verdictOptions);
    return verdictFails(verdict) ? [{ cell, verdict }] : [];
  });
  return {
    status: 'finished',
    out,
    result,
    files,
    failed,
    emptyRun: emptyRunFailure(result, verdictOptions),
    errored: result.cells.filter((cell) => cell.status === 'error').length,
    judgeGate:
      judging.judges.length > 0 ? checkJudged(result, judging.judges, settings.values.judgeThreshold) : undefined,
    phases: options.profile ? phases : undefined,
  };
}
