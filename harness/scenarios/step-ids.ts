/**
 * Ids a memory cannot read (DESIGN §5): a scenario's own step ids may name the evidence
 * (LongMemEval's `answer_…` session ids do), so strategies never see them. The agent loop hands a
 * strategy an opaque id per step instead, `s` and the step's position (a per-scenario sequence),
 * and the harness maps what a strategy ranked back to the scenario's message ids for the
 * retrieval metrics.
 */
import { memoLast } from '../core/memo.js';
import type { Step } from './format.js';

/** The opaque id the agent loop gives the messages of the step at `index`. */
export function opaqueStepId(index: number): string {
  return `s${index}`;
}

/**
 * The opaque id of one message of a step (`unit=message` documents): `s12u` the user message,
 * `s12r` the reply (or an assistant step's message). The harness maps it to that message's own id
 * when the step has a `replyId`, else to every id of the step.
 */
export function opaqueMessageId(stepId: string, reply: boolean): string {
  return `${stepId}${reply ? 'r' : 'u'}`;
}

/** The index the steps of a concurrent step's sessions run at (outer step `index`, session `session`, its `offset`-th step). */
export function concurrentStepIndex(index: number, session: number, offset: number): number {
  return index * 10_000 + session * 1_000 + offset;
}

/** The scenario's own ids of a step's messages: its id and, on a user step, its reply's id. */
export function messageIds(step: Step): string[] {
  return [
    ...(step.id !== undefined ? [step.id] : []),
    ...(step.kind === 'user' && step.replyId !== undefined ? [step.replyId] : []),
  ];
}

/**
 * Opaque id → the scenario's message ids of that step (steps without ids left out), concurrent
 * sessions included; a derived document's also names the ids it cites, as LoCoMo's code counts
 * the dia_ids of a retrieved observation or session summary.
 */
export const idsOfOpaque: (steps: readonly Step[]) => ReadonlyMap<string, readonly string[]> = memoLast(
  (steps: readonly Step[]): Map<string, string[]> => {
    const map = new Map<string, string[]>();
    const add = (step: Step, index: number): void => {
      const own = messageIds(step);
      if (own.length === 0) return;
      const ids = step.kind === 'user' && step.cites !== undefined ? [...own, ...step.cites] : own;
      const opaque = opaqueStepId(index);
      map.set(opaque, ids);
      const split = step.kind === 'user' && step.replyId !== undefined && step.id !== undefined;
      map.set(opaqueMessageId(opaque, false), split ? [step.id!] : ids);
      map.set(opaqueMessageId(opaque, true), split ? [step.replyId!] : ids);
    };
    steps.forEach((step, index) => {
      add(step, index);
      if (step.kind === 'concurrent')
        step.concurrent.forEach((session, s) =>
          session.forEach((inner, offset) => add(inner, concurrentStepIndex(index, s, offset))),
        );
    });
    return map;
  },
);
