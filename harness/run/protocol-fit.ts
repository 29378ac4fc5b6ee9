/**
 * Where `--protocol` applies (docs/failing-loudly.md): a paper's protocol scores that paper's
 * dataset with the knobs its corpus needs, so a run it does not fit is refused before anything runs
 * instead of printing the paper's table over other data: another dataset's file, a built-in
 * scenario, a `--param` that contradicts a knob the protocol sets. A run with no retrieving
 * strategy gets a warning: it would print no table at all.
 */
import { MembenchError } from '../core/errors.js';
import { PROTOCOL_KNOBS, type Protocol } from '../results/protocols.js';
import type { Scenario } from '../scenarios/format.js';
import { parseDatasetArg } from '../scenarios/importers/index.js';
import { builtinStrategies } from '../../strategies/index.js';
import type { StrategyDefinition } from '../../strategies/types.js';
import { parseParamFlag } from './params.js';
import { checkProtocolOption } from './setting-values.js';

/** What each protocol scores, in words, and the dataset it is that paper's. */
const PAPER: Readonly<Record<Protocol, { name: string; scores: string }>> = {
  longmemeval: { name: 'LongMemEval', scores: "LongMemEval's retrieval (a corpus of user turns, has_answer gold)" },
  locomo: { name: 'LoCoMo', scores: "LoCoMo's retrieval (one utterance per document, dia_id evidence)" },
};

/** Why a protocol sets each knob it sets (PROTOCOL_KNOBS), so a contradicting `--param` is refused with the reason. */
const KNOB_REASONS: Readonly<Record<Protocol, Readonly<Record<string, string>>>> = {
  longmemeval: {
    index: "LongMemEval's corpus is the user turns alone",
    unit: 'LongMemEval ranks session documents and turns',
  },
  locomo: {
    unit: "LoCoMo's dialog recall ranks one utterance per document",
  },
};

export { checkProtocolOption };

/**
 * Refuses a `--param` giving a knob the protocol sets a value outside the protocol's
 * (`--protocol locomo -p bm25.unit=session` would rank sessions and label them LoCoMo's utterance recall).
 */
export function checkProtocolParams(protocol: Protocol, params: readonly string[]): void {
  for (const flag of params) {
    const { key, values } = parseParamFlag(flag);
    const allowed = PROTOCOL_KNOBS[protocol][key];
    if (allowed === undefined) continue;
    const wanted = allowed.split(',');
    const against = values.filter((value) => !wanted.includes(value));
    if (against.length === 0) continue;
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--param ${flag}: --protocol ${protocol} sets ${key}=${allowed} (${KNOB_REASONS[protocol][key] ?? `the protocol's ${key}`}); ${key}=${against.join(',')} would be scored and labelled as ${PAPER[protocol].name}'s figures: drop the --param, or drop --protocol to measure ${key}=${against.join(',')}`,
    );
  }
}

/** Refuses, before any import, a dataset of another format than the protocol's (`--protocol longmemeval --dataset locomo:F`). */
export function checkProtocolDatasets(protocol: Protocol, datasets: readonly string[]): void {
  const other = datasets.filter((arg) => parseDatasetArg(arg).dataset !== protocol);
  if (other.length === 0) return;
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `--protocol ${protocol} scores ${PAPER[protocol].scores}: it does not apply to --dataset ${other.join(', ')}: use --protocol ${parseDatasetArg(other[0]!).dataset} for that file, or drop --protocol`,
  );
}

/** Refuses a run holding a scenario that is not from the protocol's dataset (a built-in, a generated suite, another dataset's import). */
export function checkProtocolScenarios(
  protocol: Protocol,
  scenarios: readonly Pick<Scenario, 'name' | 'group' | 'source'>[],
  datasets: number,
): void {
  const misfits = scenarios.filter((scenario) => scenario.group?.startsWith(`${protocol}:`) !== true);
  if (misfits.length === 0) return;
  const origin = (scenario: Pick<Scenario, 'group' | 'source'>): string =>
    scenario.group !== undefined
      ? `from ${scenario.group}`
      : scenario.source.startsWith('builtin:')
        ? 'built-in'
        : scenario.source;
  const named = misfits.slice(0, 3).map((scenario) => `${scenario.name} (${origin(scenario)})`);
  const more = misfits.length > named.length ? ` and ${misfits.length - named.length} more` : '';
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `--protocol ${protocol} scores ${PAPER[protocol].scores}: it applies only to the questions of a ${PAPER[protocol].name} file (--dataset ${protocol}:FILE), not to ${named.join(', ')}${more}${datasets === 0 ? ' (the run names no --dataset)' : ''}: run ${misfits.length === 1 ? 'it' : 'them'} without --protocol`,
  );
}

/** Whether a strategy declares that it ranks what it keeps (the protocols score rankings). */
const retrieves = (definition: StrategyDefinition): boolean =>
  definition.ranks !== undefined || definition.kind === 'retrieval';

/** The warning for a protocol over strategies none of which ranks: no protocol table would be printed. */
export function noRetrieverWarning(protocol: Protocol, definitions: readonly StrategyDefinition[]): string | undefined {
  if (definitions.some(retrieves)) return undefined;
  const retrievers = builtinStrategies.filter(retrieves).map((definition) => definition.name);
  return `warning: --protocol ${protocol}: none of the run's strategies (${definitions.map((definition) => definition.name).join(', ')}) retrieves (declares \`ranks\`), so no ${PAPER[protocol].name} table will be printed: add a retrieving strategy (${retrievers.join(', ')})`;
}
