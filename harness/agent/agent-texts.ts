/**
 * The texts an agent is given in a scenario: what the loop (loop.ts) turns a step into, for the
 * work a strategy prepares ahead of a cell (`preloadShared`).
 */
import { hasCjk } from '../core/text.js';
import { stepMessages } from '../scenarios/evidence.js';
import type { Step } from '../scenarios/format.js';

/** The exchange a `remember` step without a memory tool becomes: the user's request and the acknowledgement, in the memory's language. */
export function rememberExchange(content: string): { user: string; ack: string } {
  return hasCjk(content)
    ? { user: `请记住：${content}`, ack: '好的，我记住了。' }
    : { user: `Please remember: ${content}`, ack: "OK, I'll remember that." };
}

/** The exchange a `forget` step becomes for a strategy without `forget`. */
export function forgetExchange(target: string): { user: string; ack: string } {
  return hasCjk(target)
    ? { user: `请忘掉：${target}`, ack: '好的，已经忘掉了。' }
    : { user: `Please forget: ${target}`, ack: 'OK, forgotten.' };
}

/**
 * The texts of `steps` that an agent process is given: the messages each step puts into the
 * conversation (stepMessages), the exchanges the loop wraps memories in, the texts a strategy
 * indexes in their place, probe questions and choices, concurrent sessions' steps included; never
 * what a probe expects or cites as evidence. What a strategy's `preloadShared` may prepare ahead of the cell.
 */
export function agentTexts(steps: readonly Step[]): string[] {
  const texts: string[] = [];
  for (const step of steps) {
    texts.push(...stepMessages(step));
    const extra =
      step.kind === 'user'
        ? [step.indexText, step.replyIndexText]
        : step.kind === 'assistant'
          ? [step.indexText]
          : step.kind === 'remember'
            ? [step.name, step.description, ...Object.values(rememberExchange(step.remember))]
            : step.kind === 'forget'
              ? Object.values(forgetExchange(step.forget))
              : step.kind === 'probe'
                ? [step.probe, step.ask, ...(step.choices ?? [])]
                : step.kind === 'concurrent'
                  ? step.concurrent.flatMap((session) => agentTexts(session))
                  : [];
    for (const text of extra) if (text) texts.push(text);
  }
  return texts;
}
