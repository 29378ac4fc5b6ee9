/**
 * The longest scenario name: a name becomes file names (a chart's `tokens-NAME.png`, a cell's dir,
 * an import's YAML), which the file system caps at 255 bytes. Importers cut a longer dataset id to
 * it. A module of its own, without zod: the CLI's start reads it (importers/shared.ts) before any
 * schema loads.
 */
export const MAX_SCENARIO_NAME_CHARS = 96;

/** What a scenario's (or a generator spec's) name may hold: ASCII only, for it becomes file names. */
export const SCENARIO_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]*$/u;
/** The refusal of a name outside SCENARIO_NAME_PATTERN: "lower-case letters" alone reads as if 菜谱 were allowed. */
export const SCENARIO_NAME_RULE =
  'use ASCII lower-case letters a-z, digits 0-9, ".", "_" and "-" (a name becomes file names: other text, Chinese included, goes in description)';
