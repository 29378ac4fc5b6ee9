/** `membench compare BASE HEAD`: exit 1 when head regressed against base, 0 when not, 2 on bad input. */
import type { Argv } from 'yargs';
import { DEFAULT_THRESHOLDS, THRESHOLD_RANGES } from '../../reports/compare-types.js';
import type { parseNumberFlag } from '../core/numbers.js';
import { handled } from './errors.js';

export const command = 'compare <base> <head>';
export const describe =
  'Compare two runs cell by cell; exit 1 on a regression (recall drop, token growth, slowdown, new invariant violation or error)';

export function builder(yargs: Argv) {
  return yargs
    .positional('base', {
      type: 'string',
      demandOption: true,
      describe: 'the reference run: a results.json file or a run dir',
    })
    .positional('head', {
      type: 'string',
      demandOption: true,
      describe: 'the run under test: a results.json file or a run dir',
    })
    .option('max-recall-drop', {
      type: 'string',
      default: DEFAULT_THRESHOLDS.maxRecallDrop,
      describe:
        'largest allowed drop of context recall and of each retrieval figure (recall_any/recall_all/NDCG@k by category), absolute (0.05 = five points)',
    })
    .option('max-token-increase', {
      type: 'string',
      default: DEFAULT_THRESHOLDS.maxTokenIncrease,
      describe: 'largest allowed growth of context or maintenance tokens, relative (0.10 = +10%)',
    })
    .option('max-latency-ratio', {
      type: 'string',
      default: DEFAULT_THRESHOLDS.maxLatencyRatio,
      describe:
        "largest allowed head/base ratio of a cell's load or save time (each run divided by its own calibration): a slowdown fails when its whole interval lies above it",
    })
    .option('min-latency-ms', {
      type: 'string',
      default: DEFAULT_THRESHOLDS.minLatencyMs,
      describe: 'a slowdown whose p50 grew by less than this many ms is within noise',
    })
    .option('latency-false-alarm', {
      type: 'string',
      default: DEFAULT_THRESHOLDS.latencyFalseAlarm,
      describe:
        'the share of comparisons allowed to flag a latency figure that is exactly at --max-latency-ratio (over all figures together); identical code is flagged far more rarely',
    })
    .option('latency', {
      type: 'boolean',
      describe:
        'compare latencies; by default only when both runs were timed on the same machine (results record a machine digest; the committed baseline was timed elsewhere): --latency forces it, --no-latency skips it',
    })
    .option('allow-missing', {
      type: 'boolean',
      default: false,
      describe:
        'pass although head lacks cells base has or has cells in error (by default each is a regression: a run that stopped half-way must not pass)',
    })
    .option('github-summary', {
      type: 'boolean',
      default: false,
      describe: 'also append the comparison as Markdown to $GITHUB_STEP_SUMMARY',
    })
    .example(
      '$0 compare baselines/offline.json .membench/run-20250101-120000',
      'gate a change against the committed baseline',
    );
}

type CompareArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

/** A threshold flag (each has a yargs default, so it is never absent), in its THRESHOLD_RANGES. */
function threshold(
  parse: typeof parseNumberFlag,
  name: string,
  value: string | number,
  key: keyof typeof THRESHOLD_RANGES,
): number {
  return parse(`--${name}`, value, { whole: false, ...THRESHOLD_RANGES[key] }) as number;
}

export const handler = handled(async (argv: CompareArgs) => {
  const [
    { compareRuns, hasRegression, renderComparison },
    summary,
    { readResults },
    { parseNumberFlag: parse },
    { checkFalseAlarm },
  ] = await Promise.all([
    import('../../reports/compare.js'),
    import('../../reports/github-summary.js'),
    import('../results/read.js'),
    import('../core/numbers.js'),
    import('../../reports/compare-thresholds.js'),
  ]);
  const thresholds = {
    maxRecallDrop: threshold(parse, 'max-recall-drop', argv['max-recall-drop'], 'maxRecallDrop'),
    maxTokenIncrease: threshold(parse, 'max-token-increase', argv['max-token-increase'], 'maxTokenIncrease'),
    maxLatencyRatio: threshold(parse, 'max-latency-ratio', argv['max-latency-ratio'], 'maxLatencyRatio'),
    minLatencyMs: threshold(parse, 'min-latency-ms', argv['min-latency-ms'], 'minLatencyMs'),
    latencyFalseAlarm: checkFalseAlarm(
      '--latency-false-alarm',
      threshold(parse, 'latency-false-alarm', argv['latency-false-alarm'], 'latencyFalseAlarm'),
      argv['latency-false-alarm'],
    ),
    latency: argv.latency ?? DEFAULT_THRESHOLDS.latency,
    allowMissing: argv['allow-missing'],
  };
  const base = await readResults(argv.base);
  const head = await readResults(argv.head);
  const comparison = compareRuns(base.result, head.result, thresholds, { base: base.file, head: head.file });
  process.stdout.write(`membench compare: base ${base.file} → head ${head.file}\n${renderComparison(comparison)}\n`);
  if (argv['github-summary']) {
    const wrote = await summary.appendStepSummary(
      summary.renderComparisonMarkdown(comparison, { base: base.file, head: head.file }),
    );
    if (!wrote)
      process.stderr.write('membench: --github-summary: GITHUB_STEP_SUMMARY is not set, no summary written\n');
  }
  return hasRegression(comparison) ? 1 : 0;
});
