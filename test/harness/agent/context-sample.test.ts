/**
 * A scripted turn needs no context: the loop assembles one only for turns in the cell's sample
 * (contextSample), at probes, and where the model writes the reply. The sample is systematic and
 * seeded by the scenario, so every strategy is measured on the same turns.
 */
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { AgentSession, contextSample } from '../../../harness/agent/loop.js';
import { OfflineModel } from '../../../harness/models/offline.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import type { Step } from '../../../harness/scenarios/format.js';
import type { LoadInput, MemoryEvent, MemoryStrategy } from '../../../strategies/types.js';

const scripted = (count: number): Step[] =>
  Array.from(
    { length: count },
    (_, index) => ({ kind: 'user', user: `question ${index}`, assistant: `answer ${index}` }) as Step,
  );

/** A whole history that records every load() it is asked for. */
function recording(): MemoryStrategy & { loads: LoadInput[] } {
  const messages: BaseMessage[] = [];
  const loads: LoadInput[] = [];
  return {
    capabilities: { persistent: false, explicitMemory: false, backgroundWork: false },
    loads,
    open: async () => undefined,
    close: async () => undefined,
    save: async (event: MemoryEvent) => {
      messages.push(event.message);
    },
    load: async (input: LoadInput) => {
      loads.push(input);
      return { messages: [...messages] };
    },
  };
}

describe('contextSample', () => {
  it('measures every scripted turn of a short scenario', () => {
    const steps = scripted(32);
    const measured = contextSample(steps, 'short', 32);
    expect(steps.every((_, index) => measured(index))).toBe(true);
  });

  it('measures at most `size` turns of a long one, evenly spaced, the same ones for the same scenario', () => {
    const steps = [...scripted(500), { kind: 'user', user: 'nobody answered', reply: false } as Step];
    const measured = contextSample(steps, 'long', 32);
    const chosen = steps.flatMap((_, index) => (measured(index) ? [index] : []));
    expect(chosen.length).toBeLessThanOrEqual(32);
    expect(chosen.length).toBeGreaterThanOrEqual(31);
    const gaps = chosen.slice(1).map((index, i) => index - chosen[i]!);
    expect(new Set(gaps)).toEqual(new Set([16])); // ⌈500 / 32⌉
    expect(chosen[0]).toBeLessThan(16);
    expect(steps.flatMap((_, index) => (contextSample(steps, 'long', 32)(index) ? [index] : []))).toEqual(chosen);
  });
});

describe('AgentSession with a context sample', () => {
  it('loads no context for scripted turns outside the sample, and still for the probe', async () => {
    const strategy = recording();
    const tokens = new TokenCounter('offline');
    const session = new AgentSession({
      createStrategy: () => strategy,
      model: new OfflineModel(),
      tokens,
      measureContext: (step) => step === 3,
    });
    await session.start();
    const steps: Step[] = [
      ...scripted(6),
      {
        kind: 'probe',
        probe: 'what was answer 2?',
        expect: ['answer 2'],
        forbid: [],
        category: 'extraction',
        evidence: [],
      } as Step,
    ];
    await session.run(steps);
    expect(strategy.loads.map((input) => input.query)).toEqual(['question 3', 'what was answer 2?']);
    const turns = session.turns.filter((turn) => turn.kind === 'user');
    expect(turns.map((turn) => turn.contextSkipped === true)).toEqual([true, true, true, false, true, true]);
    // The measured turn's context is the exact one: the three exchanges and the question before it.
    expect(turns[3]!.contextTokens).toBe(
      tokens.countMessages([
        ...steps
          .slice(0, 3)
          .flatMap((step) => [
            new HumanMessage((step as { user: string }).user),
            new AIMessage((step as { assistant: string }).assistant),
          ]),
        new HumanMessage('question 3'),
      ]),
    );
    // Every message is saved, sampled or not.
    expect(session.probes[0]!.contextRecall).toBe(true);
  });
});
