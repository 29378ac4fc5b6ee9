/** What `membench tune --metric` accepts, apart from the sweep's code so the CLI can describe the flag without loading a run. */
import type { CellTokens } from '../results/schema.js';

/** Token figures a setting's cost can be measured in (summed over scenarios, averaged over trials). */
export const TUNE_METRICS = [
  'contextTotal',
  'contextMeanPerTurn',
  'contextMax',
  'maintenance',
  'answer',
  'reply',
] as const satisfies readonly (keyof CellTokens)[];
export type TuneMetric = (typeof TUNE_METRICS)[number];
