/** Results with every measured time removed, for "equal apart from timing" checks across runs. */
import { withoutTiming, type RunResult } from '../../harness/results.js';

/**
 * withoutTiming, plus the durability prices' save percentiles (measured time that TIMING_KEYS
 * in harness/results.ts does not list yet).
 */
export function comparable(result: RunResult): RunResult {
  const stripped = withoutTiming(result);
  return { ...stripped, durabilityPrices: stripped.durabilityPrices.map(({ saveP50: _p50, saveP95: _p95, ...price }) => price as typeof price & { saveP50: number; saveP95: number }) };
}
