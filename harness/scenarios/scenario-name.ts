/**
 * The longest scenario name: a name becomes file names (a chart's `tokens-NAME.png`, a cell's dir,
 * an import's YAML), which the file system caps at 255 bytes. Importers cut a longer dataset id to
 * it. A module of its own, without zod: the CLI's start reads it (importers/shared.ts) before any
 * schema loads.
 */
export const MAX_SCENARIO_NAME_CHARS = 96;
