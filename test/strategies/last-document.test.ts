/**
 * Every document ranked, the last included: a replayed conversation's final message with no reply
 * (LoCoMo: a dialog ending on an unanswered utterance, the last observation, the last session
 * summary) is indexed before a probe ranks, by `bm25` (both rankers), `vector` and `hybrid`,
 * under every unit.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { HumanMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { runBenchmark } from '../../harness/run/runner.js';
import { bm25 } from '../../strategies/bm25.js';
import { hybrid } from '../../strategies/hybrid.js';
import { vector } from '../../strategies/vector.js';
import type { StrategyDefinition } from '../../strategies/types.js';
import { exchange, strategyScratch } from './conformance.js';
import { allOk } from '../helpers/cells.js';
import { tempDir } from '../helpers/temp-dir.js';

/** A LoCoMo sample of two sessions, each ending on an utterance nobody answers; the last one is the evidence. */
const sample = {
  sample_id: 'conv-last',
  conversation: {
    speaker_a: 'Maya',
    speaker_b: 'Leo',
    session_1_date_time: '1:56 pm on 8 May, 2023',
    session_1: [
      { speaker: 'Maya', dia_id: 'D1:1', text: 'I read all weekend.' },
      { speaker: 'Leo', dia_id: 'D1:2', text: 'I went to the coast.' },
      { speaker: 'Maya', dia_id: 'D1:3', text: 'My sister moved to Lisbon.' },
    ],
    session_2_date_time: '10:00 am on 9 May, 2023',
    session_2: [
      { speaker: 'Leo', dia_id: 'D2:1', text: 'Work was hectic again.' },
      { speaker: 'Maya', dia_id: 'D2:2', text: 'I bought a violin.' },
      { speaker: 'Leo', dia_id: 'D2:3', text: 'My parrot is called Kiwi.' },
    ],
  },
  qa: [
    { question: 'What is the name of the parrot?', answer: 'Kiwi', evidence: ['D2:3'], category: 4 },
    { question: 'Where did the sister move?', answer: 'Lisbon', evidence: ['D1:3'], category: 4 },
  ],
  observation: {
    session_1_observation: { Maya: [['Maya has a sister in Lisbon.', 'D1:3']] },
    session_2_observation: { Leo: [['Leo has a parrot named Kiwi.', 'D2:3']] },
  },
  session_summary: {
    session_1_summary: 'Maya read; her sister moved to Lisbon.',
    session_2_summary: 'Leo had hectic work; his parrot is Kiwi.',
  },
};

describe('the last document of a replay is ranked', () => {
  it('LoCoMo: the final unanswered utterance, observation and summary are found; the paper ranker ranks every summary (recall@50 = 1)', async () => {
    const dir = await tempDir('membench-last-document-');
    const file = path.join(dir, 'locomo.json');
    await writeFile(file, JSON.stringify([sample]));
    const result = allOk(
      await runBenchmark({
        datasets: [`locomo:${file}`],
        strategies: ['bm25', 'vector', 'hybrid'],
        protocol: 'locomo',
      }),
    );
    const cells = result.cells.filter((cell) => cell.protocolRetrieval);
    // Dialog, observation and summary units of bm25 (two rankers), vector and hybrid.
    expect(cells).toHaveLength(12);
    for (const cell of cells) {
      const parrot = cell.probes.find((probe) => probe.protocolRetrieval && probe.step === cell.probes[0]!.step)!;
      // The parrot is in the last document of every unit's scenario: it is ranked, and ranked first.
      expect(parrot.retrieved?.[0], `${cell.setting} ${cell.protocolRetrieval!.documents ?? 'dialog'}`).toBeDefined();
      expect(parrot.protocolRetrieval!.turn.map((at) => at.recall)).toEqual([1, 1, 1, 1]);
    }
    const paperSummaries = cells.filter(
      (cell) => cell.options.ranker === 'okapi-paper' && cell.protocolRetrieval!.documents === 'summary',
    );
    expect(paperSummaries).toHaveLength(1);
    expect(paperSummaries[0]!.protocolRetrieval!.summary!.turn.atK.find((at) => at.k === 50)!.recall).toBe(1);
    expect(paperSummaries[0]!.probes.every((probe) => probe.retrieved?.length === 2)).toBe(true);
  });
});

const units = ['turn', 'session', 'message'] as const;
const retrievers: [StrategyDefinition, Record<string, unknown>][] = [
  [bm25, {}],
  [bm25, { ranker: 'okapi-paper' }],
  [vector, { exactBelow: 0 }],
  [hybrid, {}],
];

describe.each(retrievers)('%s: the exchange in progress at a probe', (definition, options) => {
  const scratch = strategyScratch(definition);
  it.each(units)('is indexed before the probe ranks (unit %s)', async (unit) => {
    const strategy = await scratch.open({ ...options, unit, recentExchanges: 0, k: 4 });
    await exchange(strategy, 1, 'I read all weekend.', 'Nice.');
    await exchange(strategy, 2, 'Work was hectic again.', 'Sorry to hear.');
    // The last message, saved with no reply: only a probe (a load of a later turn) comes after it.
    await strategy.save({ message: new HumanMessage('My parrot is called Kiwi.'), turn: 3, stepId: 'last' });
    const { retrieved } = await strategy.load({ query: 'parrot Kiwi', turn: 4, rankDepth: 10 });
    expect(retrieved![0]?.stepIds).toEqual([unit === 'message' ? 'lastu' : 'last']);
    await strategy.close();
  });

  it('a load of the turn whose user message is in progress does not rank that message', async () => {
    const strategy = await scratch.open({ ...options, recentExchanges: 0, k: 4 });
    await exchange(strategy, 1, 'I read all weekend.', 'Nice.');
    await strategy.save({ message: new HumanMessage('My parrot is called Kiwi.'), turn: 2, stepId: 'now' });
    const { retrieved } = await strategy.load({ query: 'My parrot is called Kiwi.', turn: 2, rankDepth: 10 });
    expect((retrieved ?? []).flatMap((item) => item.stepIds)).not.toContain('now');
    await strategy.close();
  });
});
