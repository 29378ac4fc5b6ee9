/**
 * The judging part of every report (docs/judging.md): which judges ran and what they cost, each
 * judge's accuracy per category beside the dataset's own score, the agreement of two judges
 * (2×2 counts, raw agreement, Cohen's κ), the answers they disagree on, and the ceiling an errata
 * list implies. Tables are built here once; console, report.md and report.html lay them out.
 */
import {
  accuracyByCategory,
  disagreements,
  judgeAgreement,
  judgedCategory,
  judgeLabel,
  judgePair,
  type Disagreement,
} from '../harness/results/agreement.js';
import { okCells } from '../harness/results/cells.js';
import { meanOf } from '../harness/results/recall.js';
import type { RunResult } from '../harness/results/schema.js';

/** One table of the judging section. */
export interface JudgingTable {
  title: string;
  note: string;
  head: string[];
  body: string[][];
}

const fixed = (value: number | null | undefined): string =>
  value === null || value === undefined ? '–' : value.toFixed(2);
const percent = (value: number | null): string => (value === null ? '–' : `${(value * 100).toFixed(1)} %`);

/** Who judged, with what prompts, at what cost (apart from the memory's and the answerer's tokens). */
function judgesTable(result: RunResult): JudgingTable | undefined {
  const judges = result.judges ?? [];
  if (judges.length === 0) return undefined;
  return {
    title: 'Judges',
    note: 'Judge calls are not memory cost: their tokens and requests are counted here, apart from the maintenance and answer tokens. Unparsed: replies that were neither yes nor no (left out of accuracy, never read as no).',
    head: ['judge', 'prompts', 'judged', 'unparsed', 'requests', 'cached', 'tokens'],
    body: judges.map((run) => [
      run.label,
      run.prompts,
      String(run.judged),
      String(run.unparsed),
      String(run.requests),
      String(run.cached),
      String(run.tokens),
    ]),
  };
}

/** Each judge's accuracy per category with its Wilson interval, and the dataset's own score (LoCoMo F1) beside it. */
function accuracyTable(result: RunResult): JudgingTable | undefined {
  const judges = (result.judges ?? []).map((run) => run.judge);
  if (judges.length === 0) return undefined;
  const ok = okCells(result.cells);
  const columns = judges.map((judge) => accuracyByCategory(ok, judge));
  const probes = ok.flatMap((cell) => cell.probes);
  const scored = probes.some((probe) => probe.answerF1 !== undefined);
  const f1 = (category: string): string => {
    const values = probes
      .filter((probe) => category === 'all' || judgedCategory(probe) === category)
      .flatMap((probe) => (probe.answerF1 === undefined ? [] : [probe.answerF1]));
    const mean = meanOf(values);
    return mean.mean === null ? '–' : `${fixed(mean.mean)} (n=${mean.n})`;
  };
  return {
    title: 'Answer accuracy by judge',
    note:
      "Every strategy setting pooled, per category (the dataset's own where it has one); 95 % Wilson intervals." +
      (judges.includes('offline') ? ' The offline judge is rules, not a model.' : '') +
      (scored
        ? " Dataset score: the dataset's own scoring of the same answers (LoCoMo: token F1 by its per-category rules, adversarial by abstention phrase)."
        : ''),
    head: ['category', ...judges.map((judge) => `${judgeLabel(judge)} [95% CI]`), ...(scored ? ['dataset score'] : [])],
    body: columns[0]!.map(({ category }, row) => [
      category,
      ...columns.map((column) => {
        const { accuracy } = column[row]!;
        const interval = accuracy.interval ? ` [${fixed(accuracy.interval.lo)}, ${fixed(accuracy.interval.hi)}]` : '';
        return accuracy.value === null
          ? '–'
          : `${fixed(accuracy.value)}${interval} (${accuracy.hits}/${accuracy.n})${accuracy.unparsed ? `, ${accuracy.unparsed} unparsed` : ''}`;
      }),
      ...(scored ? [f1(category)] : []),
    ]),
  };
}

/** How far the first two judges agree, per category. */
function agreementTable(result: RunResult): JudgingTable | undefined {
  const pair = judgePair(result);
  if (!pair) return undefined;
  const [a, b] = pair;
  return {
    title: `Judge agreement: ${judgeLabel(a)} (A) vs ${judgeLabel(b)} (B)`,
    note: "On the probes both judged yes or no. κ is Cohen's: agreement beyond what the two accuracies would give by chance (1 perfect, 0 chance; – when both judges said the same throughout). yes/no = A said yes, B said no.",
    head: ['category', 'n', 'acc A', 'acc B', 'agreement', 'κ', 'yes/yes', 'yes/no', 'no/yes', 'no/no', 'unparsed'],
    body: judgeAgreement(okCells(result.cells), a, b).map((row) => [
      row.category,
      String(row.n),
      fixed(row.accuracyA),
      fixed(row.accuracyB),
      fixed(row.agreement),
      fixed(row.kappa),
      String(row.counts.yesYes),
      String(row.counts.yesNo),
      String(row.counts.noYes),
      String(row.counts.noNo),
      String(row.unparsed),
    ]),
  };
}

/** The ceiling an errata list implies: the share of each category's questions whose original gold is right. */
function ceilingTable(result: RunResult): JudgingTable | undefined {
  const errata = result.errata ?? [];
  if (errata.length === 0) return undefined;
  const body = errata.flatMap((summary) => {
    const labels = Object.entries(summary.byLabel).sort(([x], [y]) => x.localeCompare(y));
    const total = labels.reduce(
      (sum, [, count]) => ({
        questions: sum.questions + count.questions,
        corrected: sum.corrected + count.corrected,
        dropped: sum.dropped + count.dropped,
      }),
      { questions: 0, corrected: 0, dropped: 0 },
    );
    return [...labels, ['all', total] as const].map(([label, count]) => [
      summary.file,
      label,
      String(count.questions),
      String(count.corrected),
      String(count.dropped),
      percent(count.questions ? (count.questions - count.corrected - count.dropped) / count.questions : null),
    ]);
  });
  return {
    title: 'Errata and the ceiling they imply',
    note: "Gold answers the errata call wrong, by the dataset's category: the run scored the corrected gold (and left dropped questions out). Ceiling: the best score a perfect system could get against the uncorrected gold.",
    head: ['errata', 'category', 'questions', 'corrected', 'dropped', 'ceiling'],
    body,
  };
}

/** The judging tables a run has (none for a run nobody judged and no errata touched). */
export function judgingTables(result: RunResult): JudgingTable[] {
  return [judgesTable(result), accuracyTable(result), agreementTable(result), ceilingTable(result)].filter(
    (table): table is JudgingTable => table !== undefined,
  );
}

/** The answers the first two judges disagree on (for report.html's collapsed list). */
export function judgeDisagreements(result: RunResult): { a: string; b: string; items: Disagreement[] } | undefined {
  const pair = judgePair(result);
  return pair
    ? { a: judgeLabel(pair[0]), b: judgeLabel(pair[1]), items: disagreements(okCells(result.cells), pair[0], pair[1]) }
    : undefined;
}
