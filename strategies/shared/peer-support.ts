/**
 * What the peer adapters (strategies/adapters/) share: importing their optional packages with a
 * clear error when one is missing, and the exchange in flight (a user message, then what the
 * assistant says and does until the next user message), which each library stores once answered.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { MembenchError } from '../../harness/core/errors.js';
import type { MemoryEvent } from '../types.js';

const imports = new Map<string, Promise<unknown[]>>();

/**
 * Imports `specifiers` once per process (their names are variables, so TypeScript compiles without
 * the packages). A missing package is an UNKNOWN_STRATEGY error naming the strategy and the exact
 * `npm install -E` line (`packages`: name@version as pinned in package.json).
 */
export function importOptional(
  strategy: string,
  specifiers: readonly string[],
  packages: readonly string[],
): Promise<unknown[]> {
  const key = specifiers.join('\n');
  let loading = imports.get(key);
  if (!loading) {
    loading = Promise.all(specifiers.map((specifier: string) => import(specifier) as Promise<unknown>)).catch(
      (error: unknown) => {
        imports.delete(key);
        const code = (error as { code?: unknown } | null)?.code;
        if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
          throw new MembenchError(
            'UNKNOWN_STRATEGY',
            `strategy "${strategy}" needs the optional package${packages.length > 1 ? 's' : ''} ${packages.join(' and ')}: npm install -E ${packages.join(' ')}`,
          );
        }
        throw error;
      },
    );
    imports.set(key, loading);
  }
  return loading;
}

const isHuman = (message: BaseMessage): boolean => message.getType() === 'human';
const callsTools = (message: BaseMessage): boolean =>
  message.getType() === 'ai' && ((message as { tool_calls?: unknown[] }).tool_calls?.length ?? 0) > 0;

/** The exchange in flight, as the adapters hand it to their library. */
export class ExchangeInFlight {
  private events: MemoryEvent[] = [];
  private answered = false;

  /** True when `message` opens a new exchange while this one has a reply: store this one first. */
  endsBy(message: BaseMessage): boolean {
    return isHuman(message) && this.hasReply();
  }

  add(event: MemoryEvent): void {
    this.events.push(event);
    if (event.message.getType() === 'ai' && !callsTools(event.message)) this.answered = true;
  }

  /** Answered and not waiting on a tool result: before a load, it can be stored. */
  complete(): boolean {
    return this.answered && this.events.at(-1)?.message.getType() !== 'tool';
  }

  /** The assistant has said or done something in it. */
  hasReply(): boolean {
    return this.events.some((event) => !isHuman(event.message));
  }

  messages(): BaseMessage[] {
    return this.events.map((event) => event.message);
  }

  /** Its events, leaving it empty for the next exchange. */
  take(): MemoryEvent[] {
    const events = this.events;
    this.events = [];
    this.answered = false;
    return events;
  }
}

/** The scenario steps an exchange came from, once each. */
export const stepIdsOf = (events: readonly MemoryEvent[]): string[] => [
  ...new Set(events.flatMap((event) => (event.stepId !== undefined ? [event.stepId] : []))),
];
