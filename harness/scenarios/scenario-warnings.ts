/**
 * What a valid scenario may hold on purpose but usually by mistake, warned about by the loader
 * (`validate` and `run` print it; the file still runs): a conversation nothing probes, and dates
 * that run backwards. Neither is refused: a token-growth or durability scenario may ask nothing, and
 * real datasets (LoCoMo) hold sessions dated before the one they follow, replayed as ordered.
 */
import type { Step } from './format.js';

/** A warning about a step (its path under `steps`) or the whole list (`[]`). */
export interface StepWarning {
  segments: (string | number)[];
  message: string;
}

/** The warnings of a scenario's top-level steps. */
export function scenarioWarnings(steps: readonly Step[]): StepWarning[] {
  return [...unprobed(steps), ...backwardDates(steps)];
}

/** Whether a step, or a step of one of its concurrent sessions, satisfies `test`. */
const holds = (step: Step, test: (step: Step) => boolean): boolean =>
  test(step) ||
  (step.kind === 'concurrent' && step.concurrent.some((session) => session.some((inner) => holds(inner, test))));

/**
 * No probe anywhere: the scenario scores no recall. One with a crash or concurrent sessions still
 * measures durability (its invariants), so only a scenario of neither is warned about.
 */
function unprobed(steps: readonly Step[]): StepWarning[] {
  if (steps.some((step) => holds(step, (inner) => ['probe', 'crash', 'concurrent'].includes(inner.kind)))) return [];
  return [
    {
      segments: ['steps'],
      message:
        'no probe: nothing asks what the memory kept, so the scenario scores no recall (only tokens and latency are measured): add a probe step',
    },
  ];
}

/**
 * A dated step (a session boundary or a message with `at`) dated before the dated step before it:
 * the conversation is replayed in the order of its steps, so the dates it shows run backwards.
 * Concurrent sessions run at once and are not compared.
 */
function backwardDates(steps: readonly Step[]): StepWarning[] {
  const warnings: StepWarning[] = [];
  let previous: { at: string; index: number } | undefined;
  steps.forEach((step, index) => {
    const at = step.kind === 'session' || step.kind === 'user' || step.kind === 'assistant' ? step.at : undefined;
    if (at === undefined) return;
    if (previous !== undefined && Date.parse(at) < Date.parse(previous.at))
      warnings.push({
        segments: ['steps', index, 'at'],
        message: `${at} is before steps[${previous.index}].at (${previous.at}): the dates run backwards (the steps are replayed in their order, as written)`,
      });
    previous = { at, index };
  });
  return warnings;
}
