/**
 * What every dataset importer shares: the import log and report, the scenario document a
 * converter produces, and the helpers that make dataset ids and text safe for scenarios.
 */
import path from 'node:path';
import type { z } from 'zod';
import { fnv1a } from '../../core/hash.js';
import { LONE_SURROGATE, loneSurrogatesIn } from '../../core/text.js';
import { formatPath } from '../../core/user-input.js';
import { JsonNumberText } from './json-stream.js';
import type { DerivedDocuments } from '../format.js';
import { MAX_SCENARIO_NAME_CHARS } from '../scenario-name.js';
import type { QuestionPrompts } from './question-prompts.js';

/** The datasets `membench import` and `run --dataset` understand. */
export const DATASET_NAMES = ['locomo', 'longmemeval'] as const;
export type DatasetName = (typeof DATASET_NAMES)[number];

/** One thing the importer changed or left out, with where it was and why. */
export interface ImportIssue {
  /** Where in the file: `conv-26 qa[12]`, `conv-26 session_3_date_time`, `e47becba haystack_sessions[4]`. */
  where: string;
  /** Stable kind of issue (the summary groups by it). */
  code: string;
  message: string;
  /** The QA item / question this concerns; absent for repairs of the conversation itself. */
  item?: string;
}

/** How many of a category's imported questions an errata file corrected or dropped (errata.ts). */
export interface ErrataCounts {
  questions: number;
  corrected: number;
  dropped: number;
}

/** What applying an errata file to one import did. */
export interface ErrataReport {
  file: string;
  byLabel: Record<string, ErrataCounts>;
  /** Errata naming no question of this import (another file, or past --limit). */
  unused: number;
}

/** An erratum naming no imported question: why the import skipped the question it names, or the imported question id nearest to it. */
export interface UnusedErratum {
  id: string;
  closest?: string;
  /** The import's reason for skipping the question (its skip message). */
  skipped?: string;
}

/** What an import did: every item read is imported as is, repaired, or skipped. */
export interface ImportReport {
  dataset: DatasetName;
  file: string;
  /** Conversations (LoCoMo) or questions (LongMemEval) read from the file. */
  units: number;
  scenarios: number;
  /** Sessions and turns (saved messages: both speakers') of the imported scenarios. */
  sessions: number;
  turns: number;
  /** Probes imported, by the dataset's own category label (what the paper's tables count). */
  probesByLabel: Record<string, number>;
  /** QA items (LoCoMo) or questions (LongMemEval) read: imported + repairedItems + skippedItems. */
  items: number;
  imported: number;
  repairedItems: number;
  skippedItems: number;
  repaired: ImportIssue[];
  skipped: ImportIssue[];
  /** With an errata file: what it corrected and dropped, by category label. */
  errata?: ErrataReport;
  /** With an errata file: each erratum naming no imported question, by id. */
  unusedErrata?: UnusedErratum[];
}

/** Collects issues while converting; converters receive it and report into it. */
export class ImportLog {
  private readonly repairs: ImportIssue[] = [];
  private readonly skips: ImportIssue[] = [];
  private readonly items = new Set<string>();
  private readonly unitIds = new Set<string>();
  private units = 0;
  private scenarios = 0;
  private sessions = 0;
  private turns = 0;
  private readonly labels = new Map<string, number>();
  private errata: ErrataReport | undefined;
  private unusedErrata: UnusedErratum[] = [];

  constructor(
    readonly dataset: DatasetName,
    readonly file: string,
  ) {}

  /** Registers a QA item / question; false when the key was already registered. */
  item(key: string): boolean {
    if (this.items.has(key)) return false;
    this.items.add(key);
    return true;
  }

  unit(): void {
    this.units++;
  }

  /** Registers an element's own id (LoCoMo's sample_id, or the name given to a sample without one); false when an earlier element has it. */
  unitId(id: string): boolean {
    if (this.unitIds.has(id)) return false;
    this.unitIds.add(id);
    return true;
  }

  /** Counts an imported scenario: its sessions, its saved turns and its probes by label. */
  scenario(document: ScenarioDocument): void {
    this.scenarios++;
    for (const step of document.steps) {
      if ('session' in step) this.sessions++;
      if ('user' in step) this.turns++;
      if ('assistant' in step) this.turns++;
      if ('probe' in step) {
        const label =
          typeof step.label === 'string'
            ? step.label
            : typeof step.category === 'string'
              ? step.category
              : 'unlabelled';
        this.labels.set(label, (this.labels.get(label) ?? 0) + 1);
      }
    }
  }

