/**
 * The texts an agent is given in a scenario: what the loop (loop.ts) turns a step into, for the
 * work a strategy prepares ahead of a cell (`preloadShared`).
 */
import { hasCjk } from '../core/text.js';
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
 * The texts of `steps` that an agent process is given (messages, memories, tool calls and results,
 * probe questions and choices; concurrent sessions' steps included), never what a probe expects or
 * cites as evidence: what a strategy's `preloadShared` may prepare ahead of the cell.
 */
export function agentTexts(steps: readonly Step[]): string[] {
  const texts: string[] = [];
  const add = (...values: (string | undefined)[]): void => {
    for (const value of values) if (value) texts.push(value);
  };
  for (const step of steps) {
    switch (step.kind) {
      case 'user':
        add(step.user, step.assistant, step.indexText, step.replyIndexText);
        break;
      case 'assistant':
        add(step.assistant, step.indexText);
        break;
      case 'tool':
        add(
          step.tool,
          JSON.stringify(step.args),
          typeof step.result === 'string' ? step.result : JSON.stringify(step.result),
        );
        break;
      case 'remember': {
        const exchange = rememberExchange(step.remember);
        add(step.remember, step.name, step.description, exchange.user, exchange.ack);
        break;
      }
      case 'forget': {
        const exchange = forgetExchange(step.forget);
        add(step.forget, exchange.user, exchange.ack);
        break;
      }
      case 'probe':
        add(step.probe, step.ask, ...(step.choices ?? []));
        break;
      case 'concurrent':
        for (const session of step.concurrent) texts.push(...agentTexts(session));
        break;
      default:
        break;
    }
  }
  return texts;
}
