/** `membench tune`: the cheapest value of a numeric knob that meets a recall target; exit 1 when none does. */
import path from 'node:path';
import type { Argv } from 'yargs';
import { TUNE_METRICS } from '../run/tune-metrics.js';
import { handled } from './errors.js';

export const command = 'tune';
export const describe = 'Sweep a numeric knob of a strategy and report the cheapest setting that meets a recall target';

/** The flags come from the settings table, loaded once a command is named: `--version` and `--help` never load it. */
export async function builder(yargs: Argv) {
  const { settingFlags } = await import('../run/setting-sources.js');
  const sweep = yargs
    .option('strategy', {
      alias: 's',
      type: 'string',
      demandOption: true,
      describe: 'the strategy: a built-in name, langchain:NAME or a module path',
    })
    .option('param', {
      alias: 'p',
      type: 'string',
      demandOption: true,
      describe: 'the numeric knob to sweep, e.g. k (window) or maxTokenLimit (summary-buffer)',
    })
    .option('values', {
      type: 'string',
      demandOption: true,
      describe: 'values to try: A..B, A..B..STEP or a list 1,2,4,8',
    })
    .option('target-recall', {
      type: 'string',
      demandOption: true,
      describe: 'pooled context recall a setting must reach (0..1)',
    })
    .option('metric', {
      choices: TUNE_METRICS,
      default: 'contextTotal' as const,
      describe: 'the token figure a setting costs (summed over scenarios)',
    });
  return settingFlags(sweep, 'tune')
    .example(
      '$0 tune -s window -p k --values 1..16 --target-recall 0.95',
      'the smallest window that recalls 95% of the probed facts',
    )
    .example(
      '$0 tune -s summary-buffer -p maxTokenLimit --values 200..2000..200 --target-recall 0.9 -c recipes-en',
      'a summary buffer budget',
    );
}

type TuneArgs = Awaited<ReturnType<typeof builder>> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: TuneArgs) => {
  const [
    tune,
    { tuneToDir },
    { parseNumberFlag },
    { resolveSettings },
    { RUN_LIMITS },
    { flagValues },
    common,
    { errorCells },
    { errorText },
  ] = await Promise.all([
    import('../run/tune.js'),
    import('../commands/tune-to-dir.js'),
    import('../core/numbers.js'),
    import('../run/layers.js'),
    import('../run/limits.js'),
    import('../run/setting-sources.js'),
    import('./common.js'),
    import('../results/cells.js'),
    import('../../reports/summary.js'),
  ]);
  const { parseValues, renderTune } = tune;
  const { failedLine, interruptOnSignals, progressReporter, writtenFiles } = common;
  const values = parseValues(argv.values);
  const settings = await resolveSettings(flagValues(argv, 'tune'));
  // demandOption: yargs has refused a missing --target-recall already.
  const targetRecall = parseNumberFlag('--target-recall', argv['target-recall'], RUN_LIMITS.recallThreshold) as number;
  const outcome = await tuneToDir({
    settings,
    sweep: { strategy: argv.strategy, knob: argv.param, values, targetRecall, metric: argv.metric },
    overwrite: argv.overwrite,
    onWarning: (warning) => process.stderr.write(`${warning}\n`),
    onCells: () => {
      const progress = progressReporter(argv.quiet);
      const interrupt = interruptOnSignals();
      return {
        signal: interrupt.signal,
        onProgress: progress.onProgress,
        done: () => {
          progress.stop();
          interrupt.dispose();
        },
      };
    },
    onResult: (result) => {
      process.stdout.write(`${renderTune(result)}\n`);
      // The table counts a value's failed cells; why each failed is said as run says it.
      for (const cell of errorCells(result.run.cells))
        process.stderr.write(`${failedLine(cell.id, errorText(cell))}\n`);
    },
  });
  if (outcome.status === 'interrupted') {
    process.stderr.write('interrupted: nothing written\n');
    process.exit(130);
  }
  const { out, files } = outcome;
  const sweep = files
    .filter((file) => path.basename(file).startsWith('sweep-'))
    .map((file) => path.relative(out, file));
  process.stdout.write(
    `wrote ${writtenFiles(out, files)}${sweep.length ? `; the sweep chart: ${sweep.join(', ')}` : ''}\n`,
  );
  return outcome.tune.best ? 0 : 1;
});
