/** `membench bench`: argv → BenchOptions → measureMembench → Markdown tables (or JSON with --json). */
import type { Argv } from 'yargs';
import {
  BENCH_SECTIONS,
  DATASET_QUESTIONS,
  DEFAULT_SIZES,
  QUICK_DATASET_QUESTIONS,
  QUICK_SIZES,
  type BenchSection,
} from '../bench/sections.js';
import { MembenchError } from '../core/errors.js';
import { handled } from './errors.js';

export const command = 'bench';
export const describe =
  'Micro-benchmarks: floors of this machine, per-turn save + load of each strategy, crash recovery, LangChain side by side, vector search at scale, suite throughput, the compare gate on two runs of the same code (A/A)';

export function builder(yargs: Argv) {
  return yargs
    .option('json', { type: 'boolean', default: false, describe: 'print the report as JSON instead of tables' })
    .option('quick', {
      type: 'boolean',
      default: false,
      describe: `smaller sizes, about a minute (history ${QUICK_SIZES.join(', ')}; 10,000 vectors; LangChain side by side for 300 turns)`,
    })
    .option('only', {
      type: 'string',
      array: true,
      describe: `sections to run (repeatable or comma-separated): ${BENCH_SECTIONS.join(', ')}`,
    })
    .option('sizes', {
      type: 'string',
      describe: `history lengths for save-load, comma-separated (default ${DEFAULT_SIZES.join(',')})`,
    })
    .option('strategy', {
      alias: 's',
      type: 'string',
      array: true,
      describe: 'strategies of the save-load and recovery sections (default: every built-in)',
    })
    .option('workers', {
      type: 'string',
      describe:
        "worker processes of the suite run, passed to membench run as -w (default: membench run's own, one more than the cores)",
    })
    .option('questions', {
      type: 'string',
      describe: `questions of the dataset section's synthetic LongMemEval_S-shaped file (default ${DATASET_QUESTIONS}, quick ${QUICK_DATASET_QUESTIONS}; the published file has 500)`,
    })
    .option('strict', { type: 'boolean', default: false, describe: 'exit 1 when a judged target is missed' })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'no progress lines' })
    .example('$0 bench --quick', 'every section with small sizes')
    .example('$0 bench --only save-load --sizes 100,10000 -s window', 'flatness of one strategy');
}

type BenchArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

/** `--only a,b --only c` → sections, each checked. */
export function parseSections(values: readonly string[] | undefined): BenchSection[] | undefined {
  if (!values || values.length === 0) return undefined;
  const names = values
    .flatMap((value) => value.split(','))
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!(BENCH_SECTIONS as readonly string[]).includes(name))
      throw new MembenchError('INVALID_ARGUMENT', `--only ${name}: expected one of ${BENCH_SECTIONS.join(', ')}`);
  }
  return names as BenchSection[];
}

/** `--sizes 10,100,1000` → history lengths. */
export function parseSizes(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  const sizes = value.split(',').map((part) => part.trim().replaceAll('_', ''));
  if (sizes.some((size) => !/^\d+$/u.test(size) || Number(size) < 1))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--sizes ${value}: expected comma-separated whole numbers >= 1, e.g. 10,100,1000`,
    );
  return sizes.map(Number);
}

export const handler = handled(async (argv: BenchArgs) => {
  // The sections' code (tiktoken, SQLite, hnswlib among it) loads here, never for --help or an argument error.
  const [
    { measureMembench },
    { renderBenchJson, renderBenchReport },
    { parseNumberFlag },
    { RUN_LIMITS },
    { stopBench },
    { interruptOnSignals },
  ] = await Promise.all([
    import('../bench/index.js'),
    import('../bench/render.js'),
    import('../core/numbers.js'),
    import('../run/limits.js'),
    import('../bench/scratch.js'),
    import('./common.js'),
  ]);
  const options = {
    quick: argv.quick,
    only: parseSections(argv.only),
    sizes: parseSizes(argv.sizes),
    strategies: argv.strategy,
    workers: parseNumberFlag('--workers', argv.workers, RUN_LIMITS.workers),
    questions: parseNumberFlag('--questions', argv.questions, { whole: true, min: 1, max: Number.MAX_SAFE_INTEGER }),
    onProgress: argv.quiet ? undefined : (line: string) => process.stderr.write(`${line}\n`),
  };
  // SIGINT / SIGTERM: the runs it started end and its temp dirs go (Node's default death left a
  // `membench run` going on as an orphan and membench-suite-* dirs behind); a second signal exits at once.
  const interrupt = interruptOnSignals();
  interrupt.signal.addEventListener('abort', () => {
    process.stderr.write('interrupted: stopping the bench (nothing written)\n');
    void stopBench().finally(() => process.exit(interrupt.exitCode()));
  });
  let report: Awaited<ReturnType<typeof measureMembench>>;
  try {
    report = await measureMembench(options);
  } catch (error) {
    // A child run ended by the same Ctrl-C fails its section: the interrupt is what happened, said above.
    if (interrupt.signal.aborted) return new Promise<never>(() => undefined);
    throw error;
  } finally {
    if (!interrupt.signal.aborted) interrupt.dispose();
  }
  process.stdout.write(argv.json ? renderBenchJson(report) : renderBenchReport(report));
  const missed = report.targets.filter((target) => target.pass === false).length;
  const code = argv.strict && missed > 0 ? 1 : 0;
  // Agent processes the suite forked should be gone by now; if one lingers it would keep the CLI alive: leave anyway.
  setTimeout(() => {
    process.stderr.write('membench: a child process outlived the bench; exiting without waiting for it\n');
    process.exit(code);
  }, 2000).unref();
  return code;
});
