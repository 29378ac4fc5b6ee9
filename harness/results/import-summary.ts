/**
 * What a run records of each dataset file it imported (the results header's `imports`): the
 * import report `membench import` prints, bounded, so a 500-question file with every question
 * repaired adds a few lines to results.json, not 500.
 */
import { shortenText } from '../core/text.js';
import { CONVERTERS, type ImportIssue, type ImportReport } from '../scenarios/importers/index.js';
import type { ImportIssues, ImportSummary } from './schema.js';

/** Examples kept per issue code (as many as the import's own summary prints). */
export const IMPORT_EXAMPLES = 3;
/** Characters kept of an example's place and message (a message may quote the file). */
export const IMPORT_EXAMPLE_CHARS = 200;

const shorten = (text: string): string => shortenText(text, IMPORT_EXAMPLE_CHARS);

/** Issues by code, in the order each code first came, with the first few of each. */
function byCode(issues: readonly ImportIssue[]): ImportIssues[] {
  const groups = new Map<string, ImportIssues>();
  for (const issue of issues) {
    const group = groups.get(issue.code) ?? { code: issue.code, count: 0, examples: [] };
    group.count++;
    if (group.examples.length < IMPORT_EXAMPLES)
      group.examples.push({ where: shorten(issue.where), message: shorten(issue.message) });
    groups.set(issue.code, group);
  }
  return [...groups.values()];
}

/** The results header's record of one import (`source` is the --dataset argument as given). */
export function importSummary(source: string, report: ImportReport): ImportSummary {
  const converter = CONVERTERS[report.dataset];
  return {
    source,
    unitsName: converter.units,
    units: report.units,
    scenarios: report.scenarios,
    itemsName: converter.itemsName,
    items: report.items,
    repairedItems: report.repairedItems,
    skippedItems: report.skippedItems,
    repaired: byCode(report.repaired),
    skipped: byCode(report.skipped),
  };
}