  repair(where: string, code: string, message: string, item?: string): void {
    this.repairs.push({ where, code, message, ...(item !== undefined ? { item } : {}) });
  }

  skip(where: string, code: string, message: string, item?: string): void {
    this.skips.push({ where, code, message, ...(item !== undefined ? { item } : {}) });
  }

  /** The first skip said for an item, or undefined when the item was not skipped. */
  skipOf(item: string): ImportIssue | undefined {
    return this.skips.find((issue) => issue.item === item);
  }

  /** Records what an errata file did to this import (see errata.ts). */
  errataApplied(report: ErrataReport, unused: UnusedErratum[] = []): void {
    this.errata = report;
    this.unusedErrata = unused;
  }

  report(): ImportReport {
    const skipped = new Set(this.skips.flatMap((issue) => (issue.item === undefined ? [] : [issue.item])));
    const repaired = new Set(
      this.repairs.flatMap((issue) => (issue.item === undefined || skipped.has(issue.item) ? [] : [issue.item])),
    );
    return {
      dataset: this.dataset,
      file: this.file,
      units: this.units,
      scenarios: this.scenarios,
      sessions: this.sessions,
      turns: this.turns,
      probesByLabel: Object.fromEntries([...this.labels].sort(([a], [b]) => a.localeCompare(b))),
      items: this.items.size,
      imported: this.items.size - repaired.size - skipped.size,
      repairedItems: repaired.size,
      skippedItems: skipped.size,
      repaired: [...this.repairs],
      skipped: [...this.skips],
      ...(this.errata ? { errata: this.errata } : {}),
      ...(this.unusedErrata.length > 0 ? { unusedErrata: [...this.unusedErrata] } : {}),
    };
  }
}

/** A scenario as plain data, in the file format (`user:`, `probe:`...), ready for YAML. */
export interface ScenarioDocument {
  name: string;
  description?: string;
  language?: string;
  tags?: string[];
  group?: string;
  documents?: DerivedDocuments;
  steps: Record<string, unknown>[];
}

/** What a dataset module turns one list element into: the document and the item keys it holds. */
export interface Converted {
  document: ScenarioDocument;
  items: string[];
  /** The element's own id as the file writes it (`question_id`, `sample_id`): what `--question` matches first. */
  id: string;
  /**
   * When asked for (`documents`): scenarios replaying the element's derived documents (LoCoMo's
   * observations, session summaries) in place of its dialog, without probes: the import adds the
   * dialog's questions (errata applied) to each.
   */
  derived?: ScenarioDocument[];
}

/** What an import is for: `documents` also converts the derived documents a protocol retrieves over (`--protocol locomo`). */
export interface ConvertOptions {
  documents?: boolean;
  /** How LoCoMo's temporal and adversarial questions are put to the model (default: membench's wording). */
  questions?: QuestionPrompts;
}

/** A dataset module: names for messages and the converter of one list element. */
export interface DatasetConverter {
  /** What one element of the list is, plural, for messages: "conversations", "questions". */
  units: string;
  /** What one probe-bearing item is, plural: "QA items", "questions". */
  itemsName: string;
  /** The published format of one list element (the importer conformance suite checks the converter against it). */
  format: DatasetFormat;
  convert(raw: unknown, index: number, log: ImportLog, file: string, options?: ConvertOptions): Converted | undefined;
}

/**
 * A dataset's published format: the zod schema of one list element, an element as the published
 * file writes it, and the fields without which an item is skipped (each with where the import log
 * reports it). test/harness/scenarios/importers/conformance.ts runs every converter against it.
 */
export interface DatasetFormat {
  element: z.ZodType;
  /** An element as published, imported with nothing to repair; `say` is the text of its first turn. */
  example(say: string): unknown;
  required: readonly { path: readonly (string | number)[]; where: string }[];
}

/** Text from a dataset field: strings trimmed and made well-formed (lone surrogates replaced). */
/**
 * A JSON number as text, exactly as the file wrote it when a double cannot hold it
 * (`12345678901234567890` stays those digits); undefined when the value is not a number.
 */
