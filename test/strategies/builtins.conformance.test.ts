/** Runs the shared conformance suite once per registered built-in strategy. */
import { builtinStrategies } from '../../strategies/index.js';
import { describeConformance } from './conformance.js';

for (const definition of builtinStrategies) describeConformance(definition);
