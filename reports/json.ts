/** results.json: the results as data, schema-versioned header, keys in the schema's order. */
import { asWrittenInItsVersion } from '../harness/results/read.js';
import { runResultSchema, type RunResult } from '../harness/results/schema.js';

/**
 * The results as written: through the schema, so keys come in its order whatever order the run
 * filled them in, and a file re-rendered from a parsed one (`membench report`) is byte-identical.
 * Results the schema would refuse are written as they are rather than lost (reading them back
 * then names the field).
 */
export function renderJson(result: RunResult): string {
  const canonical = runResultSchema.safeParse(result);
  return `${JSON.stringify(asWrittenInItsVersion(structuredClone(canonical.success ? canonical.data : result)), null, 2)}\n`;
}