export function numberText(value: unknown): string | undefined {
  if (value instanceof JsonNumberText) return value.text;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

/** A field's value as a message shows it: JSON, and a number as the file wrote it (`1e400`, not `null`). */
export function shownValue(value: unknown): string {
  if (value === undefined) return '(missing)';
  return value instanceof JsonNumberText ? value.text : JSON.stringify(value);
}

/** `no FIELD` where the element has none (or only empty text), else what it holds that is not EXPECTED. */
export function missingField(field: string, value: unknown, expected: string): string {
  return value === undefined || value === null || typeof value === 'string'
    ? `no ${field}`
    : badField(field, value, expected);
}

/** `FIELD VALUE is not EXPECTED`, or `no FIELD (expected EXPECTED)` where the element has none. */
export function badField(field: string, value: unknown, expected: string): string {
  return value === undefined
    ? `no ${field} (expected ${expected})`
    : `${field} ${shownValue(value)} is not ${expected}`;
}

/** A lone UTF-16 surrogate (core/text.ts's LONE_SURROGATE), every one (cleanText's replacement): made once, not at each of a file's million texts. */
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'gu');

/**
 * Where the strings of a dataset element hold lone UTF-16 surrogates (`\ud800` escapes no text
 * can hold, which cleanText reads as U+FFFD): the paths of the first few, and how many strings do.
 * A gold answer changed that way was changed without a word.
 */
export function loneSurrogates(value: unknown): { paths: string[]; count: number } {
  const { paths, count } = loneSurrogatesIn(value, 3);
  return { paths: paths.map((path) => (path.length > 0 ? formatPath(path) : '(value)')), count };
}

export function cleanText(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.replace(LONE_SURROGATES, '\uFFFD').replace(/\r\n?/gu, '\n').trim();
  return text.length > 0 ? text : undefined;
}

/**
 * A dataset's date and time as an ISO instant in UTC (the datasets name no time zone), or
 * undefined when a field is out of range (a 30 February, an hour 24). Years 0-99 stay those years:
 * Date.UTC would read them as 1900-1999.
 */
export function utcInstant(year: number, month: number, day: number, hour = 0, minute = 0): string | undefined {
  if (hour > 23 || minute > 59) return undefined;
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute));
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date.toISOString().replace('.000Z', 'Z');
}

/** A dataset id made into a step id (letters, digits, `_`, `.`, `:`, `-`). */
export function toStepId(raw: string): string {
  const id = raw.replace(/[^\p{L}\p{N}_.:-]+/gu, '_');
  return id.length > 0 ? id : '_';
}

// The limit on a scenario name (scenario-name.ts), re-exported beside toScenarioName, which cuts names to it.

/**
 * `PREFIX-slug` for a dataset's id: lower case, runs of other characters than a-z 0-9 . _ - as one
 * dash. An id whose slug would be longer than MAX_SCENARIO_NAME_CHARS keeps its start and gets a
 * hash of the whole id (two long ids that share their start stay two names).
 */
export function toScenarioName(prefix: string, raw: string): string {
  const slug = raw
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/gu, '-')
    .replace(/^[^a-z0-9]+/u, '')
    .replace(/-+$/u, '');
  if (slug.length === 0) return prefix;
  const name = `${prefix}-${slug}`;
  if (name.length <= MAX_SCENARIO_NAME_CHARS) return name;
  const hash = fnv1a(raw).toString(16).padStart(8, '0');
  return `${name.slice(0, MAX_SCENARIO_NAME_CHARS - hash.length - 1).replace(/[._-]+$/u, '')}-${hash}`;
}

/** Hands out unique ids: a taken id gets `.2`, `.3`... (or `-2`, `-3`... with `separator: '-'`) appended. */
export class IdAllocator {
  private readonly taken = new Set<string>();

  constructor(private readonly separator = '.') {}

  take(wanted: string): string {
    let id = wanted;
    for (let n = 2; this.taken.has(id); n++) id = `${wanted}${this.separator}${n}`;
    this.taken.add(id);
    return id;
  }
}

/** What a converter returns for one list element: its scenario document (named and tagged after the dataset) and the items it holds. */
export function converted(
  dataset: DatasetName,
  file: string,
  id: string,
  description: string,
  steps: Record<string, unknown>[],
  items: string[],
  tags: readonly string[] = [],
): Converted {
  return {
    document: {
      name: toScenarioName(dataset, id),
      description,
      language: 'en',
      tags: [dataset, 'imported', ...tags],
      group: datasetGroup(dataset, file),
      steps,
    },
    items,
    id,
  };
}

/** The group of a dataset file's scenarios: `locomo:locomo10.json` (reports pool them into one suite). */
export function datasetGroup(dataset: DatasetName, file: string): string {
  return `${dataset}:${path.basename(file)}`;
}
