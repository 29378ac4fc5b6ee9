/** Per-probe verdicts pooled into a cell's recall summary, overall, by probe category and by the dataset's own labels. */
import { rate } from '../core/metrics.js';
import type { ProbeCategory } from '../scenarios/format.js';
import type { Mean, ProbeRecord, RecallSummary } from './schema.js';

/** What pooling reads of a probe record (tests build these by hand). */
export type ProbeOutcome = Pick<ProbeRecord, 'category' | 'contextRecall' | 'staleExposure' | 'answerCorrect'> &
  Partial<
    Pick<
      ProbeRecord,
      'evidenceCoverage' | 'conflictExposure' | 'answerRecall' | 'evidenceRecall' | 'answerF1' | 'label'
    >
  >;

export function meanOf(values: readonly number[]): Mean {
  return {
    n: values.length,
    mean: values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : null,
  };
}

const numbers = (values: readonly (number | null | undefined)[]): number[] =>
  values.filter((value): value is number => typeof value === 'number');

/** The verdicts of the probes that were answered (a ranking-only cell answers none: its accuracy is empty, n 0, not 0 %). */
const answered = (probes: readonly ProbeOutcome[]): boolean[] =>
  probes.flatMap((probe) => (probe.answerCorrect === undefined ? [] : [probe.answerCorrect]));

/**
 * Recall figures over answerable probes; abstention probes (the answer was never given, as
 * LoCoMo's adversarial items) are left out of every recall and answer figure and score only
 * whether the answer declined (`abstention`).
 */
export function summarizeRecall(probes: readonly ProbeOutcome[]): RecallSummary {
  const answerable = probes.filter((probe) => probe.contextRecall !== undefined);
  const abstaining = probes.filter((probe) => probe.contextRecall === undefined);
  return {
    contextRecall: rate(answerable.map((probe) => probe.contextRecall === true)),
    staleExposure: rate(answerable.map((probe) => probe.staleExposure)),
    answerAccuracy: rate(answered(answerable)),
    evidenceCoverage: meanOf(numbers(answerable.map((probe) => probe.evidenceCoverage))),
    conflictExposure: rate(answerable.map((probe) => probe.conflictExposure === true)),
    answerRecall: meanOf(numbers(answerable.map((probe) => probe.answerRecall))),
    evidenceRecall: meanOf(numbers(answerable.map((probe) => probe.evidenceRecall))),
    abstention: rate(answered(abstaining)),
    // The dataset's own score covers its adversarial (abstention) items too, as LoCoMo's evaluation.py does.
    answerF1: meanOf(numbers(probes.map((probe) => probe.answerF1))),
  };
}

function groupBy<K extends string>(
  probes: readonly ProbeOutcome[],
  key: (probe: ProbeOutcome) => K | undefined,
): Record<K, RecallSummary> {
  const groups = new Map<K, ProbeOutcome[]>();
  for (const probe of probes) {
    const name = key(probe);
    if (name !== undefined) groups.set(name, [...(groups.get(name) ?? []), probe]);
  }
  return Object.fromEntries(
    [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([name, group]) => [name, summarizeRecall(group)]),
  ) as Record<K, RecallSummary>;
}

export function recallByCategory(probes: readonly ProbeOutcome[]): Partial<Record<ProbeCategory, RecallSummary>> {
  return groupBy(probes, (probe) => probe.category);
}

/** Recall by the dataset's own category labels; undefined when no probe carries one. */
export function recallByLabel(probes: readonly ProbeOutcome[]): Record<string, RecallSummary> | undefined {
  return probes.some((probe) => probe.label !== undefined) ? groupBy(probes, (probe) => probe.label) : undefined;
}
