/**
 * Strategies whose items are derived from what they were told (entity summaries, file-index
 * memories) rank them with the scenario step ids they came from, kept across a reopen.
 */
import { rm } from 'node:fs/promises';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { entity } from '../../strategies/entity.js';
import { fileIndex } from '../../strategies/file-index.js';
import type { MemoryStrategy } from '../../strategies/types.js';
import { makeHarness, type Harness } from './conformance.js';

let harness: Harness | undefined;
let opened: MemoryStrategy[] = [];
afterEach(async () => {
  for (const strategy of opened) await strategy.close().catch(() => undefined);
  opened = [];
  if (harness) await rm(harness.dir, { recursive: true, force: true });
});

async function start(definition: typeof entity | typeof fileIndex): Promise<MemoryStrategy> {
  harness ??= await makeHarness(definition);
  const strategy = harness.create();
  opened.push(strategy);
  await strategy.open();
  return strategy;
}

describe('ranked items carry the steps they were derived from', () => {
  it('entity: a summary lists the exchanges folded into it', async () => {
    harness = await makeHarness(entity);
    const strategy = await start(entity);
    await strategy.save({ message: new HumanMessage('My cat Mochi loves tuna.'), turn: 1, stepId: 'u1' });
    await strategy.save({ message: new AIMessage('Mochi sounds lovely.'), turn: 1 });
    await strategy.save({ message: new HumanMessage('Mochi also sleeps on the sofa.'), turn: 2, stepId: 'u2' });
    await strategy.save({ message: new AIMessage('Cute.'), turn: 2 });
    await strategy.close();
    const reopened = await start(entity);
    const { retrieved } = await reopened.load({ query: 'What does Mochi love?', turn: 3, rankDepth: 10 });
    expect(retrieved![0]!.stepIds).toEqual(['u1', 'u2']);
  });

  it('file-index: an explicit memory names its remember step, an automatic one its exchange', async () => {
    harness = await makeHarness(fileIndex);
    const strategy = await start(fileIndex);
    await strategy.remember!({ content: 'The garage code is 4711.', stepId: 'r1' });
    await strategy.save({ message: new HumanMessage('I am allergic to peanuts.'), turn: 1, stepId: 'u1' });
    await strategy.save({ message: new AIMessage('Noted, no peanuts.'), turn: 1 });
    await strategy.close();
    const reopened = await start(fileIndex);
    const garage = await reopened.load({ query: 'What is the garage code?', turn: 2, rankDepth: 10 });
    expect(garage.retrieved![0]!.stepIds).toEqual(['r1']);
    const allergy = await reopened.load({ query: 'What am I allergic to?', turn: 2, rankDepth: 10 });
    expect(allergy.retrieved![0]!.stepIds).toEqual(['u1']);
    expect((await reopened.load({ query: 'What am I allergic to?', turn: 2 })).retrieved).toBeUndefined();
  });
});
