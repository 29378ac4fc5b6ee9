/**
 * The harness's one wrapper around a strategy instance: a module that breaks the contract
 * (strategies/types.ts) is told so in words naming it, the method and what was wrong, instead of a
 * TypeError from deep inside the harness. Every cell's strategy goes through it, built-ins too, so
 * the per-call checks stay cheap: a type check per loaded message, nothing serialized unless wrong.
 */
import type { LoadInput, LoadResult, MemoryStrategy } from '../../strategies/types.js';
import { isMembenchError, MembenchError } from '../core/errors.js';
import { isRecord } from '../core/guards.js';

/** What every strategy must have (the rest of the contract is optional). */
const REQUIRED_METHODS = ['open', 'save', 'load', 'close'] as const;
const CONTRACT = `a strategy needs ${REQUIRED_METHODS.join(', ')}: see docs/own-strategy.md`;
const LOAD_RESULT = 'expected an object { messages: BaseMessage[], retrieved?: RetrievedItem[] }';

/** An error a strategy's method threw or rejected with, said with the method's name; `cause` is what it threw. */
export class StrategyCallError extends Error {
  constructor(
    label: string,
    readonly method: string,
    override readonly cause: unknown,
  ) {
    // A MembenchError is already worded for the user (a built-in's store problem): only the method is added.
    super(
      `${label}: ${method}() ${isMembenchError(cause) ? `failed: ${cause.message}` : `threw ${thrownText(cause)}`}`,
    );
    this.name = 'StrategyCallError';
  }
}

/** A thrown value in one line as Node names it: `Error: timer throw`, `TypeError: x is not a function`, `42`. */
export function thrownText(value: unknown): string {
  return value instanceof Error ? `${value.name}: ${value.message}` : String(value);
}

/** A wrong value, short: `"hello"`, `undefined`, `{"role":"user","content":"hi"}` (cut at 80 characters). */
function shown(value: unknown): string {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return String(value);
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

/**
 * The strategy `create` builds, checked once for the required methods and wrapped so that each
 * call's error names its method and each load's result is checked. `label` names the strategy as
 * `--strategy` gave it (`strategy buffer`, `strategy /home/me/last-turns.mjs`).
 */
export function checkedStrategy(label: string, create: () => MemoryStrategy): MemoryStrategy {
  let made: unknown;
  try {
    made = create();
  } catch (error) {
    throw new StrategyCallError(label, 'create', error);
  }
  if (made === null || typeof made !== 'object')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${label}: create() returned ${shown(made)}, not a strategy (${CONTRACT})`,
    );
  const strategy = made as MemoryStrategy;
  const missing = REQUIRED_METHODS.filter((method) => typeof strategy[method] !== 'function');
  if (missing.length > 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${label}: create() returned an object without ${missing.map((method) => `${method}()`).join(', ')} (${CONTRACT})`,
    );
  const failed = (method: string, error: unknown) => new StrategyCallError(label, method, error);
  const checked: MemoryStrategy = {
    get capabilities() {
      return strategy.capabilities;
    },
    async open() {
      try {
        await strategy.open();
      } catch (error) {
        throw failed('open', error);
      }
    },
    async save(event) {
      try {
        await strategy.save(event);
      } catch (error) {
        throw failed('save', error);
      }
    },
    async load(input: LoadInput) {
      let result: unknown;
      try {
        result = await strategy.load(input);
      } catch (error) {
        throw failed('load', error);
      }
      return checkedLoad(label, result);
    },
    async close() {
      try {
        await strategy.close();
      } catch (error) {
        throw failed('close', error);
      }
    },
  };
  // Optional members stay absent where the strategy has none: the harness asks `memory.remember` before using it.
  if (strategy.flush)
    checked.flush = async () => {
      try {
        await strategy.flush!();
      } catch (error) {
        throw failed('flush', error);
      }
    };
  if (strategy.newSession)
    checked.newSession = async () => {
      try {
        return await strategy.newSession!();
      } catch (error) {
        throw failed('newSession', error);
      }
    };
  // remember and forget pass as they are: a refused memory is a MembenchError the agent loop records (loop.ts).
  if (strategy.remember) checked.remember = strategy.remember.bind(strategy);
  if (strategy.forget) checked.forget = strategy.forget.bind(strategy);
  if (strategy.snapshot) checked.snapshot = strategy.snapshot.bind(strategy);
  if (strategy.verify) checked.verify = strategy.verify.bind(strategy);
  if (strategy.pendingJobs) checked.pendingJobs = strategy.pendingJobs.bind(strategy);
  if (strategy.unreadable) checked.unreadable = strategy.unreadable.bind(strategy);
  return checked;
}

/** load()'s result as the harness reads it, or a MembenchError naming the part that is not (strategies/types.ts LoadResult). */
export function checkedLoad(label: string, result: unknown): LoadResult {
  const wrong = (part: string, expected: string) =>
    new MembenchError('INVALID_ARGUMENT', `${label}: load() returned ${part}: ${expected}`);
  if (Array.isArray(result)) throw wrong('an array', `${LOAD_RESULT} (the messages go in its \`messages\`)`);
  if (!isRecord(result)) throw wrong(shown(result), LOAD_RESULT);
  const { messages, retrieved } = result;
  if (!Array.isArray(messages))
    throw wrong(
      `messages ${shown(messages)}`,
      'expected an array of LangChain BaseMessages (HumanMessage, AIMessage, …)',
    );
  for (let index = 0; index < messages.length; index++) {
    const message: unknown = messages[index];
    // What the harness calls on each message; a plain { role, content } object has no such method.
    if (typeof (message as { getType?: unknown } | null)?.getType !== 'function')
      throw wrong(
        `messages[${index}] ${shown(message)}`,
        'expected a LangChain BaseMessage (HumanMessage, AIMessage, …)',
      );
  }
  if (retrieved !== undefined) {
    if (!Array.isArray(retrieved))
      throw wrong(`retrieved ${shown(retrieved)}`, 'expected an array of { stepIds, score }, or no `retrieved`');
    for (let index = 0; index < retrieved.length; index++) {
      const item: unknown = retrieved[index];
      if (!Array.isArray((item as { stepIds?: unknown } | null)?.stepIds))
        throw wrong(`retrieved[${index}] ${shown(item)}`, 'expected { stepIds: string[], score: number }');
    }
  }
  return result as unknown as LoadResult;
}
