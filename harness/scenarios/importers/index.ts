/**
 * Dataset importers (docs/design.md §2): public long-memory datasets → scenarios. Each dataset module
 * converts one element of the published JSON list (a LoCoMo conversation, a LongMemEval
 * question) into a scenario document; this module streams the file, names and validates the
 * scenarios, and keeps the report of what was imported as is, repaired or skipped, and why.
 *
 * Files are read as a stream of list elements (json-stream.ts), so an import stops as soon as
 * `--limit` is reached.
 */
import { stringify } from 'yaml';
import { MembenchError } from '../../core/errors.js';
import { counted } from '../../core/plural.js';
import { visibleControls } from '../../core/text.js';
import { closestString } from '../../core/user-input.js';
import { checkScenarioValue, formatProblem, MAX_SCENARIO_BYTES } from '../load.js';
import type { Scenario } from '../format.js';
import { noteContentDigest } from '../content-digest.js';
import { readJsonList, type ReadListener } from './json-stream.js';
import { Errata } from './errata.js';
import { loadQuestionPrompts, type QuestionPrompts } from './question-prompts.js';
import { locomo } from './locomo.js';
import { longmemeval } from './longmemeval.js';
import {
  DATASET_NAMES,
  IdAllocator,
  ImportLog,
  loneSurrogates,
  type Converted,
  type DatasetConverter,
  type DatasetName,
  type ImportIssue,
  type ImportReport,
  type ScenarioDocument,
} from './shared.js';

export { Errata } from './errata.js';
export { loadQuestionPrompts } from './question-prompts.js';
export type { ErrataCounts, ErrataReport } from './shared.js';
export {
  DATASET_NAMES,
  ImportLog,
  type DatasetName,
  type ImportIssue,
  type ImportReport,
  type ScenarioDocument,
} from './shared.js';

/** The converter of each dataset: the only list of importers (`DATASET_NAMES` names them). */
export const CONVERTERS: Record<DatasetName, DatasetConverter> = { locomo, longmemeval };

const bad = (message: string): MembenchError => new MembenchError('INVALID_ARGUMENT', message);

/** One imported scenario: the document, its YAML text (written on demand: `membench import` writes it, a replay does not), and the validated Scenario. */
export interface ImportedScenario {
  document: ScenarioDocument;
  yaml: () => string;
  scenario: Scenario;
}

/**
 * The size of a document's YAML, as its scenario file would hold it, or a bound above it: written
 * out only when its JSON is over half the limit. Below that its YAML cannot reach the limit (block
 * YAML of a scenario document, flat lists of short mappings, spends fewer bytes on structure than
 * JSON's quotes and braces, and escapes strings the same way), so a replay skips the ~20 ms the text
 * costs (~300 ms for a question of LongMemEval_M's size: a quarter of its import). The JSON's bytes
 * are first bounded by 3 per UTF-16 unit (UTF-8 spends at most 3 bytes on one, 4 on a surrogate
 * pair), and counted only when that bound is over half the limit (counting them costs about as
 * much as writing the JSON).
 */
export function yamlBytes(json: string, yaml: () => string): number {
  const jsonBound = json.length * 3;
  if (jsonBound * 2 <= MAX_SCENARIO_BYTES) return jsonBound;
  const jsonBytes = Buffer.byteLength(json);
  return jsonBytes * 2 <= MAX_SCENARIO_BYTES ? jsonBytes : Buffer.byteLength(yaml());
}

/** YAML as `membench import` writes it: no folding, so each utterance stays on one line. */
export function toYaml(document: ScenarioDocument): string {
  return stringify(document, { lineWidth: 0, aliasDuplicateObjects: false });
}

/**
 * Streams the scenarios of a dataset file, each validated by the same loader as scenario
 * files. `limit` stops after that many conversations / questions without reading further;
 * `errata` corrects or drops gold answers (what it did is in the log's report once the import ends).
 */
