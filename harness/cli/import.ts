/** `membench import locomo|longmemeval FILE`: one scenario YAML per conversation / question, then a summary of what was repaired or skipped. */
import path from 'node:path';
import type { Argv } from 'yargs';
import { MembenchError } from '../core/errors.js';
import { writeFileAtomic } from '../core/fs.js';
import { DATASET_NAMES, Errata, formatImportReport, ImportLog, importScenarios, nothingImported, type DatasetName } from '../scenarios/importers/index.js';
import { refuseScenarioFiles } from './common.js';
import { handled } from './errors.js';

export const command = 'import <dataset> <file>';
export const describe = 'Turn a LoCoMo or LongMemEval file into scenario files';

export function builder(yargs: Argv) {
  return yargs
    .positional('dataset', { type: 'string', choices: DATASET_NAMES, demandOption: true, describe: 'the dataset the file comes from' })
    .positional('file', { type: 'string', demandOption: true, describe: 'the published file: locomo10.json, longmemeval_s.json, longmemeval_m.json, longmemeval_oracle.json' })
    .option('out', { alias: 'o', type: 'string', describe: 'dir for the scenario files (default: .membench/import/DATASET)' })
    .option('limit', { type: 'number', describe: 'import only the first N conversations / questions' })
    .option('overwrite', { type: 'boolean', default: false, describe: 'replace scenario files left in --out by an earlier import' })
    .option('errata', { type: 'string', describe: 'a JSON file of corrected or dropped gold answers, applied as the scenarios are written (see docs/judging.md)' })
    .example('$0 import locomo data/locomo10.json --limit 2', 'the first two LoCoMo conversations as .membench/import/locomo/locomo-conv-*.yaml')
    .example('$0 import longmemeval longmemeval_s.json -o .membench/lme', 'one scenario per LongMemEval question');
}

type ImportArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: ImportArgs) => {
  const dataset = argv.dataset as DatasetName;
  const out = argv.out ?? path.join('.membench', 'import', dataset);
  await refuseScenarioFiles(out, argv.overwrite);
  const log = new ImportLog(dataset, argv.file);
  const errata = argv.errata === undefined ? undefined : await Errata.load(argv.errata);
  let written = 0;
  try {
    for await (const imported of importScenarios(dataset, argv.file, log, { ...(argv.limit !== undefined ? { limit: argv.limit } : {}), ...(errata ? { errata } : {}) })) {
      await writeFileAtomic(path.join(out, `${imported.scenario.name}.yaml`), imported.yaml);
      written++;
    }
  } catch (error) {
    if (error instanceof MembenchError && written > 0) {
      throw new MembenchError(error.code, error.message, [...error.details, `(${written} scenario file${written === 1 ? ' was' : 's were'} written to ${out} before the error)`]);
    }
    throw error;
  }
  const report = log.report();
  if (written === 0) throw nothingImported(report);
  process.stdout.write(`${formatImportReport(report)}\nwrote ${written} scenario file${written === 1 ? '' : 's'} to ${out}\n`);
  return 0;
});
