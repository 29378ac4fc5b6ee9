/**
 * "Held" means held: on a long chatty conversation in which every message carries the
 * same boilerplate sentences and one message holds each fact, window(k=2) holds (almost) none of
 * the early evidence and buffer all of it; and for strategies that keep messages verbatim, an
 * evidence message counts as held exactly when its text is in the context the strategy loaded
 * (a seeded loop over random conversations, contexts captured from the real strategies).
 */
import { describe, expect, it } from 'vitest';
import type { BaseMessage } from '@langchain/core/messages';
import { AgentSession } from '../../../harness/agent/loop.js';
import { contextMessages } from '../../../harness/core/metrics.js';
import { normalizeText } from '../../../harness/core/text.js';
import { OfflineModel } from '../../../harness/models/offline.js';
import { stepMessages } from '../../../harness/scenarios/evidence.js';
import type { Step } from '../../../harness/scenarios/format.js';
import { findStrategy, type MemoryStrategy } from '../../../strategies/index.js';
import { makeHarness } from '../../strategies/conformance.js';
import { seededRandom } from '../../../harness/core/random.js';

const BOILERPLATE = [
  'Thanks so much for sharing that, it really means a lot to me and I appreciate you telling me about your day.',
  'I hope the rest of your week goes well and that you get some time to rest and relax with the people you love.',
  'Let me know if there is anything else you would like to talk about, I am always happy to chat with you.',
];

const FACTS = [
  'my cousin Rosalind breeds alpacas near Tromsø',
  'the spare key hides under the blue ceramic frog',
  'Dr Okonkwo moved my appointment to the ninth of March',
  'our team mascot is a stuffed pangolin called Mortimer',
  'I paid 4,870 crowns for the vintage accordion',
];

/**
 * `exchanges` chatty exchanges; exchange `at[i]` states FACTS[i] among the boilerplate (its user
 * message is the evidence); probes after the last exchange ask about each fact.
 */
function chattyConversation(exchanges: number, at: readonly number[], seed = 1): Step[] {
  const next = seededRandom(seed);
  const chat = (): string =>
    BOILERPLATE.map((sentence) => (next() < 0.5 ? sentence : sentence.replace('really ', ''))).join(' ');
  const steps: Step[] = [];
  for (let i = 0; i < exchanges; i++) {
    const fact = at.indexOf(i);
    const user =
      fact >= 0 ? `${chat()} By the way, ${FACTS[fact]}. ${chat()}` : `${chat()} Today was ordinary, number ${i}.`;
    steps.push({ kind: 'user', id: `x${i}`, user, assistant: `${chat()} That was reply number ${i}.` } as Step);
  }
  at.forEach((position, fact) =>
    steps.push({
      kind: 'probe',
      probe: `What did I say about ${FACTS[fact]!.split(' ').slice(-2).join(' ')}?`,
      forbid: [],
      category: 'extraction',
      evidence: [`x${position}`],
    } as unknown as Step),
  );
  return steps;
}

/** Replays `steps` with a built-in strategy and returns the session and each probe's context as the strategy loaded it. */
async function replay(
  name: string,
  options: Record<string, unknown>,
  steps: readonly Step[],
): Promise<{ session: AgentSession; contexts: BaseMessage[][] }> {
  const definition = findStrategy(name)!;
  const harness = await makeHarness(definition, options);
  const contexts: BaseMessage[][] = [];
  const watched = (strategy: MemoryStrategy): MemoryStrategy =>
    Object.assign(Object.create(strategy) as MemoryStrategy, {
      load: async (input: Parameters<MemoryStrategy['load']>[0]) => {
        const result = await strategy.load(input);
        if (input.rankDepth !== undefined) contexts.push(result.messages);
        return result;
      },
    });
  const session = new AgentSession({
    model: new OfflineModel(),
    tokens: harness.tokens,
    keepsVerbatim: definition.keepsVerbatim !== false,
    createStrategy: () => watched(harness.create('none')),
  });
  await session.start();
  await session.run(steps);
  await session.finish();
  return { session, contexts };
}

const mean = (values: readonly (number | null | undefined)[]): number =>
  values.reduce<number>((sum, value) => sum + (value ?? 0), 0) / values.length;

describe('evidence held means held', () => {
  it('on a long chatty conversation window(k=2) holds at most 5 % of the early evidence and buffer all of it', async () => {
    const steps = chattyConversation(60, [3, 11, 20, 34, 47]);
    const window = await replay('window', { k: 2 }, steps);
    const buffer = await replay('buffer', {}, steps);
    expect(window.session.probes).toHaveLength(5);
    expect(mean(window.session.probes.map((probe) => probe.evidenceRecall))).toBeLessThanOrEqual(0.05);
    expect(mean(buffer.session.probes.map((probe) => probe.evidenceRecall))).toBe(1);
    // The union of content words is everywhere in window's chatty context: a secondary figure only.
    expect(mean(window.session.probes.map((probe) => probe.evidenceCoverage))).toBeGreaterThan(0.5);
  });

  it('for strategies that keep messages verbatim, an evidence message is held iff its text is in the context', async () => {
    let probes = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const next = seededRandom(seed * 7919);
      const exchanges = 8 + Math.floor(next() * 20);
      const at = [...new Set(Array.from({ length: 3 }, () => Math.floor(next() * exchanges)))];
      const steps = chattyConversation(exchanges, at, seed);
      const cited = new Map(
        steps.flatMap((step) =>
          step.id === undefined ? [] : [[step.id, stepMessages(step).map(normalizeText)] as const],
        ),
      );
      const cases: [string, Record<string, unknown>][] = [
        ['window', { k: 1 + Math.floor(next() * 4) }],
        ['buffer', {}],
        ['bm25', { k: 1 + Math.floor(next() * 3), recentExchanges: 0 }],
        ['vector', { k: 2, recentExchanges: 1 }],
      ];
      for (const [name, options] of cases) {
        const { session, contexts } = await replay(name, options, steps);
        session.probes.forEach((probe, index) => {
          const context = contextMessages(contexts[index]!);
          const step = steps[probe.step] as Extract<Step, { kind: 'probe' }>;
          const present = step.evidence.map((id) =>
            cited.get(id)!.some((text) => context.some((message) => message.includes(text))),
          );
          expect(probe.evidenceFindings, `${name} seed ${seed} probe ${index}`).toEqual(
            present.map((held) => (held ? 'verbatim' : 'missing')),
          );
          probes++;
        });
      }
    }
    expect(probes).toBeGreaterThan(40);
  });
});
