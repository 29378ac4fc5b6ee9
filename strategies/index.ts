/** The registry: the only list of built-in strategies. CLI choices and `list strategies` come from here. */
import type { StrategyDefinition } from './types.js';
import { bm25 } from './bm25.js';
import { buffer } from './buffer.js';
import { entity } from './entity.js';
import { fileIndex } from './file-index.js';
import { hybrid } from './hybrid.js';
import { summary } from './summary.js';
import { summaryBuffer } from './summary-buffer.js';
import { vector } from './vector.js';
import { window } from './window.js';
import { BUILTIN_STRATEGY_NAMES } from './names.js';

export const builtinStrategies: readonly StrategyDefinition[] = [
  buffer,
  window,
  summary,
  summaryBuffer,
  vector,
  entity,
  fileIndex,
  bm25,
  hybrid,
];

// The light list the CLI describes its flags with (strategies/names.ts) must name these, in this order.
if (builtinStrategies.map((definition) => definition.name).join() !== BUILTIN_STRATEGY_NAMES.join())
  throw new Error('strategies/names.ts does not list the built-in strategies of strategies/index.ts in order');

export function findStrategy(name: string): StrategyDefinition | undefined {
  return builtinStrategies.find((definition) => definition.name === name);
}

export * from './types.js';
