/**
 * Reads a results.json back (for `compare` and `report`): a file or a run dir, checked at the
 * edge with zod so every later step can trust the types; bad input is a MembenchError (exit 2).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { MembenchError, errorMessage } from '../core/errors.js';
import { kindOf, shownValue } from '../core/user-input.js';
import { distribution } from '../core/metrics.js';
import { jsonErrorAt } from '../core/json-errors.js';
import { emptyUsage } from '../models/index.js';
import { summarizeRecall } from './recall.js';
import { READABLE_SCHEMA_VERSIONS, runResultSchema, type ErrorCell, type RunResult } from './schema.js';
import { takeRankings } from './shared-rankings.js';
import { emptyShardWords } from './shard.js';

/** A run dir means its results.json; anything else is taken as the file itself. */
export async function resolveResultsPath(target: string): Promise<string> {
  if (target.trim() === '')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      'the results path is empty (an unset variable?): give a run dir or its results.json',
    );
  const info = await stat(target).catch(() => null);
  if (!info) throw new MembenchError('INVALID_ARGUMENT', `${target}: no such file or directory`);
  if (!info.isDirectory()) return regularResultsFile(target, info);
  const file = path.join(target, 'results.json');
  const inside = await stat(file).catch(() => null);
  if (inside && !inside.isDirectory()) return regularResultsFile(file, inside);
  if (!inside?.isFile()) {
    const unfinished = (await stat(path.join(target, 'plan.json')).catch(() => null))?.isFile();
    throw new MembenchError(
      'INVALID_ARGUMENT',
      unfinished
        ? `${target}: a run that did not finish (its plan.json, no results.json): finish it with membench run --resume ${target}`
        : `${target}: a directory without results.json (is it a membench run dir?)`,
    );
  }
  return file;
}

/**
 * `file` when it is a regular file: a FIFO blocked every results command for ever, and /dev/zero
 * (a results.json linked to it) filled memory at ~0.25 GB a second until the process died.
 */
