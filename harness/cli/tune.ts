/** `membench tune`: the cheapest value of a numeric knob that meets a recall target; exit 1 when none does. */
import path from 'node:path';
import type { Argv } from 'yargs';
import {
  assertWritableOutDir,
  defaultOutDir,
  REPORT_FILES_WITHOUT_MANIFEST,
  writeRunOutput,
} from '../../reports/index.js';
import { RunInterrupted } from '../run/runner.js';
import { parseValues, renderTune, tune, TUNE_METRICS } from '../run/tune.js';
import { checkLiveEndpoint } from '../run/judging.js';
import { resolveSettings, type ResolvedSettings } from '../run/layers.js';
import { flagValues, settingFlags } from '../run/setting-sources.js';
import { interruptOnSignals, progressReporter, warnOverwriteWithoutManifest } from './common.js';
import { handled } from './errors.js';
import { withOutDirLock } from '../run/out-lock.js';
import { parseNumberFlag } from '../core/numbers.js';
import { RUN_LIMITS } from '../run/limits.js';

export const command = 'tune';
export const describe = 'Sweep a numeric knob of a strategy and report the cheapest setting that meets a recall target';

export function builder(yargs: Argv) {
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

type TuneArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: TuneArgs) => {
  const values = parseValues(argv.values);
  const layers = await resolveSettings(flagValues(argv, 'tune'));
  checkLiveEndpoint(
    [
      { flag: '--model', provider: layers.options.model },
      { flag: '--embedder', provider: layers.options.embedder },
    ],
    layers.options.live,
  );
  const out = layers.values.out ?? defaultOutDir(new Date());
  assertWritableOutDir(out, argv.overwrite);
  await warnOverwriteWithoutManifest(out, argv.overwrite, REPORT_FILES_WITHOUT_MANIFEST);
  return withOutDirLock(out, 'membench tune', () => sweepLocked(argv, values, layers, out));
});

/** The sweep and its reports, with the out dir locked. */
async function sweepLocked(argv: TuneArgs, values: number[], layers: ResolvedSettings, out: string): Promise<number> {
  const progress = progressReporter(argv.quiet);
  const interrupt = interruptOnSignals();
  let result;
  try {
    result = await tune({
      ...layers.options,
      strategy: argv.strategy,
      knob: argv.param,
      values,
      // demandOption: yargs has refused a missing --target-recall already.
      targetRecall: parseNumberFlag('--target-recall', argv['target-recall'], RUN_LIMITS.recallThreshold) as number,
      metric: argv.metric,
      workers: layers.workers,
      workerProcesses: true,
      signal: interrupt.signal,
      onWarning: (warning) => process.stderr.write(`${warning}\n`),
      onProgress: progress.onProgress,
    });
  } catch (error) {
    progress.stop();
    if (!(error instanceof RunInterrupted)) throw error;
    process.stderr.write('interrupted: nothing written\n');
    process.exit(interrupt.exitCode());
  } finally {
    progress.stop();
    interrupt.dispose();
  }
  process.stdout.write(`${renderTune(result)}\n`);
  const files = await writeRunOutput(result.run, out, { overwrite: argv.overwrite, command: 'membench tune' });
  const sweep = files
    .filter((file) => path.basename(file).startsWith('sweep-'))
    .map((file) => path.relative(out, file));
  process.stdout.write(
    `wrote ${path.relative(process.cwd(), out) || '.'}/ (${files.map((file) => path.basename(file)).join(', ')})${sweep.length ? `; the sweep chart: ${sweep.join(', ')}` : ''}\n`,
  );
  return result.best ? 0 : 1;
}
