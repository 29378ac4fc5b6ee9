/** `membench report RESULTS.json`: re-renders every report (md, html, junit, charts) from a results file. */
import path from 'node:path';
import type { Argv } from 'yargs';
import { handled } from './errors.js';

export const command = 'report <results>';
export const describe = 'Re-render every report of a run from its results.json';

export function builder(yargs: Argv) {
  return yargs
    .positional('results', { type: 'string', demandOption: true, describe: 'a results.json file or a run dir' })
    .option('out', {
      alias: 'o',
      type: 'string',
      describe: "output dir (default: beside the file: a run's own dir for results.json, NAME/ for NAME.json)",
    })
    .option('overwrite', { type: 'boolean', default: false, describe: 'replace the files of another run in --out' })
    .option('recall-threshold', {
      type: 'string',
      describe: 'junit.xml fails cells whose context recall is below this share (0..1)',
    })
    .option('github-summary', {
      type: 'boolean',
      default: false,
      describe: 'also append the run summary as Markdown to $GITHUB_STEP_SUMMARY',
    })
    .example('$0 report .membench/run-20250101-120000', 're-render that run in place')
    .example('$0 report baselines/offline.json --out /tmp/baseline-report', 'render the committed baseline elsewhere');
}

type ReportArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: ReportArgs) => {
  const [
    reports,
    summary,
    { assertReportable, readResultsAndBytes },
    { warnOverwriteWithoutManifest },
    lock,
    numbers,
    limits,
    { writtenFiles },
  ] = await Promise.all([
    import('../../reports/index.js'),
    import('../../reports/github-summary.js'),
    import('../results/read.js'),
    import('../core/manifest.js'),
    import('../run/out-lock.js'),
    import('../core/numbers.js'),
    import('../run/limits.js'),
    import('./common.js'),
  ]);
  const { REPORT_FILES_WITHOUT_MANIFEST, writeRunOutput } = reports;
  const { appendStepSummary, renderRunStepSummary } = summary;
  const { withOutDirLock } = lock;
  const { parseNumberFlag } = numbers;
  const { RUN_LIMITS } = limits;
  const threshold = parseNumberFlag('--recall-threshold', argv['recall-threshold'], RUN_LIMITS.recallThreshold);
  const { result, file, bytes } = await readResultsAndBytes(argv.results);
  assertReportable(result, file);
  const sourceDir = path.dirname(file);
  const inPlace = path.basename(file) === 'results.json';
  const out = argv.out ?? (inPlace ? sourceDir : path.join(sourceDir, path.basename(file, path.extname(file))));
  // Re-rendering a run in its own dir replaces only that run's reports: no --overwrite needed.
  const ownDir = inPlace && path.resolve(out) === path.resolve(sourceDir);
  await warnOverwriteWithoutManifest(out, argv.overwrite, REPORT_FILES_WITHOUT_MANIFEST, (warning) =>
    process.stderr.write(`${warning}\n`),
  );
  const files = await withOutDirLock(out, 'membench report', () =>
    writeRunOutput(result, out, {
      overwrite: argv.overwrite || ownDir,
      command: 'membench report',
      stepSummary: null,
      resultsRead: { file, bytes },
      ...(threshold !== undefined ? { recallThreshold: threshold } : {}),
    }),
  );
  if (argv['github-summary']) {
    const wrote = await appendStepSummary(
      renderRunStepSummary(result, threshold !== undefined ? { recallThreshold: threshold } : {}),
    );
    if (!wrote)
      process.stderr.write('membench: --github-summary: GITHUB_STEP_SUMMARY is not set, no summary written\n');
  }
  process.stdout.write(`wrote ${writtenFiles(out, files)}\n`);
  return 0;
});
