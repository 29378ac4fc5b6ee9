/**
 * Scenario files written into a dir, as `membench import` and `membench generate` write them:
 * the dir checked (not empty-named, no earlier scenario files unless `overwrite`), every file
 * staged first and moved in together, so a failure half-way leaves the dir as it was and
 * `overwrite` drops only the previous import's or generate's files. `cli/` maps flags onto these.
 */
import { existsSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { MembenchError } from '../core/errors.js';
import { StagedDir, warnOverwriteWithoutManifest } from '../core/manifest.js';
import { builtinSuiteFile, builtinSuiteNames } from '../scenarios/builtins.js';
import { loadSpecFile } from '../scenarios/generator-spec.js';
import { generateWorkload, type GeneratedScenario } from '../scenarios/generator.js';
import {
  Errata,
  ImportLog,
  importScenarios,
  loadQuestionPrompts,
  nothingImported,
  type DatasetName,
  type ImportReport,
} from '../scenarios/importers/index.js';
import type { ReadListener } from '../scenarios/importers/json-stream.js';
import { checkOutFlag } from '../run/out-lock.js';

/** Where the files go, and whether an earlier import's or generate's may be replaced. */
interface ScenarioDirOptions {
  out: string;
  overwrite?: boolean | undefined;
  onWarning: (warning: string) => void;
}

export interface ImportToDirOptions extends Omit<ScenarioDirOptions, 'out'> {
  dataset: DatasetName;
  /** The published file. */
  file: string;
  /** Default: .membench/import/DATASET. */
  out?: string | undefined;
  /** Only the first N conversations / questions. */
  limit?: number | undefined;
  /** A JSON file of corrected or dropped gold answers. */
  errata?: string | undefined;
  /** A YAML file of templates for LoCoMo's temporal and adversarial questions. */
  questionPrompts?: string | undefined;
  /** Hears how much of the file is read, as the import goes. */
  onRead?: ReadListener | undefined;
}

export interface ImportToDirOutcome {
  out: string;
  written: number;
  /** Files of the earlier import that `overwrite` removed. */
  removed: string[];
  /** What was repaired or skipped. */
  report: ImportReport;
}

/** One scenario file per conversation / question of a published dataset file. */
export async function importToDir(options: ImportToDirOptions): Promise<ImportToDirOutcome> {
  const { dataset } = options;
  const out = options.out ?? path.join('.membench', 'import', dataset);
  await prepareScenarioDir({ ...options, out });
  const log = new ImportLog(dataset, options.file);
  const errata = options.errata === undefined ? undefined : await Errata.load(options.errata);
  const questions =
    options.questionPrompts === undefined ? undefined : await loadQuestionPrompts(options.questionPrompts, dataset);
  // Every file goes to a staging dir first: an import that fails half-way (trailing garbage, a
  // damaged conversation) leaves the out dir as it was, and overwrite drops only the previous import's files.
  const staged = await StagedDir.begin(out, `--out ${out}`);
  try {
    for await (const imported of importScenarios(dataset, options.file, log, {
      ...(options.limit !== undefined ? { limit: options.limit } : {}),
      ...(errata ? { errata } : {}),
      ...(questions ? { questions } : {}),
      ...(options.onRead ? { onRead: options.onRead } : {}),
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
  const removed = await staged.commit('membench import', options.overwrite ?? false);
  return { out, written, removed, report };
}

export interface GenerateToDirOptions extends Omit<ScenarioDirOptions, 'out'> {
  /** A generator spec file (.yaml/.json) or a built-in suite's name. */
  spec: string;
  /** Default: .membench/generate/NAME. */
  out?: string | undefined;
  /** Replaces the spec's seed. */
  seed?: number | undefined;
}

/** The scenario files of a generated workload. */
export async function generateToDir(
  options: GenerateToDirOptions,
): Promise<{ out: string; generated: GeneratedScenario[] }> {
  const file = builtinSuiteFile(options.spec) ?? options.spec;
  if (file === options.spec && !existsSync(file) && !/[/\\]|\.(ya?ml|json)$/iu.test(file)) {
    throw new MembenchError(
      'UNKNOWN_SCENARIO',
      `unknown suite "${options.spec}": built-in suites are ${builtinSuiteNames().join(', ')}; or give a path to a generator spec (.yaml/.json)`,
    );
  }
  const loaded = await loadSpecFile(file);
  const spec = options.seed === undefined ? loaded : { ...loaded, seed: options.seed };
  const out = options.out ?? path.join('.membench', 'generate', spec.name);
  await prepareScenarioDir({ ...options, out });
  const generated = generateWorkload(spec, file);
  refuseReplacingSpec(file, out, generated);
  // Staged, then moved in: a failed write leaves the out dir as it was; overwrite drops only the previous generate's or import's files.
  const staged = await StagedDir.begin(out, `--out ${out}`);
  try {
    for (const scenario of generated) await staged.write(`${scenario.document.name}.yaml`, scenario.yaml);
  } catch (error) {
    await staged.abort();
    throw error;
  }
  await staged.commit('membench generate', options.overwrite ?? false);
  return { out, generated };
}

/**
 * Refuses a generated file that is the spec it comes from (`generate mine-en.yaml -o .` with
 * `name: mine`): `--overwrite` moved the scenario over the user's spec, which was then gone. The
 * same inode, so a link or another spelling of the path is found too.
 */
function refuseReplacingSpec(spec: string, out: string, generated: readonly GeneratedScenario[]): void {
  const source = statSync(spec, { throwIfNoEntry: false });
  if (!source) return;
  for (const scenario of generated) {
    const target = statSync(path.join(out, `${scenario.document.name}.yaml`), { throwIfNoEntry: false });
    if (target && target.ino === source.ino && target.dev === source.dev)
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--out ${out}: the generated ${scenario.document.name}.yaml would replace ${spec}, the spec it is generated from: choose another --out, or rename the spec`,
      );
  }
}

/** The out dir's checks before anything is staged: named, no scenario files of an earlier run unless overwrite, what overwrite keeps. */
async function prepareScenarioDir({ out, overwrite = false, onWarning }: ScenarioDirOptions): Promise<void> {
  checkOutFlag(out);
  await refuseScenarioFiles(out, overwrite);
  await warnOverwriteWithoutManifest(out, overwrite, [], onWarning);
}

/** Refuses to write scenario files into a dir that already holds some (an earlier import or generate), unless `overwrite`. */
async function refuseScenarioFiles(dir: string, overwrite: boolean): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR')
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--out ${dir}: a file of that name (or on its path) exists, not a directory`,
      );
    throw new MembenchError('INVALID_ARGUMENT', `--out ${dir}: cannot read: ${(error as Error).message}`);
  }
  // A run's dir is for its reports (membench run and report refuse to write into another's): not for scenario files.
  if (names.includes('results.json') || names.includes('plan.json'))
    throw new MembenchError(
      'OUTPUT_EXISTS',
      `--out ${dir} is a membench run dir (it holds ${names.includes('results.json') ? 'results.json' : 'plan.json'}): choose another --out for scenario files`,
    );
  const existing = names.filter((name) => /\.ya?ml$/iu.test(name));
  if (existing.length > 0 && !overwrite) {
    throw new MembenchError(
      'OUTPUT_EXISTS',
      `${dir} already holds ${existing.length} scenario file${existing.length === 1 ? '' : 's'} (${existing.slice(0, 3).join(', ')}${existing.length > 3 ? ', ...' : ''}): choose another --out, or pass --overwrite`,
    );
  }
}
