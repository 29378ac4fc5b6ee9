/** `membench run`: argv → RunOptions → runBenchmark → reports. */
import path from 'node:path';
import type { Argv } from 'yargs';
import { assertWritableOutDir, defaultOutDir, renderConsoleSummary, writeRunOutput } from '../../reports/index.js';
import { formatMs } from '../../reports/summary.js';
import { builtinStrategies } from '../../strategies/index.js';
import { builtinScenarioNames } from '../builtin-scenarios.js';
import { DEFAULT_SEED, runBenchmark } from '../runner.js';
import { MembenchError } from '../errors.js';
import { cellVerdict, verdictFails } from '../../reports/junit.js';
import { DURABILITY_MODES, type DurabilityMode } from '../../strategies/types.js';

function parseDurabilities(value: string | undefined): DurabilityMode[] | undefined {
  if (value === undefined) return undefined;
  const modes = value.split(',').map((mode) => mode.trim());
  const bad = modes.find((mode) => !DURABILITY_MODES.includes(mode as DurabilityMode));
  if (bad !== undefined) throw new MembenchError('INVALID_ARGUMENT', `--durability ${value}: "${bad}" is not one of ${DURABILITY_MODES.join(', ')}`);
  return modes as DurabilityMode[];
}
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
    .option('dataset', { type: 'string', array: true, describe: 'import and run a dataset file directly: locomo:FILE or longmemeval:FILE' })
    .option('limit', { type: 'number', describe: 'with --dataset: only the first N conversations / questions' })
    .option('durability', { type: 'string', describe: 'durability modes for every strategy not given one by --param: sync,async,exit,none' })
    .option('crash-fuzz', { type: 'number', describe: 'kill each cell\'s agent process at N seeded random crash points (reproducible with --seed)' })
    .option('isolate', { type: 'boolean', default: false, describe: 'run every cell\'s agent in child processes, even without faults' })
    .option('idempotency', { choices: ['both', 'on', 'off'] as const, default: 'both' as const, describe: 'idempotency keys on tool effects; "both" runs crash cells with side effects with and without keys' })
    .option('recall-threshold', { type: 'number', describe: 'junit.xml fails (and the run exits 1 on) cells whose context recall is below this share (0..1)' })
    .option('base-url', { type: 'string', describe: 'OpenAI-compatible endpoint for openai:NAME (default: $OPENAI_BASE_URL)' })
    .option('api-key', { type: 'string', describe: 'API key (default: $OPENAI_API_KEY; never written anywhere)' })
    .option('concurrency', { type: 'number', describe: 'live model requests in flight at once (default 4)' })
    .option('timeout', { type: 'number', describe: 'live model request timeout in ms (default 60000)' })
    .option('retries', { type: 'number', describe: 'retries on 429/5xx/timeouts (default 3)' })
    .option('cache', { type: 'string', describe: 'response cache file for live models (default .membench/cache.sqlite); --no-cache to disable' })
    .option('keep-cell-dirs', { type: 'boolean', default: false, describe: 'keep each cell\'s temp dir for inspection' })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'no progress lines' })
    .example('$0 run', 'every built-in strategy on every built-in scenario, offline')
    .example('$0 run -s buffer -s window -p window.k=2,4,8 -c recipes-zh', 'sweep the window size on the Chinese recipe conversation')
    .example('$0 run -c crash-mid-tool-call --durability sync,exit,none', 'what each durability mode loses when the agent process is killed')
    .example('$0 run --crash-fuzz 50 --seed 7 -c remember-then-crash', '50 reproducible random kills per cell')
    .example('$0 run --model openai:gpt-4o-mini --base-url http://localhost:11434/v1', 'a live model on any OpenAI-compatible endpoint');
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
    datasets: argv.dataset,
    datasetLimit: argv.limit,
    durabilities: parseDurabilities(argv.durability),
    crashFuzz: argv['crash-fuzz'],
    isolate: argv.isolate,
    idempotency: argv.idempotency,
    live: {
      ...(argv['base-url'] !== undefined ? { baseUrl: argv['base-url'] } : {}),
      ...(argv['api-key'] !== undefined ? { apiKey: argv['api-key'] } : {}),
      ...(argv.concurrency !== undefined ? { concurrency: argv.concurrency } : {}),
      ...(argv.timeout !== undefined ? { timeoutMs: argv.timeout } : {}),
      ...(argv.retries !== undefined ? { maxRetries: argv.retries } : {}),
    },
    // yargs turns --no-cache into cache: false.
    cache: (argv.cache as unknown) === false ? false : argv.cache,
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
  const recallThreshold = argv['recall-threshold'];
  const files = await writeRunOutput(result, out, { overwrite: argv.overwrite, ...(recallThreshold !== undefined ? { recallThreshold } : {}) });
  process.stdout.write(`wrote ${path.relative(process.cwd(), out) || '.'}/ (${files.map((file) => path.basename(file)).join(', ')})\n`);
  const verdictOptions = recallThreshold === undefined ? {} : { recallThreshold };
  const failed = result.cells.filter((cell) => verdictFails(cellVerdict(cell, verdictOptions)));
  for (const cell of failed) {
    const verdict = cellVerdict(cell, verdictOptions);
    process.stderr.write(`FAILED ${cell.id}: ${[verdict.error, ...verdict.failures].filter(Boolean).join('; ')}\n`);
  }
  return failed.length > 0 ? 1 : 0;
});
