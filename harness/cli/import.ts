/** `membench import locomo|longmemeval FILE`: one scenario YAML per conversation / question, then a summary of what was repaired or skipped. */
import path from 'node:path';
import type { Argv } from 'yargs';
import { MembenchError } from '../core/errors.js';
import { StagedDir } from '../core/manifest.js';
import {
  DATASET_NAMES,
  Errata,
  formatImportReport,
  ImportLog,
  importScenarios,
  loadQuestionPrompts,
  nothingImported,
  type DatasetName,
} from '../scenarios/importers/index.js';
import { checkOutFlag } from '../run/out-lock.js';
import { refuseScenarioFiles, warnOverwriteWithoutManifest } from './common.js';
import { parseNumberFlag } from '../core/numbers.js';
import { RUN_LIMITS } from '../run/limits.js';
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
  const dataset = argv.dataset as DatasetName;
  const out = argv.out ?? path.join('.membench', 'import', dataset);
  const limit = parseNumberFlag('--limit', argv.limit, RUN_LIMITS.limit);
  checkOutFlag(out);
  await refuseScenarioFiles(out, argv.overwrite);
  await warnOverwriteWithoutManifest(out, argv.overwrite, []);
  const log = new ImportLog(dataset, argv.file);
  const errata = argv.errata === undefined ? undefined : await Errata.load(argv.errata);
  const questions =
    argv['question-prompts'] === undefined ? undefined : await loadQuestionPrompts(argv['question-prompts']);
  // Every file goes to a staging dir first: an import that fails half-way (trailing garbage, a
  // damaged conversation) leaves --out as it was, and --overwrite drops only the previous import's files.
  const staged = await StagedDir.begin(out);
  try {
    for await (const imported of importScenarios(dataset, argv.file, log, {
      ...(limit !== undefined ? { limit } : {}),
      ...(errata ? { errata } : {}),
      ...(questions ? { questions } : {}),
    })) {
      await staged.write(`${imported.scenario.name}.yaml`, imported.yaml());
    }
  } catch (error) {
    await staged.abort();
    if (error instanceof MembenchError && staged.count > 0) {
      throw new MembenchError(error.code, error.message, [
        ...error.details,
        `(nothing was written to ${out}: the ${staged.count} scenario file${staged.count === 1 ? '' : 's'} converted before the error were dropped)`,
      ]);
    }
    throw error;
  }
  const written = staged.count;
  const report = log.report();
  if (written === 0) {
    await staged.abort();
    throw nothingImported(report);
  }
  const removed = await staged.commit('membench import', argv.overwrite);
  const replaced = removed.length
    ? ` (removed ${removed.length} file${removed.length === 1 ? '' : 's'} of the earlier import there: ${removed.slice(0, 3).join(', ')}${removed.length > 3 ? ', ...' : ''})`
    : '';
  process.stdout.write(
    `${formatImportReport(report)}\nwrote ${written} scenario file${written === 1 ? '' : 's'} to ${out}${replaced}\n`,
  );
  return 0;
});
