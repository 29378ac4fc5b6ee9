/**
 * The metrics on a long conversation in the LoCoMo format (generated here, 12 dated sessions of
 * 21 turns, so every session ends on an unanswered utterance): window(k=2) holds none of the
 * early evidence and buffer all of it; buffer recalls the dates temporal questions ask for,
 * because the session dates are in its context; no model-written reply enters the replay.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../harness/run/runner.js';
import type { OkCell, RunResult } from '../../../harness/results/schema.js';
import { ok } from '../../helpers/cells.js';
import { tempDir } from '../../helpers/temp-dir.js';

const SPEAKERS = ['Caroline', 'Melanie'] as const;
const CHAT = [
  'The weather was lovely this morning.',
  'I tried a new lasagne recipe last night.',
  'Our tomatoes are finally turning red.',
  'We watched an old western on Friday.',
  'Work has been hectic with the product launch.',
  'The concert downtown was louder than I expected.',
  'My knee hurts a bit after the long run.',
  'Have you read anything good recently?',
  'The bakery on the corner closed for the holidays.',
  'I finally fixed the squeaky bike brakes.',
  'We are thinking about repainting the kitchen blue.',
  'Traffic on the bridge was terrible today.',
  'My sister sent photos from her trip to Norway.',
];

/** A LoCoMo-format sample: `sessions` dated sessions of `turns` utterances, the facts asked about in session 1. */
function sample(sessions: number, turns: number): unknown {
  const conversation: Record<string, unknown> = { speaker_a: SPEAKERS[0], speaker_b: SPEAKERS[1] };
  for (let s = 1; s <= sessions; s++) {
    const day = 8 + 3 * (s - 1);
    conversation[`session_${s}_date_time`] = `1:56 pm on ${day} May, 2023`;
    conversation[`session_${s}`] = Array.from({ length: turns }, (_, t) => {
      const speaker = SPEAKERS[t % 2]!;
      const facts: Record<string, string> = {
        '1:1': 'I went to an LGBTQ support group yesterday and it was so powerful.',
        '1:2': 'That sounds wonderful. I signed up for a pottery class with my kids.',
        '1:3': 'I have been researching adoption agencies lately.',
      };
      const text = facts[`${s}:${t + 1}`] ?? CHAT[(s * 7 + t) % CHAT.length]!;
      return { speaker, dia_id: `D${s}:${t + 1}`, text };
    });
  }
  return {
    sample_id: 'conv-long',
    conversation,
    qa: [
      {
        question: 'When did Caroline go to the LGBTQ support group?',
        answer: '7 May 2023',
        evidence: ['D1:1'],
        category: 2,
      },
      {
        question: 'What did Melanie sign up for with her kids?',
        answer: 'pottery class',
        evidence: ['D1:2'],
        category: 4,
      },
      { question: 'What has Caroline been researching?', answer: 'Adoption agencies', evidence: ['D1:3'], category: 4 },
      {
        question: 'What did Caroline adopt last week?',
        adversarial_answer: 'a puppy',
        evidence: ['D1:3'],
        category: 5,
      },
    ],
  };
}

describe('metrics on a long LoCoMo-format conversation', () => {
  let result: RunResult;
  const cell = (strategy: string): OkCell => ok(result.cells.find((item) => item.strategy === strategy));

  beforeAll(async () => {
    const dir = await tempDir('membench-locomo-long-');
    const file = path.join(dir, 'locomo-long.json');
    await writeFile(file, JSON.stringify([sample(12, 21)]));
    result = await runBenchmark({ datasets: [`locomo:${file}`], strategies: ['buffer', 'window'] });
  });

  it("window(k=2)'s evidence recall is 0 and buffer's 1", () => {
    expect(cell('window').recall.evidenceRecall).toEqual({ n: 3, mean: 0 });
    expect(cell('buffer').recall.evidenceRecall).toEqual({ n: 3, mean: 1 });
    // The union coverage stays as a secondary figure; it is no substitute.
    expect(cell('window').recall.evidenceCoverage.n).toBe(3);
  });

  it('buffer recalls the temporal answer because the session dates are in its context', () => {
    const temporal = cell('buffer').recallByLabel?.temporal;
    expect(temporal?.answerRecall).toEqual({ n: 1, mean: 1 });
  });

  it('keeps LoCoMo categories as labels, scores answers with its F1, and the adversarial item as abstention and by its phrases', () => {
    const buffer = cell('buffer');
    expect(Object.keys(buffer.recallByLabel ?? {}).sort()).toEqual(['adversarial', 'single-hop', 'temporal']);
    expect(buffer.recall.contextRecall.n).toBe(3);
    expect(buffer.recall.abstention.n).toBe(1);
    // evaluation.py scores the adversarial item too: 1 when the answer holds one of its abstention phrases, else 0.
    expect(buffer.recall.answerF1.n).toBe(4);
    expect(buffer.probes.every((probe) => typeof probe.answerF1 === 'number')).toBe(true);
    expect([0, 1]).toContain(buffer.probes.find((probe) => probe.label === 'adversarial')!.answerF1);
    expect(buffer.recallByLabel!.adversarial!.answerF1.n).toBe(1);
  });

  it('inserts no model-written reply: every turn of the replay is a speaker of the dataset', () => {
    expect(cell('buffer').usage.replyTokens).toBe(0);
    // 12 sessions of 21 utterances: 10 answered pairs and one unanswered utterance each.
    expect(cell('buffer').turns.filter((turn) => turn.kind === 'user')).toHaveLength(12 * 11);
    expect(cell('buffer').turns.filter((turn) => turn.contextTokens === null && !turn.contextSkipped)).toHaveLength(12);
  });

  it('measures context tokens on the same seeded sample of the 120 scripted turns for every strategy', () => {
    const sampled = (strategy: string): number[] =>
      cell(strategy).turns.flatMap((turn) => (turn.contextTokens !== null ? [turn.step] : []));
    expect(cell('buffer').tokens.contextSample).toEqual({ measured: sampled('buffer').length, turns: 120 });
    expect(sampled('buffer').length).toBeLessThanOrEqual(32);
    expect(sampled('window')).toEqual(sampled('buffer'));
    // The total counts the turns left out at the sample's mean.
    const { contextTotal, contextMeanPerTurn } = cell('buffer').tokens;
    expect(contextTotal).toBe(Math.round(contextMeanPerTurn * 120));
  });
});
