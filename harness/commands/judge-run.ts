/**
 * Judging a finished run, as `membench judge` does: the judges' settings checked, the results read
 * again under the dir's lock, judged, and written back (a run dir's results.json with every report
 * re-rendered; any other results file in place). `cli/judge.ts` maps flags onto it.
 */
import path from 'node:path';
import { renderJsonChunks, writeRunOutput } from '../../reports/index.js';
import { writeFileAtomic } from '../core/fs.js';
import { checkJudged, type JudgeGate } from '../results/judges.js';
import { assertReportable, readResults } from '../results/read.js';
import type { RunResult } from '../results/schema.js';
import { checkJudgeSettings, judgeResults, type JudgeSettings } from '../run/judging.js';
import { runOptionsOf } from '../run/layers.js';
import { withOutDirLock } from '../run/out-lock.js';
import type { SettingValues } from '../run/settings.js';

/** What watches a judging: told when writing begins (a stop then waits for the files), and when all is done. */
export interface JudgingWatch {
  writing?: (() => void) | undefined;
  done?: (() => void) | undefined;
}

export interface JudgeRunOptions {
  /** A run dir or a results file. */
  results: string;
  /** The judge command's flags (`--judge`, `--judge-prompts`, `--judge-threshold`, live endpoint, cache). */
  flags: SettingValues;
  /** Called once the results file is found, before the lock is taken. */
  onJudging?: ((file: string) => JudgingWatch) | undefined;
}

export interface JudgeRunOutcome {
  judged: RunResult;
  files: string[];
  /** What the judges did not measure and why their gate failed. */
  gate: JudgeGate;
}

/** Judges the answers stored in a finished run (the offline judge unless `flags.judges` names others). */
export async function judgeRunFile(options: JudgeRunOptions): Promise<JudgeRunOutcome> {
  const { flags } = options;
  const settings: JudgeSettings = {
    judges: flags.judges ?? ['offline'],
    promptsFile: flags.judgePrompts,
    live: runOptionsOf(flags).live ?? {},
    cache: flags.cache,
  };
  await checkJudgeSettings(settings);
  const { file, result: first } = await readResults(options.results);
  // A file no report can stand on (no cell, a cell id twice) is refused before it is judged and rewritten, as report refuses it.
  assertReportable(first, file);
  const dir = path.dirname(file);
  const watch = options.onJudging?.(file) ?? {};
  let written: { judged: RunResult; files: string[] };
  try {
    // No flag named the dir: a lock held by another run is waited for, not worked around.
    written = await withOutDirLock(
      dir,
      'membench judge',
      async () => {
        // Read again under the lock: a run writing into the dir meanwhile would otherwise be overwritten.
        const { result } = await readResults(file);
        const judged = await judgeResults(result, settings);
        watch.writing?.();
        const files =
          path.basename(file) === 'results.json'
            ? await writeRunOutput(judged, dir, { overwrite: true, stepSummary: null })
            : await writeJudgedFile(judged, file);
        return { judged, files };
      },
      null,
    );
  } finally {
    watch.done?.();
  }
  return { ...written, gate: checkJudged(written.judged, settings.judges, flags.judgeThreshold) };
}

/** A results file that is not a run dir's results.json is judged in place, its reports left alone (render them with membench report). */
async function writeJudgedFile(result: RunResult, file: string): Promise<string[]> {
  await writeFileAtomic(file, renderJsonChunks(result));
  return [file];
}
