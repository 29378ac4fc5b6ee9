/** `membench run`: argv → RunOptions → runBenchmark → reports. */
import path from 'node:path';
import type { Argv } from 'yargs';
import { assertWritableOutDir, defaultOutDir, renderConsoleSummary, writeRunOutput } from '../../reports/index.js';
import { formatMs } from '../../reports/summary.js';
import { builtinStrategies } from '../../strategies/index.js';
import { builtinScenarioNames } from '../builtin-scenarios.js';
import { DEFAULT_SEED, runBenchmark } from '../runner.js';
import { handled } from './errors.js';

export const command = 'run';
export const describe = 'Replay scenarios against memory strategies and report tokens, latency and recall';

export function builder(yargs: Argv) {
  return yargs
    .option('strategy', { alias: 's', type: 'string', array: true, describe: `strategies to run (default: all): ${builtinStrategies.map((item) => item.name).join(', ')}` })
    .option('scenario', { alias: 'c', type: 'string', array: true, describe: `built-in scenario names or .yaml/.json paths (default: all built-ins: ${builtinScenarioNames().join(', ')})` })
    .option('param', { alias: 'p', type: 'string', array: true, describe: 'STRATEGY.KNOB=V1,V2 sweeps a knob, e.g. window.k=2,4,8 (repeatable; durability is a knob too)' })
    .option('out', { alias: 'o', type: 'string', describe: 'output dir (default: a fresh .membench/run-<timestamp>)' })
    .option('overwrite', { type: 'boolean', default: false, describe: 'replace the files of an earlier run in --out' })
    .option('seed', { type: 'number', default: DEFAULT_SEED, describe: 'run seed; each cell derives its own from it' })
    .option('trials', { type: 'number', default: 1, describe: 'repetitions of every cell' })
    .option('model', { type: 'string', default: 'offline', describe: 'offline (deterministic reference model) or openai:NAME' })
    .option('embedder', { type: 'string', default: 'hashed', describe: 'hashed[:DIM] or openai:NAME' })
    .option('tokenizer', { type: 'string', describe: 'model name whose tiktoken encoding counts tokens (default: the model\'s; e.g. gpt-4o for o200k_base)' })
    .option('keep-cell-dirs', { type: 'boolean', default: false, describe: 'keep each cell\'s temp dir for inspection' })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'no progress lines' })
    .example('$0 run', 'every built-in strategy on every built-in scenario, offline')
    .example('$0 run -s buffer -s window -p window.k=2,4,8 -c recipes-zh', 'sweep the window size on the Chinese recipe conversation');
}

type RunArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: RunArgs) => {
  const out = argv.out ?? defaultOutDir(new Date());
  assertWritableOutDir(out, argv.overwrite);
  const log = (line: string): void => {
    if (!argv.quiet) process.stderr.write(`${line}\n`);
  };
  const result = await runBenchmark({
    strategies: argv.strategy,
    scenarios: argv.scenario,
    params: argv.param,
    seed: argv.seed,
    trials: argv.trials,
    model: argv.model,
    embedder: argv.embedder,
    tokenizer: argv.tokenizer,
    keepCellDirs: argv['keep-cell-dirs'],
    onWarning: (warning) => process.stderr.write(`${warning}\n`),
    onProgress: (event) => {
      if (event.type === 'start') log(`membench: running ${event.cells} cells`);
      else {
        const { result: cell } = event;
        const recall = cell.recall.contextRecall.value;
        const status = cell.status === 'ok' ? `recall ${recall === null ? '–' : recall.toFixed(2)}` : `ERROR ${cell.error}`;
        log(`[${event.index + 1}/${event.cells}] ${cell.id}  ${status}  ${formatMs(cell.durationMs)} ms`);
      }
    },
  });
  process.stdout.write(`${renderConsoleSummary(result, { color: Boolean(process.stdout.isTTY) })}\n`);
  const files = await writeRunOutput(result, out, { overwrite: argv.overwrite });
  process.stdout.write(`wrote ${files.map((file) => path.relative(process.cwd(), file) || file).join(', ')}\n`);
  return result.cells.some((cell) => cell.status === 'error') ? 1 : 0;
});
