/** `membench import locomo|longmemeval FILE`: one scenario YAML per conversation / question, then a summary of what was repaired or skipped. */
import type { Argv } from 'yargs';
import { DATASET_NAMES, type DatasetName } from '../scenarios/importers/shared.js';
import { handled } from './errors.js';

export const command = 'import <dataset> <file>';
export const describe = 'Turn a LoCoMo or LongMemEval file into scenario files';

export function builder(yargs: Argv) {
  return yargs
    .positional('dataset', {
      type: 'string',
      choices: DATASET_NAMES,
      demandOption: true,
      describe: 'the dataset the file comes from',
    })
    .positional('file', {
      type: 'string',
      demandOption: true,
      describe: 'the published file: locomo10.json, longmemeval_s.json, longmemeval_m.json, longmemeval_oracle.json',
    })
    .option('out', {
      alias: 'o',
      type: 'string',
      describe: 'dir for the scenario files (default: .membench/import/DATASET)',
    })
    .option('limit', { type: 'string', describe: 'import only the first N conversations / questions' })
    .option('overwrite', {
      type: 'boolean',
      default: false,
      describe: 'replace scenario files left in --out by an earlier import',
    })
    .option('errata', {
      type: 'string',
      describe:
        'a JSON file of corrected or dropped gold answers, applied as the scenarios are written (see docs/judging.md)',
    })
    .option('question-prompts', {
      type: 'string',
      describe:
        "a YAML file of templates for how LoCoMo's temporal and adversarial questions are asked ({{question}}; {{a}}, {{b}} for the choices; see docs/datasets.md)",
    })
    .example(
      '$0 import locomo data/locomo10.json --limit 2',
      'the first two LoCoMo conversations as .membench/import/locomo/locomo-conv-*.yaml',
    )
    .example('$0 import longmemeval longmemeval_s.json -o .membench/lme', 'one scenario per LongMemEval question');
}

type ImportArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: ImportArgs) => {
  const [{ importToDir }, { parseNumberFlag }, { RUN_LIMITS }, { formatImportReport }, { ImportProgress }] =
    await Promise.all([
      import('../commands/scenario-files.js'),
      import('../core/numbers.js'),
      import('../run/limits.js'),
      import('../scenarios/importers/index.js'),
      import('./common.js'),
    ]);
  const progress = new ImportProgress(Boolean(process.stderr.isTTY));
  const { out, written, removed, report } = await importToDir({
    dataset: argv.dataset as DatasetName,
    file: argv.file,
    out: argv.out,
    limit: parseNumberFlag('--limit', argv.limit, RUN_LIMITS.limit),
    errata: argv.errata,
    questionPrompts: argv['question-prompts'],
    overwrite: argv.overwrite,
    onWarning: (warning) => process.stderr.write(`${warning}\n`),
    onRead: (read, total) => progress.heard({ dataset: `${argv.dataset}:${argv.file}`, read, total }),
  }).finally(() => progress.done());
  const replaced = removed.length
    ? ` (removed ${removed.length} file${removed.length === 1 ? '' : 's'} of the earlier import there: ${removed.slice(0, 3).join(', ')}${removed.length > 3 ? ', ...' : ''})`
    : '';
  process.stdout.write(
    `${formatImportReport(report)}\nwrote ${written} scenario file${written === 1 ? '' : 's'} to ${out}${replaced}\n`,
  );
  return 0;
});
