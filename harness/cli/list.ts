/** `membench list strategies|scenarios`: what can be named on the command line. */
import type { Argv } from 'yargs';
import { handled } from './errors.js';
import { shortenText } from '../core/text.js';
import { strategyKnobs, type StrategyDefinition } from '../../strategies/types.js';

export const command = 'list <what>';
export const describe = 'List built-in strategies, or scenarios and generated suites';

export function builder(yargs: Argv) {
  return yargs.positional('what', {
    choices: ['strategies', 'scenarios'] as const,
    demandOption: true,
    describe: 'what to list',
  });
}

type ListArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

function knobs(definition: StrategyDefinition): string {
  const parts = strategyKnobs(definition).map(({ name, default: fallback }) => {
    if (fallback === undefined) return name;
    const shown = typeof fallback === 'object' ? JSON.stringify(fallback) : String(fallback);
    return `${name}=${shortenText(shown, 24)}`;
  });
  return parts.length ? parts.join(', ') : '—';
}

export const handler = handled(async (argv: ListArgs) => {
  if (argv.what === 'strategies') {
    const { builtinStrategies } = await import('../../strategies/index.js');
    for (const definition of builtinStrategies) {
      process.stdout.write(
        `${definition.name.padEnd(16)} ${definition.description}\n${''.padEnd(16)} knobs: ${knobs(definition)}; durability=${definition.defaultDurability}\n`,
      );
    }
    return;
  }
  const [{ builtinScenarioNames, builtinSuiteNames, loadScenarios }, { userTurns }] = await Promise.all([
    import('../scenarios/builtins.js'),
    import('../scenarios/filler.js'),
  ]);
  const suites = builtinSuiteNames();
  const { scenarios } = await loadScenarios(builtinScenarioNames().filter((name) => !suites.includes(name)));
  for (const scenario of scenarios) {
    process.stdout.write(
      `${scenario.name.padEnd(24)} ${String(scenario.steps.length).padStart(4)} steps  ${scenario.description ?? ''}\n`,
    );
  }
  for (const suite of suites) {
    const { scenarios: generated } = await loadScenarios([suite]);
    const parts = generated.map(
      (scenario) =>
        `${scenario.name} (${userTurns(scenario.steps)} exchanges, ${scenario.steps.filter((step) => step.kind === 'probe').length} probes)`,
    );
    process.stdout.write(
      `${suite.padEnd(24)} suite  generated in memory: ${parts.join(', ')}; membench generate ${suite} writes the files\n`,
    );
  }
});
