/**
 * How far back each probe's evidence lies (docs/design.md §7: recall as a function of distance): in
 * exchanges (user, remember and forget steps, each one turn of the conversation) and in tokens
 * (the scripted text saved after the evidence, before the probe). Computed from the scenario
 * alone, so every strategy's probes are measured against the same yardstick.
 */
import { stepMessages } from './evidence.js';
import type { Step } from './format.js';

/** A probe's distance to its furthest evidence step. */
export interface ProbeDistance {
  /** Exchanges from the evidence step's to the probe: 1 when the evidence is in the last exchange. */
  exchanges: number;
  /** Tokens of the conversation saved after the evidence step (scripted text; model-written replies are not known in advance). */
  tokens: number;
}

const TURN_KINDS: ReadonlySet<Step['kind']> = new Set(['user', 'remember', 'forget']);

/** Probe step index → its distance, for probes whose evidence precedes them at the top level. */
export function probeDistances(
  steps: readonly Step[],
  countText: (text: string) => number,
): Map<number, ProbeDistance> {
  const at = new Map<string, { exchange: number; tokens: number }>();
  const distances = new Map<number, ProbeDistance>();
  let exchange = 0;
  let tokens = 0;
  steps.forEach((step, index) => {
    if (step.kind === 'probe') {
      const sources = step.evidence.flatMap((id) => at.get(id) ?? []);
      if (sources.length === 0) return;
      const furthest = sources.reduce((a, b) => (b.exchange < a.exchange ? b : a));
      distances.set(index, { exchanges: exchange - furthest.exchange + 1, tokens: tokens - furthest.tokens });
      return;
    }
    if (TURN_KINDS.has(step.kind)) exchange++;
    for (const text of stepMessages(step)) tokens += countText(text);
    if (step.id !== undefined && !at.has(step.id)) at.set(step.id, { exchange: Math.max(exchange, 1), tokens });
  });
  return distances;
}
