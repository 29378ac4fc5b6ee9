/**
 * The dataset files a run imported (the results header's `imports`) as report text, shared by the
 * console, report.md and report.html: what each file held, what the run kept, and what it
 * repaired or skipped and why, so a run holding fewer questions than its file says so.
 */
import { counted } from '../harness/core/plural.js';
import type { ImportIssues, ImportSummary, RunResult } from '../harness/results/schema.js';

const codes = (issues: readonly ImportIssues[]): string =>
  issues.map((issue) => `${issue.code} ${issue.count}`).join(', ');

const total = (issues: readonly ImportIssues[]): number => issues.reduce((sum, issue) => sum + issue.count, 0);

/**
 * One file in a line: `longmemeval:FILE — 13 questions read, 10 imported; skipped 3
 * (question-type-unknown 1, ...); repaired 4 (answer-number 1, ...)`. Counts in brackets are the
 * issues of each kind, as `membench import` counts them.
 */
export function importLine(summary: ImportSummary): string {
  const read =
    summary.unitsName === summary.itemsName
      ? `${counted(summary.units, summary.unitsName)} read, ${summary.scenarios} imported`
      : `${counted(summary.units, summary.unitsName)} read, ${counted(summary.scenarios, 'scenarios')} imported; ${counted(summary.items, summary.itemsName)} read, ${summary.items - summary.skippedItems} imported`;
  const parts = [
    read,
    ...(summary.skipped.length > 0 ? [`skipped ${total(summary.skipped)} (${codes(summary.skipped)})`] : []),
    ...(summary.repaired.length > 0 ? [`repaired ${total(summary.repaired)} (${codes(summary.repaired)})`] : []),
  ];
  return `${summary.source} — ${parts.join('; ')}`;
}

/** The examples kept of each kind of skip and repair: `skipped answer-missing: a1b2c3d4: no answer`. */
export function importExamples(summary: ImportSummary): string[] {
  const lines = (verb: string, issues: readonly ImportIssues[]): string[] =>
    issues.flatMap((issue) => [
      ...issue.examples.map((example) => `${verb} ${issue.code}: ${example.where}: ${example.message}`),
      ...(issue.count > issue.examples.length
        ? [`${verb} ${issue.code}: … and ${issue.count - issue.examples.length} more`]
        : []),
    ]);
  return [...lines('skipped', summary.skipped), ...lines('repaired', summary.repaired)];
}

/** The run's imports (none for a run of scenario files, or a file written before they were recorded). */
export function runImports(result: RunResult): ImportSummary[] {
  return result.header.imports ?? [];
}

/** What the import section says above its lines. */
export const IMPORT_NOTE =
  'Dataset files replayed by this run: what each held, and what the import repaired or left out and why (a few examples of each kind; membench import prints the same report). Skipped questions are in no table of this report.';
