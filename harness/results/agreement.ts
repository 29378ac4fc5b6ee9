/**
 * Judged accuracy and how far two judges agree (docs/judging.md): per category (the dataset's own
 * label where the probe has one, else membench's category) each judge's accuracy with a Wilson
 * interval, the 2×2 counts of their verdicts, raw agreement and Cohen's κ, and the answers they
 * disagree on. Pure functions of results. Unparsed verdicts are counted, never read as a "no":
 * they leave a probe out of the accuracy and of the agreement table.
 */
import { rate, type Rate } from '../core/metrics.js';
import type { JudgeVerdict, OkCell, ProbeRecord, RunResult } from './schema.js';
import { wilsonInterval, type Interval } from './stats.js';

/** A judge's accuracy over the probes it judged yes or no, with its interval and what it could not read. */
export interface JudgedAccuracy extends Rate {
  interval: Interval | null;
  unparsed: number;
}

/** The 2×2 table of two judges' verdicts: `yesNo` = A said yes, B said no. */
export interface AgreementCounts {
  yesYes: number;
  yesNo: number;
  noYes: number;
  noNo: number;
}

export interface AgreementRow {
  category: string;
  /** Probes both judged yes or no. */
  n: number;
  counts: AgreementCounts;
  /** Each judge's accuracy on those n probes. */
  accuracyA: number | null;
  accuracyB: number | null;
  /** Share of the n probes with the same verdict. */
  agreement: number | null;
  /** Cohen's κ: agreement beyond what the two accuracies give by chance; null when chance agreement is 1 (both judges said the same thing throughout). */
  kappa: number | null;
  /** Probes at least one judge left unparsed (not in n). */
  unparsed: number;
}

/** How a judged figure is labelled: `offline judge`, `openai:gpt-4o judge`. */
export const judgeLabel = (judge: string): string => `${judge} judge`;

/** The category a judged figure is broken down by: the dataset's label, else membench's category. */
export const judgedCategory = (probe: Pick<ProbeRecord, 'category' | 'label'>): string => probe.label ?? probe.category;

/** A probe's verdict from one judge, if that judge ran on it. */
export function verdictOf(probe: ProbeRecord, judge: string): JudgeVerdict | undefined {
  return probe.judgements?.find((judgement) => judgement.judge === judge)?.verdict;
}

/** Accuracy of one judge's verdicts over `probes` (those it did not judge are left out). */
export function judgedAccuracy(probes: readonly ProbeRecord[], judge: string): JudgedAccuracy {
  const verdicts = probes.flatMap((probe) => {
    const verdict = verdictOf(probe, judge);
    return verdict === undefined ? [] : [verdict];
  });
  const read = rate(verdicts.filter((verdict) => verdict !== 'unparsed').map((verdict) => verdict === 'yes'));
  return {
    ...read,
    interval: wilsonInterval(read.hits, read.n),
    unparsed: verdicts.filter((verdict) => verdict === 'unparsed').length,
  };
}

/** Cohen's κ of a 2×2 table: (observed − chance agreement) / (1 − chance agreement). */
export function cohensKappa(counts: AgreementCounts): number | null {
  const n = counts.yesYes + counts.yesNo + counts.noYes + counts.noNo;
  if (n === 0) return null;
  const observed = (counts.yesYes + counts.noNo) / n;
  const aYes = (counts.yesYes + counts.yesNo) / n;
  const bYes = (counts.yesYes + counts.noYes) / n;
  const chance = aYes * bYes + (1 - aYes) * (1 - bYes);
  return chance === 1 ? null : (observed - chance) / (1 - chance);
}

function agreementRow(category: string, probes: readonly ProbeRecord[], a: string, b: string): AgreementRow {
  const counts: AgreementCounts = { yesYes: 0, yesNo: 0, noYes: 0, noNo: 0 };
  let unparsed = 0;
  for (const probe of probes) {
    const first = verdictOf(probe, a);
    const second = verdictOf(probe, b);
    if (first === undefined || second === undefined) continue;
    if (first === 'unparsed' || second === 'unparsed') {
      unparsed++;
      continue;
    }
    if (first === 'yes') counts[second === 'yes' ? 'yesYes' : 'yesNo']++;
    else counts[second === 'yes' ? 'noYes' : 'noNo']++;
  }
  const n = counts.yesYes + counts.yesNo + counts.noYes + counts.noNo;
  return {
    category,
    n,
    counts,
    accuracyA: n ? (counts.yesYes + counts.yesNo) / n : null,
    accuracyB: n ? (counts.yesYes + counts.noYes) / n : null,
    agreement: n ? (counts.yesYes + counts.noNo) / n : null,
    kappa: cohensKappa(counts),
    unparsed,
  };
}

/** Every probe of the cells, in order. */
const probesOf = (cells: readonly OkCell[]): ProbeRecord[] => cells.flatMap((cell) => cell.probes);

/** Agreement of judges `a` and `b` per category, then over all probes (`all`). */
export function judgeAgreement(cells: readonly OkCell[], a: string, b: string): AgreementRow[] {
  const probes = probesOf(cells);
  const categories = [...new Set(probes.map(judgedCategory))].sort();
  return [
    ...categories.map((category) =>
      agreementRow(
        category,
        probes.filter((probe) => judgedCategory(probe) === category),
        a,
        b,
      ),
    ),
    agreementRow('all', probes, a, b),
  ];
}

/** One judge's accuracy per category, then over all probes (`all`). */
export function accuracyByCategory(
  cells: readonly OkCell[],
  judge: string,
): { category: string; accuracy: JudgedAccuracy }[] {
  const probes = probesOf(cells);
  const categories = [...new Set(probes.map(judgedCategory))].sort();
  return [
    ...categories.map((category) => ({
      category,
      accuracy: judgedAccuracy(
        probes.filter((probe) => judgedCategory(probe) === category),
        judge,
      ),
    })),
    { category: 'all', accuracy: judgedAccuracy(probes, judge) },
  ];
}

/** An answer two judges disagree on (an unparsed verdict against a parsed one counts). */
export interface Disagreement {
  cell: string;
  category: string;
  question: string;
  gold: string;
  response: string;
  a: JudgeVerdict;
  b: JudgeVerdict;
}

export function disagreements(cells: readonly OkCell[], a: string, b: string): Disagreement[] {
  return cells.flatMap((cell) =>
    cell.probes.flatMap((probe) => {
      const first = verdictOf(probe, a);
      const second = verdictOf(probe, b);
      if (first === undefined || second === undefined || first === second || probe.answer === undefined) return [];
      const gold =
        probe.expect?.join(' / ') ??
        (probe.forbid?.length ? `(unanswerable; not: ${probe.forbid.join(' / ')})` : '(unanswerable)');
      return [
        {
          cell: cell.id,
          category: judgedCategory(probe),
          question: probe.question,
          gold,
          response: probe.answer,
          a: first,
          b: second,
        },
      ];
    }),
  );
}

/** The two judges agreement is reported for: the first two that ran (more are listed with their accuracy only). */
export function judgePair(result: RunResult): [string, string] | undefined {
  const judges = result.judges ?? [];
  return judges.length >= 2 ? [judges[0]!.judge, judges[1]!.judge] : undefined;
}
