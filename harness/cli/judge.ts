/** `membench judge RUN`: judges a finished run's answers (stored in its results.json) without replaying it, then re-renders its reports. */
import path from 'node:path';
import type { Argv } from 'yargs';
import type { JudgingWatch } from '../commands/judge-run.js';
import { handled } from './errors.js';

export const command = 'judge <results>';
export const describe =
  "Judge a finished run's answers (offline rules or an LLM judge) without replaying it, and re-render its reports";

/** The flags come from the settings table, loaded once a command is named: `--version` and `--help` never load it. */
export async function builder(yargs: Argv) {
  const { settingFlags } = await import('../run/setting-sources.js');
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

type JudgeArgs = Awaited<ReturnType<typeof builder>> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: JudgeArgs) => {
  const [{ renderJudgingConsole }, { judgeRunFile }, { flagValues }, { reportJudgeGate, writtenFiles }] =
    await Promise.all([
      import('../../reports/console.js'),
      import('../commands/judge-run.js'),
      import('../run/setting-sources.js'),
      import('./common.js'),
    ]);
  const outcome = await judgeRunFile({
    results: argv.results,
    flags: flagValues(argv, 'judge'),
    onJudging: (file) => stopOnSignals(file),
  });
  process.stdout.write(`${renderJudgingConsole(outcome.judged).join('\n')}\n`);
  // A run dir: its reports re-rendered, said as run says them; a results file judged in place: that file.
  const results = outcome.files.find((file) => path.basename(file) === 'results.json');
  const wrote =
    results !== undefined && outcome.files.length > 1
      ? writtenFiles(path.dirname(results), outcome.files)
      : outcome.files.map((item) => path.relative(process.cwd(), item) || item).join(', ');
  process.stdout.write(`wrote ${wrote}\n`);
  return reportJudgeGate(outcome.gate) ? 1 : 0;
});

/**
 * SIGINT / SIGTERM while judging: says so and exits 130, the lock released on the way out (its
 * exit listener) and `file` as it was. Once writing has begun the files are finished first (each
 * is atomic, but the set is one judging); a second signal stops at once.
 */
function stopOnSignals(file: string): JudgingWatch {
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
    done: () => {
      for (const signal of signals) process.off(signal, stop);
      if (!pending) return;
      process.stderr.write('interrupted: the judged results were written first\n');
      process.exit(130);
    },
  };
}
