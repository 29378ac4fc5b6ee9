/** The durability modes every persistent layer honours (docs/design.md §6); defined here so stores, results and the CLI share one list. */

/** When a write is durable: `sync` before acknowledging, `async` write-behind, `exit` on clean close, `none` never. */
export const DURABILITY_MODES = ['sync', 'async', 'exit', 'none'] as const;
export type DurabilityMode = (typeof DURABILITY_MODES)[number];