export async function* importScenarios(
  dataset: DatasetName,
  file: string,
  log: ImportLog,
  options: {
    limit?: number;
    errata?: Errata;
    documents?: boolean;
    questions?: QuestionPrompts;
    only?: QuestionFilter;
    onRead?: ReadListener;
  } = {},
): AsyncGenerator<ImportedScenario> {
  const converter = CONVERTERS[dataset];
  if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 1))
    throw bad(`--limit ${options.limit}: expected a whole number >= 1`);
  const names = new IdAllocator('-');
  let index = 0;
  for await (const raw of readJsonList(file, converter.units, options.onRead)) {
    log.unit();
    const converted = converter.convert(raw, index, log, file, {
      documents: options.documents === true,
      ...(options.questions ? { questions: options.questions } : {}),
    });
    index++;
    const lone = converted ? loneSurrogates(raw) : undefined;
    if (converted && lone && lone.count > 0)
      log.repair(
        converted.id,
        'lone-surrogate',
        `${lone.count === 1 ? 'a string holds' : `${lone.count} strings hold`} a lone UTF-16 surrogate (a \\ud800-\\udfff escape no text can hold), read as U+FFFD: ${lone.paths.join(', ')}${lone.count > lone.paths.length ? ', ...' : ''}`,
        // A question's repair (LongMemEval's element is one question); a conversation's is no one QA item's.
        converted.items.length === 1 ? converted.items[0] : undefined,
      );
    // Named for every element, selected or not: a question's scenario name is the one a whole import gives it.
    const name = converted ? names.take(converted.document.name) : undefined;
    const wanted = converted && options.only ? options.only.take(converted.id, name!) : undefined;
    let selected = converted !== undefined && (wanted === undefined || wanted.length > 0);
    if (selected && options.errata) {
      // Errata that drop every question of an element leave a scenario that measures nothing: none is made.
      const before = asked(converted!.document.steps);
      converted!.document.steps = options.errata.apply(converted!.document.steps, converted!.items, log);
      if (before && !asked(converted!.document.steps)) selected = false;
    }
    if (converted && selected) {
      const imported = finish(converted, dataset, file, name!, log);
      if (imported) {
        for (const id of wanted ?? []) options.only!.imported.add(id);
        yield imported;
      }
      // A derived corpus (observations, session summaries) is asked the dialog's questions, as corrected.
      const probes = converted.document.steps.filter((step) => 'probe' in step);
      for (const document of imported ? (converted.derived ?? []) : []) {
        document.steps.push(...probes);
        const replay = finish(
          { document, items: converted.items, id: converted.id },
          dataset,
          file,
          names.take(document.name),
          log,
          false,
        );
        if (replay) yield replay;
      }
    }
    if (options.limit !== undefined && index >= options.limit) break;
  }
  if (options.errata) log.errataApplied(options.errata.report(), options.errata.unusedIds(log));
}

/**
 * `--question ID`: the questions (LongMemEval) or conversations (LoCoMo) to import, by the file's
 * own id exactly as written (`question_id`, `sample_id`: `ABC` and `abc` are two ids) or by the
 * scenario name reports show (`longmemeval-abc`, `longmemeval-abc-2` for a second element whose
 * name would be the same); records which ids matched and every id seen, for the error naming an
 * unknown one.
 */
export class QuestionFilter {
  /** Ids that named an element of the file (imported or not). */
  readonly matched = new Set<string>();
  /** Ids whose element became a scenario (one too large for a scenario file is matched, not imported). */
  readonly imported = new Set<string>();
  /** The scenario name of each matched id's element: where the import report says why it was not imported. */
  readonly names = new Map<string, string>();
  readonly seen: string[] = [];
  constructor(readonly ids: readonly string[]) {}

  /** The ids naming the element whose own id is `id` and whose scenario is named `name` (none: not selected). */
  take(id: string, name: string): string[] {
    this.seen.push(id);
    // The import trims an id (`"  abc  "` is `abc`): an id given as the file writes it, spaces and all, still names it.
    const taken = this.ids.filter((wanted) => wanted === id || wanted === name || wanted.trim() === id);
    for (const wanted of taken) {
      this.matched.add(wanted);
      this.names.set(wanted, name);
    }
    return taken;
  }
}

/**
 * Why `--question ID` ran nothing, once every dataset is imported, or undefined when its element
 * became a scenario: skipped at import (the report's line for it: a question of an unknown type,
 * one too large for a scenario file), or no element has that id (among the first N, under --limit).
 */
