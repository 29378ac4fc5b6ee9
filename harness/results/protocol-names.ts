/**
 * The papers' retrieval protocols `--protocol` reproduces (harness/results/protocols.ts), apart from
 * the results schema that validates them: an agent process needs the names, not the schema, and
 * every zod schema its modules build is deserialized again by each agent process from its startup
 * snapshot (the results and scenario schemas are ~380 of them).
 */
export const PROTOCOLS = ['longmemeval', 'locomo'] as const;
export type Protocol = (typeof PROTOCOLS)[number];
