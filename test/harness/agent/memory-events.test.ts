/**
 * What the agent loop tells a strategy besides the messages: the session number of each message
 * (the count of session boundaries before it, never a dataset's session id), and at a probe the
 * question alone as the retrieval query (a leading "[Current date: …]" stays in the model's prompt).
 */
import type { BaseMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { AgentSession } from '../../../harness/agent/loop.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { OfflineModel } from '../../../harness/models/offline.js';
import type { ChatRequest } from '../../../harness/models/types.js';
import type { Step } from '../../../harness/scenarios/format.js';
import type { LoadInput, MemoryEvent, MemoryStrategy } from '../../../strategies/types.js';

/** A whole history that records what it is told, kept across the session boundaries' reopen. */
function recording(): MemoryStrategy & { events: MemoryEvent[]; loads: LoadInput[] } {
  const events: MemoryEvent[] = [];
  const loads: LoadInput[] = [];
  return {
    capabilities: { persistent: false, explicitMemory: false, backgroundWork: false },
    events,
    loads,
    open: async () => undefined,
    close: async () => undefined,
    save: async (event: MemoryEvent) => {
      events.push(event);
    },
    load: async (input: LoadInput) => {
      loads.push(input);
      return { messages: events.map((event) => event.message) as BaseMessage[] };
    },
  };
}

const steps = [
  { kind: 'user', id: 'answer_x.t0', user: 'before any session', assistant: 'ok' },
  { kind: 'session', session: 'new' },
  { kind: 'user', id: 'answer_y.t0', user: 'first session', assistant: 'ok' },
  { kind: 'session', session: 'new' },
  { kind: 'user', id: 'z.t0', user: 'second session', assistant: 'ok' },
  {
    kind: 'probe',
    probe: '[Current date: 2023/05/30 (Tue) 23:40] What did I say first?',
    expect: ['x'],
    forbid: [],
    category: 'extraction',
    evidence: [],
  },
] as unknown as Step[];

describe('the events and queries the agent loop gives a strategy', () => {
  it('numbers sessions by the boundaries passed, and asks retrieval for the question without its date', async () => {
    const strategy = recording();
    const requests: ChatRequest[] = [];
    const offline = new OfflineModel();
    const model = {
      id: offline.id,
      offline: true,
      chat: async (request: ChatRequest) => (requests.push(request), offline.chat(request)),
    };
    const session = new AgentSession({ createStrategy: () => strategy, model, tokens: new TokenCounter('offline') });
    await session.start();
    await session.run(steps);
    await session.finish();
    expect(strategy.events.map((event) => [event.stepId, event.session])).toEqual([
      ['s0', 0],
      ['s0', 0],
      ['s2', 1],
      ['s2', 1],
      ['s4', 2],
      ['s4', 2],
    ]);
    expect(strategy.loads.at(-1)!.query).toBe('What did I say first?');
    const asked = requests
      .at(-1)!
      .messages.map((message) => String(message.content))
      .join('\n');
    expect(asked).toContain('[Current date: 2023/05/30 (Tue) 23:40] What did I say first?');
  });
});

describe('a session boundary', () => {
  /** Counts the lifecycle calls the loop makes; `newSession` answers `keepsOpen` (absent when undefined). */
  function lifecycle(keepsOpen: boolean | undefined) {
    const calls = { open: 0, close: 0, newSession: 0 };
    const strategy: MemoryStrategy = {
      capabilities: { persistent: true, explicitMemory: false, backgroundWork: false },
      open: async () => void calls.open++,
      close: async () => void calls.close++,
      save: async () => undefined,
      load: async () => ({ messages: [] }),
      ...(keepsOpen === undefined ? {} : { newSession: async () => (calls.newSession++, keepsOpen) }),
    };
    return { calls, strategy };
  }

  async function replay(keepsOpen: boolean | undefined, sessionsStayOpen: boolean) {
    const { calls, strategy } = lifecycle(keepsOpen);
    const session = new AgentSession({
      createStrategy: () => strategy,
      model: new OfflineModel(),
      tokens: new TokenCounter('offline'),
      sessionsStayOpen,
    });
    await session.start();
    await session.run(steps);
    await session.finish();
    return calls;
  }

  it('is newSession() on the open strategy where the deps ask for it and the strategy accepts', async () => {
    expect(await replay(true, true)).toEqual({ open: 1, close: 1, newSession: 2 });
  });

  it('closes and reopens where the strategy declines, has no newSession, or the deps do not ask', async () => {
    expect(await replay(false, true)).toEqual({ open: 3, close: 3, newSession: 2 });
    expect(await replay(undefined, true)).toEqual({ open: 3, close: 3, newSession: 0 });
    expect(await replay(true, false)).toEqual({ open: 3, close: 3, newSession: 0 });
  });
});