export function unimportedQuestion(
  id: string,
  filter: QuestionFilter,
  reports: readonly ImportReport[],
  limit?: number,
): string | undefined {
  if (filter.imported.has(id)) return undefined;
  const name = filter.names.get(id);
  for (const report of reports) {
    const issue = report.skipped.find(
      (skip) => (name !== undefined && skip.where === name) || skip.item === id || skip.where === id,
    );
    if (issue) return `--question ${id}: in ${report.file} but not imported: ${issue.where}: ${issue.message}`;
  }
  const units = [...new Set(reports.map((report) => CONVERTERS[report.dataset].units.replace(/s$/u, '')))].join(' or ');
  const closest = closestString(id, filter.seen);
  return `--question ${id}: no such ${units} in ${reports.map((report) => `${report.dataset}:${report.file}`).join(', ')}${
    limit !== undefined ? ` among the first ${limit} (--limit ${limit})` : ''
  }${closest !== undefined ? ` (closest: ${closest})` : ''}`;
}

/** Whether a converted document's steps ask anything. */
const asked = (steps: readonly Record<string, unknown>[]): boolean => steps.some((step) => 'probe' in step);

/** A converted element as an imported scenario named `name` (from the import's IdAllocator), or undefined when it cannot be one (logged). */
function finish(
  converted: Converted,
  dataset: DatasetName,
  file: string,
  name: string,
  log: ImportLog,
  counted = true,
): ImportedScenario | undefined {
  const { document, items } = converted;
  if (name !== document.name)
    log.repair(
      document.name,
      'name-taken',
      `scenario name "${document.name}" is taken by an earlier ${CONVERTERS[dataset].units.replace(/s$/u, '')}: named "${name}"`,
    );
  document.name = name;
  let text: string | undefined;
  const yaml = (): string => (text ??= toYaml(document));
  const source = `${dataset}:${file}#${name}`;
  const json = JSON.stringify(document);
  const bytes = yamlBytes(json, yaml);
  // Validated as data by the loader's own checks: the same Scenario its YAML would load as (test/harness/scenarios/importers/longmemeval.test.ts).
  const check =
    bytes > MAX_SCENARIO_BYTES ? undefined : checkScenarioValue(document as unknown as Record<string, unknown>, source);
  if (!check?.scenario) {
    const why = check
      ? `the generated scenario is invalid (please report it): ${check.problems
          .filter((problem) => problem.severity === 'error')
          .map(formatProblem)
          .join('; ')}`
      : `the scenario would be ${bytes} bytes, over the ${MAX_SCENARIO_BYTES}-byte limit for a scenario file`;
    log.skip(name, check ? 'invalid-scenario' : 'too-large', why);
    for (const item of items)
      log.skip(item, check ? 'invalid-scenario' : 'too-large', `its scenario "${name}" was not imported`, item);
    return undefined;
  }
  // The import summary counts the dialog: a derived corpus replays the same conversation's questions.
  if (counted) log.scenario(document);
  const scenario = { ...check.scenario, source };
  noteContentDigest(scenario, json);
  return { document, yaml, scenario };
}

/** Whether a scenario was imported from a dataset file by `run --dataset` (its source is `DATASET:FILE#NAME`). */
export function isDatasetReplay(scenario: Pick<Scenario, 'source'>): boolean {
  return DATASET_NAMES.some((dataset) => scenario.source.startsWith(`${dataset}:`));
}

/** `locomo:FILE` / `longmemeval:FILE` → dataset and file. */
export function parseDatasetArg(arg: string): { dataset: DatasetName; file: string } {
  const colon = arg.indexOf(':');
  const dataset = arg.slice(0, Math.max(colon, 0));
  const file = arg.slice(colon + 1);
  if (colon < 0 || !(DATASET_NAMES as readonly string[]).includes(dataset) || file.length === 0) {
    throw bad(
      `--dataset ${arg}: expected DATASET:FILE with DATASET one of ${DATASET_NAMES.join(', ')} (e.g. locomo:data/locomo10.json)`,
    );
  }
  return { dataset: dataset as DatasetName, file };
}

/**
 * Imports a dataset for `membench run --dataset locomo:FILE`: validated scenarios (as
 * `loadScenarios` returns them), each as `keep` makes it as it comes (the run shelves it on disk:
 * a large file's questions are never all in memory), and the report. Throws when nothing could be
 * imported.
 */
