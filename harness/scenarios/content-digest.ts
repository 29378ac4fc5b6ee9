/**
 * Digests of scenarios whose content was already written out as JSON where they were made: an
 * imported dataset's questions, whose JSON the import writes anyway (its size check). The run's
 * plan digest (harness/run/plan.ts) feeds such a scenario's digest instead of walking its ~600 KB
 * of text again (a 500-question LongMemEval_S-shaped file: 1.5 s of the import's ~6 s, while the
 * workers wait). Kept by object: a scenario copied or changed later (stretched, renamed, its
 * fillers expanded) is a new object, walked as any other.
 */
import { createHash } from 'node:crypto';
import type { Scenario } from './format.js';

const digests = new WeakMap<Scenario, string>();

/** Records the digest of `scenario`, made from `json`: the JSON of everything it was made from but where it was read. */
export function noteContentDigest(scenario: Scenario, json: string): void {
  digests.set(scenario, createHash('sha256').update(json).digest('hex'));
}

/** The digest noteContentDigest recorded for this very object, if any. */
export function contentDigestOf(scenario: Scenario): string | undefined {
  return digests.get(scenario);
}
