/** The cell an agent process opens, on the offline providers: for tests that drive agent processes by hand. */
import type { AgentCell } from '../../harness/process/protocol.js';
import { builtinStrategies } from '../../strategies/index.js';

/** A built-in strategy's cell in `dir` with its default durability, offline model, hashed embedder, seed 7. */
export function offlineAgentCell(dir: string, strategy = 'buffer', cellId = `test/${strategy}`): AgentCell {
  const definition = builtinStrategies.find((item) => item.name === strategy);
  if (!definition) throw new Error(`no built-in strategy ${strategy}`);
  return {
    cellId,
    strategy,
    options: {},
    durability: definition.defaultDurability,
    dir,
    model: 'offline',
    embedder: 'hashed',
    live: {},
    tokenizerModel: 'offline',
    seed: 7,
    sessionId: 'main',
    idempotencyKeys: true,
  };
}
