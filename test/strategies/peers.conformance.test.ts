/** The shared conformance suite on the peer adapters (mem0, LangGraph), loaded as the CLI loads them. */
import { loadStrategyDefinition, PEER_NAMES } from '../../strategies/loader.js';
import { expectTempDirsRemoved } from '../helpers/temp-dirs.js';
import { describeConformance } from './conformance.js';

expectTempDirsRemoved();

for (const name of PEER_NAMES) describeConformance(await loadStrategyDefinition(name));
