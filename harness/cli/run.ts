/** `membench run`: flags over the config file → RunOptions → runBenchmark (resumable, sharded, in worker processes) → reports. */
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { Argv } from 'yargs';
import {
  assertWritableOutDir,
  defaultOutDir,
  renderConsoleSummary,
  tableWidth,
  REPORT_FILES_WITHOUT_MANIFEST,
  writeRunOutput,
} from '../../reports/index.js';
import { renderProfile, type RunPhase } from '../../reports/profile.js';
import { cellVerdict, verdictFails } from '../../reports/junit.js';
import { fileSystemProblem, isFileSystemError, MembenchError } from '../core/errors.js';
import { withOutDirLock } from '../run/out-lock.js';
import {
  assertNoInterruptedRun,
  CELLS_DIR,
  clearRunState,
  PLAN_FILE,
  PLANNED_KEYS,
  plannedOptions,
  RunDir,
} from '../run/run-dir.js';
import { runBenchmark, RunInterrupted, type RunOptions } from '../run/runner.js';
import { checkJudgeSettings, checkLiveEndpoint, judgeResults, type JudgeSettings } from '../run/judging.js';
import { resolveSettings, RUN_DEFAULTS, runOptionsOf, type ResolvedSettings } from '../run/layers.js';
import { flagValues, settingFlags } from '../run/setting-sources.js';
import {
  checkOutFlag,
  interruptOnSignals,
  progressReporter,
  reportJudgeGate,
  warnOverwriteWithoutManifest,
} from './common.js';
import { handled } from './errors.js';

export const command = 'run';
export const describe = 'Replay scenarios against memory strategies and report tokens, latency and recall';

export function builder(yargs: Argv) {
  return settingFlags(yargs, 'run')
    .example('$0 run', 'every built-in strategy on every built-in scenario, offline, one worker process per core')
    .example(
      '$0 run -s buffer -s window -p window.k=2,4,8 -c recipes-zh',
      'sweep the window size on the Chinese recipe conversation',
    )
    .example(
      '$0 run -c generated',
      'the generated suite alone: over 500 probes per strategy, 1 to 256 exchanges after their facts',
    )
    .example(
      '$0 run -c crash-mid-tool-call --durability sync,exit,none',
      'what each durability mode loses when the agent process is killed',
    )
    .example('$0 run --crash-fuzz 50 --seed 7 -c remember-then-crash', '50 reproducible random kills per cell')
    .example('$0 run --shard 2/3 -o shard-2', 'the second third of the cells (membench merge joins the shards)')
    .example('$0 run --resume .membench/run-20250101-120000', 'finish a run stopped by Ctrl-C')
    .example(
      '$0 run --model openai:gpt-4o-mini --base-url http://localhost:11434/v1',
      'a live model on any OpenAI-compatible endpoint',
    )
    .example(
      '$0 run --dataset longmemeval:longmemeval_s.json --judge offline --judge openai:gpt-4o',
      'answers judged by the offline rules and an LLM, with their agreement (κ)',
    );
}

type RunArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

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

export const handler = handled(async (argv: RunArgs) => {
  const flags = flagValues(argv, 'run');
  const layers = await resolveSettings(flags);
  const { recallThreshold, judgeThreshold: judgeGate } = layers.values;
  const warn = (warning: string): boolean => process.stderr.write(`${warning}\n`);
  if (argv.resume !== undefined && argv.out !== undefined && path.resolve(argv.out) !== path.resolve(argv.resume)) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--resume ${argv.resume} writes into ${argv.resume}: drop --out ${argv.out}`,
    );
  }
  const judging: JudgeSettings = {
    judges: flags.judges ?? [],
    promptsFile: flags.judgePrompts,
    live: layers.options.live,
    cache: layers.options.cache,
  };
  await checkJudgeSettings(judging);
  if (judgeGate !== undefined && judging.judges.length === 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      flags.judgeThreshold !== undefined
        ? `--judge-threshold ${argv['judge-threshold']}: no judge runs; name one with --judge (offline or openai:NAME)`
        : `judgeThreshold ${judgeGate} (the config file's): no judge runs; name one with --judge (offline or openai:NAME)`,
    );
  const out = argv.resume ?? layers.values.out ?? defaultOutDir(new Date());
  checkOutFlag(out);
  // One run per dir, from before its state is read until its reports are written.
  const command = argv.resume !== undefined ? ['membench run --resume', '--resume'] : ['membench run', '--out'];
  return withOutDirLock(
    out,
    command[0]!,
    () => runLocked(argv, { out, flags: runOptionsOf(flags), layers, recallThreshold, warn, judging, judgeGate }),
    command[1],
  );
});

/** A live model or embedder with no endpoint set is refused before the out dir is touched (see checkLiveEndpoint). */
function checkRunEndpoint(options: RunOptions): void {
  checkLiveEndpoint(
    [
      { flag: '--model', provider: options.model },
      { flag: '--embedder', provider: options.embedder },
    ],
    options.live,
  );
}

interface RunPlan {
  out: string;
  /** The options the flags alone set (a resumed run checks them against its plan). */
  flags: RunOptions;
  layers: ResolvedSettings;
  recallThreshold: number | undefined;
  warn: (warning: string) => boolean;
  judging: JudgeSettings;
  /** `--judge-threshold` (or the config file's `judgeThreshold`): the judges' accuracy gate. */
  judgeGate: number | undefined;
}

