/**
 * Recall as a function of the distance between a fact and its probe (docs/design.md §7), per strategy
 * setting, in exchanges or in tokens, bucketed by powers of two (tables) or finer (the exchanges
 * chart): where window's K and summary-buffer's token limit show up as cliffs.
 */
import { rate } from '../core/metrics.js';
import { meanOf } from './recall.js';
import type { Rate } from '../core/metrics.js';
import type { Mean, OkCell } from './schema.js';

export type DistanceUnit = 'exchanges' | 'tokens';

/** A power-of-two bucket: 1, 2, 3–4, 5–8, … (`hi` inclusive). */
export interface DistanceBucket {
  lo: number;
  hi: number;
  label: string;
}

/** How finely distances are bucketed: by doubling (tables), or `fine` (charts): each distance up to 32, then four buckets per doubling. */
export type DistanceGrain = 'doubling' | 'fine';

/** The largest distance `fine` buckets one by one; beyond it each doubling is cut in four. */
const FINE_EXACT_UP_TO = 32;

export function distanceBucket(value: number, grain: DistanceGrain = 'doubling'): DistanceBucket {
  if (value <= 1) return { lo: 0, hi: 1, label: '≤1' };
  if (grain === 'fine') {
    if (value <= FINE_EXACT_UP_TO) return { lo: value, hi: value, label: String(value) };
    const top = 2 ** Math.ceil(Math.log2(value));
    const width = top / 2 / 4;
    const hi = top / 2 + width * Math.ceil((value - top / 2) / width);
    const lo = hi - width + 1;
    return { lo, hi, label: `${lo}–${hi}` };
  }
  const hi = 2 ** Math.ceil(Math.log2(value));
  const lo = hi / 2 + 1;
  return { lo, hi, label: lo === hi ? String(hi) : `${lo}–${hi}` };
}

export interface DistanceRow {
  setting: string;
  bucket: DistanceBucket;
  contextRecall: Rate;
  evidenceRecall: Mean;
}

/** One row per setting and bucket that has probes, buckets in increasing order; [] when no probe has a distance. */
export function recallByDistance(
  cells: readonly OkCell[],
  unit: DistanceUnit,
  grain: DistanceGrain = 'doubling',
): DistanceRow[] {
  const groups = new Map<string, { setting: string; bucket: DistanceBucket; recall: boolean[]; evidence: number[] }>();
  for (const cell of cells) {
    if (cell.pricing || cell.durabilityOutcome?.idempotencyKeys === false) continue;
    for (const probe of cell.probes) {
      if (!probe.distance || probe.contextRecall === undefined) continue;
      const bucket = distanceBucket(probe.distance[unit], grain);
      const key = `${cell.setting}|${bucket.hi}`;
      const group = groups.get(key) ?? { setting: cell.setting, bucket, recall: [], evidence: [] };
      group.recall.push(probe.contextRecall);
      if (probe.evidenceRecall !== null) group.evidence.push(probe.evidenceRecall);
      groups.set(key, group);
    }
  }
  return [...groups.values()]
    .sort((a, b) => a.setting.localeCompare(b.setting) || a.bucket.hi - b.bucket.hi)
    .map((group) => ({
      setting: group.setting,
      bucket: group.bucket,
      contextRecall: rate(group.recall),
      evidenceRecall: meanOf(group.evidence),
    }));
}
