/** results.json: the results as data, stable key order, schema-versioned header. */
import type { RunResult } from '../harness/results/schema.js';

export function renderJson(result: RunResult): string {
  return `${JSON.stringify(result, null, 2)}\n`;
}
