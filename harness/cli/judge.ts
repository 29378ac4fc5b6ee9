/** `membench judge RUN`: judges a finished run's answers (stored in its results.json) without replaying it, then re-renders its reports. */
import path from 'node:path';
import type { Argv } from 'yargs';
import { renderJsonChunks, writeRunOutput } from '../../reports/index.js';
import { writeFileAtomic } from '../core/fs.js';
import type { RunResult } from '../results/schema.js';
import { renderJudgingConsole } from '../../reports/console.js';
import { readResults } from '../results/read.js';
import { withOutDirLock } from '../run/out-lock.js';
import { checkJudgeSettings, judgeResults } from '../run/judging.js';
import { runOptionsOf } from '../run/layers.js';
import { flagValues, settingFlags } from '../run/setting-sources.js';
import { reportJudgeGate } from './common.js';
import { handled } from './errors.js';

export const command = 'judge <results>';
export const describe =
  "Judge a finished run's answers (offline rules or an LLM judge) without replaying it, and re-render its reports";

export function builder(yargs: Argv) {
  return settingFlags(
    yargs.positional('results', { type: 'string', demandOption: true, describe: 'a run dir or its results.json' }),
    'judge',
  )
    .example('$0 judge .membench/run-20250101-120000', 'judge the answers with the offline judge (deterministic rules)')
    .example(
      '$0 judge .membench/run-20250101-120000 --judge openai:gpt-4o --base-url http://localhost:8000/v1',
      'judge them with an LLM; judge again with another for agreement (κ)',
    );
}

type JudgeArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: JudgeArgs) => {
  const flags = flagValues(argv, 'judge');
  const settings = {
    judges: flags.judges ?? ['offline'],
    promptsFile: flags.judgePrompts,
    live: runOptionsOf(flags).live ?? {},
    cache: flags.cache,
  };
  await checkJudgeSettings(settings);
  const threshold = flags.judgeThreshold;
  const { file } = await readResults(argv.results);
  const dir = path.dirname(file);
  const interrupt = stopOnSignals(file);
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
        interrupt.writing();
        const files =
          path.basename(file) === 'results.json'
            ? await writeRunOutput(judged, dir, { overwrite: true, stepSummary: null })
            : await writeJudgedFile(judged, file);
        return { judged, files };
      },
      null,
    );
  } finally {
    interrupt.dispose();
  }
  process.stdout.write(`${renderJudgingConsole(written.judged).join('\n')}\n`);
  process.stdout.write(`wrote ${written.files.map((item) => path.relative(process.cwd(), item) || item).join(', ')}\n`);
  return reportJudgeGate(written.judged, settings.judges, threshold) ? 1 : 0;
});

/** A results file that is not a run dir's results.json is judged in place, its reports left alone (render them with membench report). */
async function writeJudgedFile(result: RunResult, file: string): Promise<string[]> {
  await writeFileAtomic(file, renderJsonChunks(result));
  return [file];
}

/**
 * SIGINT / SIGTERM while judging: says so and exits 130, the lock released on the way out (its
 * exit listener) and `file` as it was. Once writing has begun the files are finished first (each
 * is atomic, but the set is one judging); a second signal stops at once.
 */
function stopOnSignals(file: string): { writing(): void; dispose(): void } {
  let writing = false;
  let pending = false;
  const stop = (): void => {
    if (writing && !pending) {
      pending = true;
      return;
    }
    process.stderr.write(
      pending
        ? 'interrupted: stopped while writing the judged results\n'
        : `interrupted: nothing written (${file} is as it was)\n`,
    );
    process.exit(130);
  };
  const signals = ['SIGINT', 'SIGTERM'] as const;
  for (const signal of signals) process.on(signal, stop);
  return {
    writing: () => {
      writing = true;
    },
    dispose: () => {
      for (const signal of signals) process.off(signal, stop);
      if (!pending) return;
      process.stderr.write('interrupted: the judged results were written first\n');
      process.exit(130);
    },
  };
}
