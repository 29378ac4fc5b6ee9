/** Per-probe verdicts pooled into a cell's recall summary, overall and by probe category. */
import { rate } from '../core/metrics.js';
import type { ProbeCategory } from '../scenarios/format.js';
import type { RecallSummary } from './schema.js';

export interface ProbeOutcome {
  category: ProbeCategory;
  contextRecall?: boolean | undefined;
  staleExposure: boolean;
  answerCorrect: boolean;
  evidenceCoverage?: number | null;
}

function meanOf(values: readonly number[]): { n: number; mean: number | null } {
  return { n: values.length, mean: values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : null };
}

/** Context recall leaves out abstention probes (they have no answer to recall). */
export function summarizeRecall(probes: readonly ProbeOutcome[]): RecallSummary {
  const answerable = probes.filter((probe) => probe.contextRecall !== undefined);
  return {
    contextRecall: rate(answerable.map((probe) => probe.contextRecall === true)),
    staleExposure: rate(answerable.map((probe) => probe.staleExposure)),
    answerAccuracy: rate(probes.map((probe) => probe.answerCorrect)),
    evidenceCoverage: meanOf(probes.flatMap((probe) => (typeof probe.evidenceCoverage === 'number' ? [probe.evidenceCoverage] : []))),
  };
}

export function recallByCategory(probes: readonly ProbeOutcome[]): Partial<Record<ProbeCategory, RecallSummary>> {
  const groups = new Map<ProbeCategory, ProbeOutcome[]>();
  for (const probe of probes) groups.set(probe.category, [...(groups.get(probe.category) ?? []), probe]);
  return Object.fromEntries([...groups].sort(([a], [b]) => a.localeCompare(b)).map(([category, group]) => [category, summarizeRecall(group)]));
}
