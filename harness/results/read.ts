/**
 * Reads a results.json back (for `compare` and `report`): a file or a run dir, checked at the
 * edge with zod so every later step can trust the types; bad input is a MembenchError (exit 2).
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { MembenchError } from '../core/errors.js';
import { READABLE_SCHEMA_VERSIONS, runResultSchema, type RunResult } from './schema.js';

/** A run dir means its results.json; anything else is taken as the file itself. */
export async function resolveResultsPath(target: string): Promise<string> {
  const info = await stat(target).catch(() => null);
  if (!info) throw new MembenchError('INVALID_ARGUMENT', `${target}: no such file or directory`);
  if (!info.isDirectory()) return target;
  const file = path.join(target, 'results.json');
  if (!(await stat(file).catch(() => null))?.isFile()) throw new MembenchError('INVALID_ARGUMENT', `${target}: a directory without results.json (is it a membench run dir?)`);
  return file;
}

/** Parses and checks results text; `source` names the file in messages. */
export function parseResults(text: string, source: string): RunResult {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new MembenchError('INVALID_ARGUMENT', `${source}: not a membench results file: not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const header = typeof data === 'object' && data !== null ? (data as { header?: unknown }).header : undefined;
  const version = typeof header === 'object' && header !== null ? (header as { schemaVersion?: unknown }).schemaVersion : undefined;
  if (typeof version !== 'number' || !Array.isArray((data as { cells?: unknown }).cells)) {
    throw new MembenchError('INVALID_ARGUMENT', `${source}: not a membench results file (expected a "header" with "schemaVersion" and a "cells" list)`);
  }
  if (!READABLE_SCHEMA_VERSIONS.includes(version)) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${source}: results schema version ${version}, but this membench reads versions ${READABLE_SCHEMA_VERSIONS.join(' and ')}: re-run the benchmark with this membench version, or use the membench that wrote it`,
    );
  }
  const parsed = runResultSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((issue) => `  ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new MembenchError('INVALID_ARGUMENT', `${source}: not a valid membench results file (schema version ${version})`, problems);
  }
  return parsed.data;
}

/** Reads a results file or run dir; returns the results and the file actually read. */
export async function readResults(target: string): Promise<{ result: RunResult; file: string }> {
  const file = await resolveResultsPath(target);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new MembenchError('INVALID_ARGUMENT', `${file}: cannot read: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { result: parseResults(text, file), file };
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
  if (run.cells.length === 0) throw new MembenchError('INVALID_ARGUMENT', `${file} has no cells: nothing to report (was the run stopped before any cell finished?)`);
  const repeated = repeatedCellId(run);
  if (repeated !== undefined) throw new MembenchError('INVALID_ARGUMENT', `${file} holds two cells with id "${repeated}": they cannot be told apart (two scenarios with one name?); re-run with unique scenario names`);
}
