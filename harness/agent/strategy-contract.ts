/**
 * The strategy contract (strategies/types.ts) checked where a user's module could break it in a
 * way the harness would otherwise meet as a TypeError from deep inside (`this.memory.load is not a
 * function`, `message.getType is not a function`): what `create()` returned, once, and what each
 * `load()` returned. Neither wraps the strategy: the harness keeps calling the object `create()`
 * made, so no call gains an await (a wrapper's await moved an async strategy's write-behind against
 * the crash points, and a durability verdict with it).
 */
import type { LoadResult, MemoryStrategy } from '../../strategies/types.js';
import { errorMessage, MembenchError } from '../core/errors.js';
import { shownValue } from '../core/user-input.js';
import { isRecord } from '../core/guards.js';

/** What every strategy must have (the rest of the contract is optional). */
const REQUIRED_METHODS = ['open', 'save', 'load', 'close'] as const;
const CONTRACT = `a strategy needs ${REQUIRED_METHODS.join(', ')}: see docs/own-strategy.md`;
const LOAD_RESULT = 'expected an object { messages: BaseMessage[], retrieved?: RetrievedItem[] }';

/** How each checked strategy is named in its refusals (`strategy buffer`, `strategy /home/me/last-turns.mjs`). */
const labels = new WeakMap<object, string>();

/** A thrown value in one line as Node names it: `Error: timer throw`, `TypeError: x is not a function`, `42`. */
export function thrownText(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}` : errorMessage(value);
}

/**
 * What `create()` returned, refused unless it is an object with every required method; `label` names
 * the strategy as `--strategy` gave it. Returns the same object.
 */
export function checkedStrategy(label: string, made: unknown): MemoryStrategy {
  if (made === null || typeof made !== 'object')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${label}: create() returned ${shownValue(made, 80)}, not a strategy (${CONTRACT})`,
    );
  const missing = REQUIRED_METHODS.filter((method) => typeof (made as Record<string, unknown>)[method] !== 'function');
  if (missing.length > 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${label}: create() returned an object without ${missing.map((method) => `${method}()`).join(', ')} (${CONTRACT})`,
    );
  labels.set(made, label);
  return made as MemoryStrategy;
}

/**
 * What `strategy.load()` returned, as the harness reads it, or a MembenchError naming the part that
 * is not (a type check per message and per retrieved item: it runs at every load of every cell).
 */
export function checkedLoad(strategy: MemoryStrategy, result: unknown): LoadResult {
  const label = labels.get(strategy) ?? 'the strategy';
  const wrong = (part: string, expected: string) =>
    new MembenchError('INVALID_ARGUMENT', `${label}: load() returned ${part}: ${expected}`);
  if (Array.isArray(result)) throw wrong('an array', `${LOAD_RESULT} (the messages go in its \`messages\`)`);
  if (!isRecord(result)) throw wrong(shownValue(result, 80), LOAD_RESULT);
  const { messages, retrieved } = result;
  if (!Array.isArray(messages))
    throw wrong(
      `messages ${shownValue(messages, 80)}`,
      'expected an array of LangChain BaseMessages (HumanMessage, AIMessage, …)',
    );
  for (let index = 0; index < messages.length; index++) {
    const message: unknown = messages[index];
    // What the harness calls on each message; a plain { role, content } object has no such method.
    if (typeof (message as { getType?: unknown } | null)?.getType !== 'function')
      throw wrong(
        `messages[${index}] ${shownValue(message, 80)}`,
        'expected a LangChain BaseMessage (HumanMessage, AIMessage, …)',
      );
  }
  if (retrieved !== undefined) {
    if (!Array.isArray(retrieved))
      throw wrong(
        `retrieved ${shownValue(retrieved, 80)}`,
        'expected an array of { stepIds, score }, or no `retrieved`',
      );
    for (let index = 0; index < retrieved.length; index++) {
      const item: unknown = retrieved[index];
      if (!Array.isArray((item as { stepIds?: unknown } | null)?.stepIds))
        throw wrong(`retrieved[${index}] ${shownValue(item, 80)}`, 'expected { stepIds: string[], score: number }');
    }
  }
  return result as unknown as LoadResult;
}