function regularResultsFile(file: string, info: { isFile(): boolean }): string {
  if (!info.isFile())
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${file}: not a regular file (a pipe, a device or a socket): results.json is a file a run wrote`,
    );
  return file;
}

/** Whether `value` has a results header (an object with a numeric `schemaVersion`) and a `cells` list. */
function looksLikeResults(value: unknown): boolean {
  const header = typeof value === 'object' && value !== null ? (value as { header?: unknown }).header : undefined;
  return (
    typeof header === 'object' &&
    header !== null &&
    typeof (header as { schemaVersion?: unknown }).schemaVersion === 'number' &&
    Array.isArray((value as { cells?: unknown }).cells)
  );
}

/**
 * Refuses what a library caller handed a renderer, `compareRuns` or `writeRunOutput` in place of a
 * RunResult (`null`, a file name, an object without header or cells), naming `what`: a TypeError
 * from deep inside said nothing of which argument was wrong.
 */
export function assertRunResult(value: unknown, what: string): asserts value is RunResult {
  if (looksLikeResults(value)) return;
  const shown =
    typeof value === 'string'
      ? `the string ${shownValue(value)}`
      : value === null
        ? 'null'
        : Array.isArray(value)
          ? 'a list'
          : typeof value === 'object'
            ? 'an object without a results "header" and "cells" list'
            : String(value);
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `${what}: expected a RunResult (what runBenchmark returns, or readResults(FILE).result), got ${shown}`,
  );
}

/** Parses and checks results text; `source` names the file in messages. */
export function parseResults(text: string, source = 'the results text'): RunResult {
  if (typeof text !== 'string')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `parseResults: expected the text of a results.json, got ${kindOf(text)}`,
    );
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    const { line, col, reason } = jsonErrorAt(error, text);
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${source}:${line}:${col}: not a membench results file: not JSON (${reason})`,
    );
  }
  if (!looksLikeResults(data)) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${source}: not a membench results file (expected a "header" with "schemaVersion" and a "cells" list)`,
    );
  }
  const version = (data as RunResult).header.schemaVersion;
  if (!READABLE_SCHEMA_VERSIONS.includes(version)) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${source}: results schema version ${version}, but this membench reads versions ${READABLE_SCHEMA_VERSIONS.slice(0, -1).join(', ')} and ${READABLE_SCHEMA_VERSIONS.at(-1)}: re-run the benchmark with this membench version, or use the membench that wrote it`,
    );
  }
  const upgraded = version < 4 ? renamedFromVersion3(data as Record<string, unknown>) : data;
  // Well-formed rankings skip the schema's copy and come back shared, as a run keeps them (shared-rankings.ts).
  const restoreRankings = takeRankings(upgraded as { cells: unknown[] });
  const parsed = runResultSchema.safeParse(version < 6 ? withErrorMessages(upgraded) : upgraded);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .slice(0, 5)
      .map((issue) => `  ${issuePlace(issue.path, upgraded)}: ${issue.message}`);
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${source}: not a valid membench results file (schema version ${version})`,
      problems,
    );
  }
  restoreRankings(parsed.data);
  return parsed.data;
}

/**
 * Where a schema issue is, as a reader finds it: a cell by its index and its id (`cells[1] (id
 * "recipes-en/window(k=2)").tokens.contextTotal`), for a file of a hundred cells said `cells.1.…`.
 */
function issuePlace(place: readonly PropertyKey[], data: unknown): string {
  if (place.length === 0) return '(root)';
  const [top, index, ...rest] = place;
  const cells = (data as { cells?: unknown }).cells;
  if (top !== 'cells' || typeof index !== 'number' || !Array.isArray(cells)) return place.map(String).join('.');
  const id = (cells[index] as { id?: unknown } | null | undefined)?.id;
  // The id is no help where the id itself is what is wrong.
  const named = `cells[${index}]${typeof id === 'string' && !(rest.length === 1 && rest[0] === 'id') ? ` (id ${shownValue(id, 120)})` : ''}`;
  return [named, ...rest.map(String)].join('.');
}

/** A renamed key, when the object has the old one (in place; the new key goes where the old one was, so the field order stays). */
function renameKey(target: unknown, from: string, to: string): void {
  if (typeof target !== 'object' || target === null || !(from in target)) return;
  const entries = Object.entries(target).map(([key, value]) => [key === from ? to : key, value] as const);
  for (const key of Object.keys(target)) delete (target as Record<string, unknown>)[key];
  Object.assign(target, Object.fromEntries(entries));
}

/** Keys version 4 renamed (schema.ts says why): where they are, the old name, the new one. */
const RENAMED_IN_VERSION_4: readonly { where: 'strategy' | 'cell' | 'effects'; from: string; to: string }[] = [
  { where: 'strategy', from: 'label', to: 'setting' },
  { where: 'cell', from: 'label', to: 'setting' },
  { where: 'cell', from: 'faults', to: 'durabilityOutcome' },
  { where: 'effects', from: 'duplicates', to: 'effectsDuplicated' },
  { where: 'effects', from: 'refused', to: 'effectsRefused' },
];

/** Renames version 4's keys in a results object (in place), forwards (an older file read) or back (an older file written again as it was). */
function renameVersion4Keys<T>(data: T, direction: 'forward' | 'back'): T {
  const { header, cells } = data as { header?: { strategies?: unknown }; cells?: unknown };
  const places = {
    strategy: Array.isArray(header?.strategies) ? header.strategies : [],
    cell: Array.isArray(cells) ? cells : [],
    effects: (Array.isArray(cells) ? cells : []).map((cell) =>
      typeof cell === 'object' && cell !== null ? (cell as { effects?: unknown }).effects : undefined,
    ),
  };
  for (const { where, from, to } of RENAMED_IN_VERSION_4)
    for (const target of places[where])
      direction === 'forward' ? renameKey(target, from, to) : renameKey(target, to, from);
  return data;
}

/** A version 2 or 3 file under version 4's names: the figures are the same. */
function renamedFromVersion3(data: Record<string, unknown>): Record<string, unknown> {
  return renameVersion4Keys(data, 'forward');
}

/** The message versions 2 to 5 left optional on an error cell, where it has none (version 6 requires one). */
const NO_MESSAGE = 'the cell failed without a message';

/**
 * Versions 2 to 5's error cells with the message version 6 requires. Their figures (zeroed, or
 * whatever the cell recorded before it stopped) are left for the schema to drop: an error cell has none.
 */
function withErrorMessages(data: unknown): unknown {
  const { cells } = data as { cells: unknown[] };
  for (const cell of cells)
    if (typeof cell === 'object' && cell !== null) {
      const fields = cell as { status?: unknown; error?: unknown };
      if (fields.status === 'error' && typeof fields.error !== 'string') fields.error = NO_MESSAGE;
    }
  return data;
}

/**
 * An error cell as versions 2 to 5 wrote one, so a membench of those versions reads the file again:
 * zeroed figures (what they held for a cell that never produced records), in their field order.
 */
function withZeroedFigures(cell: ErrorCell): Record<string, unknown> {
  const { phase, interleaved, pricing, durabilityOutcome, durationMs, unreadable, phases, ...identity } = cell;
  const empty = distribution([]);
  return {
    ...identity,
    tokens: {
      contextTotal: 0,
      contextMeanPerTurn: 0,
      contextMax: 0,
      maintenance: 0,
      maintenanceCalls: 0,
      answer: 0,
      reply: 0,
    },
    recall: summarizeRecall([]),
    recallByCategory: {},
    ...(interleaved !== undefined ? { interleaved } : {}),
    ...(pricing !== undefined ? { pricing } : {}),
    latency: { loadMs: empty, saveMs: empty, modelMs: empty },
    usage: emptyUsage(),
    effects: { effects: 0, effectsDuplicated: 0, effectsRefused: 0 },
    ...(durabilityOutcome !== undefined ? { durabilityOutcome } : {}),
    peakRssMb: 0,
    turns: [],
    probes: [],
    durationMs,
    refusedSteps: 0,
    ...(phase !== undefined ? { phase } : {}),
    ...(unreadable !== undefined ? { unreadable } : {}),
    ...(phases !== undefined ? { phases } : {}),
  };
}

/**
 * Results as their file holds them: an older file read back is written again under its own
 * version's names and with its error cells' zeroed figures (so `membench report` leaves a file an
 * older membench reads), in a copy (`given` is left as it is); from version 6 on, `given` itself.
 */
export function asWrittenInItsVersion<T extends { header: { schemaVersion: number } }>(given: T): T {
  const version = given.header.schemaVersion;
  if (version >= 6) return given;
  const data = structuredClone(given);
  const { cells } = data as { cells?: unknown };
  if (Array.isArray(cells))
    cells.forEach((cell: { status?: unknown }, index) => {
      if (cell?.status === 'error') cells[index] = withZeroedFigures(cell as ErrorCell);
    });
  return version < 4 ? renameVersion4Keys(data, 'back') : data;
}

/** Reads a results file or run dir; returns the results and the file actually read. */
export async function readResults(target: string): Promise<{ result: RunResult; file: string }> {
  const { result, file } = await readResultsAndBytes(target);
  return { result, file };
}

/**
 * `readResults`, and the file's bytes as read: `membench report` writes results.json as these
 * bytes instead of rendering the results again (only it holds on to them: a merge of many shards
 * would hold every shard's).
 */
export async function readResultsAndBytes(target: string): Promise<{ result: RunResult; file: string; bytes: Buffer }> {
  const file = await resolveResultsPath(target);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw new MembenchError('INVALID_ARGUMENT', `${file}: cannot read: ${errorMessage(error)}`);
  }
  let text: string;
  try {
    // Refuses bytes that are not UTF-8 (read with U+FFFD in their place, they were taken in silence) and drops a byte-order mark.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new MembenchError('INVALID_ARGUMENT', `${file}: not UTF-8 text (binary data?): results.json is JSON text`);
  }
  return { result: parseResults(text, file), file, bytes };
}

/** A cell id that `run` holds twice (two scenarios with one name?): its cells cannot be matched nor reported apart. */
export function repeatedCellId(run: RunResult): string | undefined {
  const seen = new Set<string>();
  for (const { id } of run.cells) {
    if (seen.has(id)) return id;
    seen.add(id);
  }
  return undefined;
}

/** Refuses results that reports cannot stand on: no cell at all, or a cell id twice (exit 2, naming the file). */
export function assertReportable(run: RunResult, file: string): void {
  const { shard } = run.header;
  if (run.cells.length === 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      shard
        ? `${file} has no cells: nothing to report (${emptyShardWords(shard, shard.planned)}): merge the shards, then report the merged run`
        : `${file} has no cells: nothing to report (was the run stopped before any cell finished?)`,
    );
  const repeated = repeatedCellId(run);
  if (repeated !== undefined)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${file} holds two cells with id "${repeated}": they cannot be told apart (two scenarios with one name?); re-run with unique scenario names`,
    );
}
