/**
 * The generator's promise, checked on what it wrote: every expect string is in an evidence step
 * and in no message outside its plant; every forbid string was said earlier in the plant and
 * nowhere else; no question shows its own gold; an abstention subject is in no message at all;
 * and each probe sits at the distance it claims. The generator runs this on every conversation
 * (a failure is a bug in the bank, not in the spec), and the tests run it on tampered copies.
 */
import { normalizeText } from '../core/text.js';
import { stepMessages } from './evidence.js';
import type { PlantKind } from './generator-plants.js';
import type { ProbeStep, Scenario } from './format.js';

/** What a generated probe asks, beside its scenario step: for the gold check, the CLI summary and tests. */
export interface GeneratedProbe {
  id: string;
  kind: PlantKind | 'abstention';
  label: string;
  /** Exchanges from the fact's own exchange (the furthest evidence step) to the probe: 1 asks right after it; null for abstention. */
  distance: number | null;
  /** Ids of the plant's statements: its evidence and the rest (a distractor, earlier values). */
  plantSteps: string[];
  /** Abstention: strings that occur in no message of the conversation. */
  subjects: string[];
}

interface Said {
  id: string | undefined;
  texts: string[];
  /** User exchanges up to and including this step. */
  exchanges: number;
}

/** Problems with the gold of generated probes; empty when the promise holds. */
export function goldProblems(scenario: Scenario, probes: readonly GeneratedProbe[]): string[] {
  const said: Said[] = [];
  const probeSteps = new Map<string, { step: ProbeStep; exchangesBefore: number }>();
  let exchanges = 0;
  for (const step of scenario.steps) {
    if (step.kind === 'user' || step.kind === 'remember' || step.kind === 'forget') exchanges++;
    if (step.kind === 'probe' && step.id !== undefined) probeSteps.set(step.id, { step, exchangesBefore: exchanges });
    const texts = stepMessages(step).map(normalizeText);
    if (texts.length > 0) said.push({ id: step.id, texts, exchanges });
  }
  const byId = new Map(said.flatMap((item) => (item.id === undefined ? [] : [[item.id, item] as const])));
  const holders = new Map<string, Said[]>();
  const whereSaid = (needle: string): Said[] => {
    let found = holders.get(needle);
    if (!found) holders.set(needle, (found = said.filter((item) => item.texts.some((text) => text.includes(needle)))));
    return found;
  };

  const problems: string[] = [];
  for (const info of probes) {
    const entry = probeSteps.get(info.id);
    if (!entry) {
      problems.push(`${info.id}: no probe step has this id`);
      continue;
    }
    const { step } = entry;
    const problem = (message: string): number => problems.push(`${info.id}: ${message}`);
    const question = normalizeText(step.probe);
    for (const gold of [...(step.expect ?? []), ...step.forbid])
      if (question.includes(normalizeText(gold))) problem(`the question shows its gold "${gold}"`);
    if (info.kind === 'abstention') {
      if (step.expect !== undefined) problem('an abstention probe has an expect');
      for (const subject of info.subjects)
        for (const holder of whereSaid(normalizeText(subject)))
          problem(`never-stated "${subject}" is said in ${holder.id ?? `the exchange ${holder.exchanges}`}`);
      continue;
    }
    const own = new Set(info.plantSteps);
    const outside = (needle: string): Said[] =>
      whereSaid(needle).filter((holder) => holder.id === undefined || !own.has(holder.id));
    for (const gold of step.expect ?? []) {
      const needle = normalizeText(gold);
      if (!step.evidence.some((id) => byId.get(id)?.texts.some((text) => text.includes(needle))))
        problem(`expect "${gold}" is in none of its evidence steps`);
      for (const holder of outside(needle))
        problem(`expect "${gold}" is also said in ${holder.id ?? `the exchange ${holder.exchanges}`}`);
    }
    const anchor = Math.max(...step.evidence.map((id) => byId.get(id)?.exchanges ?? Number.NaN));
    const furthest = Math.min(...step.evidence.map((id) => byId.get(id)?.exchanges ?? Number.NaN));
    for (const gold of step.forbid) {
      const needle = normalizeText(gold);
      if (
        !whereSaid(needle).some((holder) => holder.id !== undefined && own.has(holder.id) && holder.exchanges <= anchor)
      )
        problem(`forbid "${gold}" is not said in the plant before the probe`);
      for (const holder of outside(needle))
        problem(`forbid "${gold}" is also said in ${holder.id ?? `the exchange ${holder.exchanges}`}`);
    }
    const distance = entry.exchangesBefore - furthest + 1;
    if (distance !== info.distance) problem(`asked ${distance} exchanges after its fact, not ${info.distance}`);
  }
  return problems;
}