/** The run itself, with the out dir locked: resume or start, run the cells, write the reports. */
async function runLocked(
  argv: RunArgs,
  { out, flags, layers, recallThreshold, warn, judging, judgeGate }: RunPlan,
): Promise<number> {
  let options = layers.options;
  let store: RunDir;
  if (argv.resume !== undefined) {
    store = await RunDir.resume(out, warn);
    assertSameMatrix(out, store.options, flags);
    // The matrix from plan.json; settings that do not change results (workers, cell dirs, time limit, the API key) from flags and config.
    const { keepCellDirs, cellTimeoutMs } = layers.options;
    options = {
      ...store.options,
      live: { ...store.options.live, ...layers.options.live },
      ...(keepCellDirs !== undefined ? { keepCellDirs } : {}),
      ...(cellTimeoutMs !== undefined ? { cellTimeoutMs } : {}),
    };
    checkRunEndpoint(options);
  } else {
    checkRunEndpoint(options);
    assertWritableOutDir(out, argv.overwrite);
    await assertNoInterruptedRun(out, argv.overwrite);
    await warnOverwriteWithoutManifest(out, argv.overwrite, [...REPORT_FILES_WITHOUT_MANIFEST, PLAN_FILE, CELLS_DIR]);
    store = RunDir.fresh(out, options, warn, argv.overwrite ? REPORT_FILES_WITHOUT_MANIFEST : []);
  }
  // A full disk stops the run with its finished cells on disk: say how to go on.
  const resumable = (error: unknown): unknown =>
    isFileSystemError(error) && (error.code === 'ENOSPC' || error.code === 'EDQUOT')
      ? fileSystemProblem(
          error,
          `the finished cells are kept in ${out}: free some space, then continue with membench run --resume ${out}`,
        )
      : error;
  const progress = progressReporter(argv.quiet, Boolean(process.stderr.isTTY), layers.workers);
  const interrupt = interruptOnSignals();
  let result;
  try {
    // Every cell in a worker process, also with -w 1: a strategy that hangs, blocks or exits costs only its cell.
    result = await runBenchmark({
      ...options,
      workers: layers.workers,
      workerProcesses: true,
      store,
      signal: interrupt.signal,
      onWarning: warn,
      onProgress: progress.onProgress,
      ...(argv.profile ? { profile: true } : {}),
    });
  } catch (error) {
    progress.stop();
    if (!(error instanceof RunInterrupted)) throw resumable(error);
    process.stderr.write(`interrupted: resume with membench run --resume ${out}\n`);
    // Anything still settling (a worker's exit, a cell abandoned mid-write) would keep it alive: leave now.
    process.exit(interrupt.exitCode());
  } finally {
    progress.stop();
    interrupt.dispose();
  }
  // The answers are in: judge them before anything is printed or written (a failing judge keeps the finished cells for --resume).
  if (judging.judges.length > 0)
    result = await judgeResults(result, { ...judging, live: options.live, cache: options.cache });
  process.stdout.write(
    `${renderConsoleSummary(result, { color: Boolean(process.stdout.isTTY), detail: argv.detail, width: tableWidth(process.stdout) })}\n`,
  );
  const verdictOptions = recallThreshold === undefined ? {} : { recallThreshold };
  const phases: RunPhase[] = [{ name: 'planning + cells (runBenchmark)', ms: result.header.durationMs }];
  const onPhase = (phase: string, ms: number): number =>
    phases.push({ name: phase === 'writing' ? 'writing files' : `rendering ${phase}`, ms });
  let files: string[];
  try {
    files = await writeRunOutput(result, out, {
      overwrite: argv.overwrite || argv.resume !== undefined,
      command: 'membench run',
      ...verdictOptions,
      onPhase,
    });
    if (argv.profile) process.stderr.write(`\n${renderProfile(result, phases)}`);
    // Cells in error keep the plan and the finished cells beside the reports: --resume reruns only those.
    if (!result.cells.some((cell) => cell.status === 'error')) await clearRunState(out);
  } catch (error) {
    throw resumable(error);
  }
  // Reports by name, charts counted: one line that fits a terminal however many charts the run drew.
  const charts = files.filter((file) => file.endsWith('.png'));
  const reports = files.filter((file) => !file.endsWith('.png')).map((file) => path.basename(file));
  const chartWord = charts.length
    ? ` and ${charts.length} chart${charts.length === 1 ? '' : 's'} in ${path.relative(out, path.dirname(charts[0]!)) || '.'}/`
    : '';
  process.stdout.write(`wrote ${path.relative(process.cwd(), out) || '.'}/ (${reports.join(', ')}${chartWord})\n`);
  const failed = result.cells.filter((cell) => verdictFails(cellVerdict(cell, verdictOptions)));
  for (const cell of failed) {
    const verdict = cellVerdict(cell, verdictOptions);
    process.stderr.write(`FAILED ${cell.id}: ${[verdict.error, ...verdict.failures].filter(Boolean).join('; ')}\n`);
  }
  const errored = result.cells.filter((cell) => cell.status === 'error').length;
  if (errored > 0)
    process.stderr.write(
      `membench: ${errored} cell${errored === 1 ? '' : 's'} in error: rerun only ${errored === 1 ? 'it' : 'them'} with membench run --resume ${out}\n`,
    );
  const judgeFailed = judging.judges.length > 0 && reportJudgeGate(result, judging.judges, judgeGate);
  return failed.length > 0 || judgeFailed ? 1 : 0;
}
