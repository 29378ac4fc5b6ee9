/** `membench run`: flags over the config file → runToDir (resumable, sharded, in worker processes, judged, reported) → what it wrote and its verdicts. */
import type { Argv } from 'yargs';
import type { RunToDirFinished } from '../commands/run-to-dir.js';
import { handled } from './errors.js';

export const command = 'run';
export const describe = 'Replay scenarios against memory strategies and report tokens, latency and recall';

/** The flags come from the settings table, loaded once a command is named: `--version` and `--help` never load it. */
export async function builder(yargs: Argv) {
  const { settingFlags } = await import('../run/setting-sources.js');
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

type RunArgs = Awaited<ReturnType<typeof builder>> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: RunArgs) => {
  // A pool worker loads the run's modules while this process loads its own and plans the run.
  const { prestartPoolWorker, releasePrestarted } = await import('../run/pool-workers.js');
  prestartPoolWorker();
  try {
    return await runCommand(argv);
  } finally {
    releasePrestarted();
  }
});

async function runCommand(argv: RunArgs): Promise<number | void> {
  // The run's code loads here, never for --help or an argument error.
  const [
    { renderConsoleSummary, tableWidth },
    { runToDir },
    { resolveSettings },
    { flagValues },
    { failedLine, interruptOnSignals, progressReporter, reportJudgeGate, writtenFiles },
  ] = await Promise.all([
    import('../../reports/index.js'),
    import('../commands/run-to-dir.js'),
    import('../run/layers.js'),
    import('../run/setting-sources.js'),
    import('./common.js'),
  ]);
  const flags = flagValues(argv, 'run');
  const settings = await resolveSettings(flags);
  let interrupt: ReturnType<typeof interruptOnSignals> | undefined;
  const outcome = await runToDir({
    settings,
    flags,
    resume: argv.resume,
    overwrite: argv.overwrite,
    profile: argv.profile,
    judgeThresholdText: argv['judge-threshold'],
    onWarning: (warning) => process.stderr.write(`${warning}\n`),
    onCells: () => {
      const progress = progressReporter(argv.quiet, Boolean(process.stderr.isTTY), settings.workers);
      interrupt = interruptOnSignals();
      const { dispose } = interrupt;
      return {
        signal: interrupt.signal,
        onProgress: progress.onProgress,
        done: () => {
          progress.stop();
          dispose();
        },
      };
    },
    onResult: (result) =>
      process.stdout.write(
        `${renderConsoleSummary(result, { color: Boolean(process.stdout.isTTY), detail: argv.detail, width: tableWidth(process.stdout) })}\n`,
      ),
  });
  if (outcome.status === 'interrupted') {
    process.stderr.write(`interrupted: resume with membench run --resume ${outcome.out}\n`);
    // Anything still settling (a worker's exit, a cell abandoned mid-write) would keep it alive: leave now.
    process.exit(interrupt?.exitCode() ?? 130);
  }
  return report(outcome, { failedLine, reportJudgeGate, writtenFiles });
}

/** What a finished run prints beside its reports: the files written, the failed cells, the cells in error, the judges' gate; the exit code. */
async function report(
  outcome: RunToDirFinished,
  {
    failedLine,
    reportJudgeGate,
    writtenFiles,
  }: Pick<typeof import('./common.js'), 'failedLine' | 'reportJudgeGate' | 'writtenFiles'>,
): Promise<number> {
  const { out, files, failed, errored } = outcome;
  if (outcome.phases) {
    const { renderProfile } = await import('../../reports/profile.js');
    process.stderr.write(`\n${renderProfile(outcome.result, outcome.phases)}`);
  }
  process.stdout.write(`wrote ${writtenFiles(out, files)}\n`);
  for (const { cell, verdict } of failed)
    process.stderr.write(`${failedLine(cell.id, [verdict.error, ...verdict.failures].filter(Boolean).join('; '))}\n`);
  if (outcome.emptyRun !== undefined) process.stderr.write(`${failedLine('recall threshold', outcome.emptyRun)}\n`);
  if (errored > 0)
    process.stderr.write(
      `membench: ${errored} cell${errored === 1 ? '' : 's'} in error: rerun only ${errored === 1 ? 'it' : 'them'} with membench run --resume ${out}\n`,
    );
  const judgeFailed = outcome.judgeGate !== undefined && reportJudgeGate(outcome.judgeGate);
  return failed.length > 0 || outcome.emptyRun !== undefined || judgeFailed ? 1 : 0;
}