export async function importDataset<Kept = Scenario>(
  arg: string,
  options: {
    limit?: number;
    errata?: string;
    documents?: boolean;
    questionPrompts?: string;
    only?: QuestionFilter;
    keep?: (scenario: Scenario) => Kept;
    onRead?: ReadListener;
  } = {},
): Promise<{ scenarios: Kept[]; report: ImportReport }> {
  const { dataset, file } = parseDatasetArg(arg);
  const log = new ImportLog(dataset, file);
  const keep = options.keep ?? ((scenario: Scenario) => scenario as Kept);
  const scenarios: Kept[] = [];
  const errata = options.errata === undefined ? undefined : await Errata.load(options.errata);
  const questions =
    options.questionPrompts === undefined ? undefined : await loadQuestionPrompts(options.questionPrompts, dataset);
  for await (const imported of importScenarios(dataset, file, log, {
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
    ...(errata ? { errata } : {}),
    ...(questions ? { questions } : {}),
    ...(options.documents ? { documents: true } : {}),
    ...(options.only ? { only: options.only } : {}),
    ...(options.onRead ? { onRead: options.onRead } : {}),
  }))
    scenarios.push(keep(imported.scenario));
  const report = log.report();
  if (scenarios.length === 0 && !options.only) throw nothingImported(report);
  return { scenarios, report };
}

/** The error for a file that yielded no scenario, with the reasons. */
export function nothingImported(report: ImportReport): MembenchError {
  const converter = CONVERTERS[report.dataset];
  const what =
    report.units === 0
      ? `the list holds no ${converter.units}`
      : report.units === 1
        ? `its only ${converter.units.replace(/s$/u, '')} could not be imported`
        : `none of its ${report.units} ${converter.units} could be imported`;
  return new MembenchError(
    'INVALID_ARGUMENT',
    `${report.file}: nothing to import: ${what}`,
    formatImportReport(report).split('\n').slice(3),
  );
}

const EXAMPLES = 3;

function group(issues: readonly ImportIssue[]): string[] {
  const byCode = new Map<string, ImportIssue[]>();
  for (const issue of issues) {
    const list = byCode.get(issue.code);
    if (list) list.push(issue);
    else byCode.set(issue.code, [issue]);
  }
  const lines: string[] = [];
  for (const [code, list] of byCode) {
    lines.push(`  ${code} (${list.length}):`);
    for (const issue of list.slice(0, EXAMPLES)) lines.push(`    ${issue.where}: ${issue.message}`);
    if (list.length > EXAMPLES) lines.push(`    ... and ${list.length - EXAMPLES} more`);
  }
  return lines;
}

/**
 * The summary `membench import` (and `run --dataset`) prints: counts, then repairs and skips grouped
 * by kind with examples. A terminal shows it: the file's ids and labels keep their control
 * characters (an ESC, a carriage return) only as escapes (visibleControls).
 */
export function formatImportReport(report: ImportReport): string {
  const converter = CONVERTERS[report.dataset];
  const lines = [
    `${report.dataset}: ${counted(report.units, converter.units)} read from ${report.file}, ${counted(report.scenarios, 'scenarios')} imported`,
    `${converter.itemsName}: ${report.items} read: ${report.imported} imported as is, ${report.repairedItems} repaired, ${report.skippedItems} skipped`,
    `${counted(report.sessions, 'sessions')}, ${counted(report.turns, 'turns')} (both speakers' messages, none written by a model); probes by category: ${
      Object.entries(report.probesByLabel)
        .map(([label, n]) => `${label} ${n}`)
        .join(', ') || 'none'
    }`,
  ];
  if (report.errata) {
    const counts = Object.values(report.errata.byLabel);
    const corrected = counts.reduce((sum, count) => sum + count.corrected, 0);
    const dropped = counts.reduce((sum, count) => sum + count.dropped, 0);
    lines.push(
      `errata ${report.errata.file}: ${corrected} gold answer${corrected === 1 ? '' : 's'} corrected, ${dropped} question${dropped === 1 ? '' : 's'} dropped, ${report.errata.unused} naming no imported question${report.errata.unused > 0 ? " (another file's, past --limit, or a typo):" : ''}`,
      ...(report.unusedErrata ?? []).map(({ id, closest, skipped }) =>
        skipped !== undefined
          ? `  ${JSON.stringify(id)}: in the file but skipped at import: ${skipped}`
          : `  ${JSON.stringify(id)}: no imported question has this id${closest === undefined ? '' : ` (closest: ${JSON.stringify(closest)})`}`,
      ),
    );
  }
  if (report.repaired.length > 0) lines.push(`repaired (${report.repaired.length}):`, ...group(report.repaired));
  if (report.skipped.length > 0) lines.push(`skipped (${report.skipped.length}):`, ...group(report.skipped));
  return visibleControls(lines.join('\n'));
}
