/**
 * The real-format guard: small hand-written files in the published layouts' details, each variant
 * the real files hold (xiaowu0162/LongMemEval's `question_date` with a weekday, numeric answers,
 * `has_answer` on some turns only, `_abs` ids; snap-research/locomo's `session_N_date_time`, image
 * turns with `img_url` / `blip_caption`, `adversarial_answer`, evidence "D1:3", "D1:3; D2:4" and
 * "D10:"), imported as the papers' code reads them.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ImportLog, importScenarios, type ImportReport } from '../../../../harness/scenarios/importers/index.js';
import type { DatasetName } from '../../../../harness/scenarios/importers/shared.js';
import type { ProbeStep, Scenario, Step } from '../../../../harness/scenarios/format.js';
import { tempDirSync } from '../../../helpers/temp-dir.js';

async function importList(
  dataset: DatasetName,
  list: unknown[],
): Promise<{ scenarios: Scenario[]; report: ImportReport }> {
  const file = path.join(tempDirSync('membench-published-'), `${dataset}.json`);
  writeFileSync(file, JSON.stringify(list));
  const log = new ImportLog(dataset, file);
  const scenarios: Scenario[] = [];
  for await (const imported of importScenarios(dataset, file, log)) scenarios.push(imported.scenario);
  return { scenarios, report: log.report() };
}

const probeOf = (steps: readonly Step[], id: string): ProbeStep =>
  steps.find((step): step is ProbeStep => step.kind === 'probe' && step.id === id)!;
const codes = (report: ImportReport, where: string): string[] =>
  report.repaired.filter((issue) => issue.where === where).map((issue) => issue.code);

describe('LongMemEval, as the published file writes it', async () => {
  const { scenarios, report } = await importList('longmemeval', [
    {
      question_id: 'e47becba',
      question_type: 'multi-session',
      question: 'How many plants did I buy?',
      answer: 3,
      question_date: '2023/05/30 (Tue) 23:40',
      haystack_session_ids: ['answer_4be1b6b4_1', 'sharegpt_yywfJrJ_0'],
      haystack_dates: ['2023/05/20 (Sat) 02:21', '2023/05/21 (Sun) 10:05'],
      haystack_sessions: [
        [
          { role: 'user', content: 'I bought three ferns for the balcony.', has_answer: true },
          { role: 'assistant', content: 'Ferns like shade.' },
          { role: 'user', content: 'Any watering tips?', has_answer: false },
          { role: 'assistant', content: 'Keep the soil moist.' },
        ],
        [
          { role: 'user', content: 'Tell me a joke.' },
          { role: 'assistant', content: 'Why did the fern blush?' },
        ],
      ],
      answer_session_ids: ['answer_4be1b6b4_1'],
    },
    {
      question_id: '0a995998_abs',
      question_type: 'single-session-user',
      question: 'What did my sister buy?',
      answer: 'The information provided is not enough to answer this question.',
      question_date: '2023/05/30 (Tue) 23:40',
      haystack_session_ids: ['b1d2e3f4_2'],
      haystack_dates: ['2023/05/22 (Mon) 09:00'],
      haystack_sessions: [
        [
          { role: 'user', content: 'Hi.' },
          { role: 'assistant', content: 'Hello.' },
        ],
      ],
      answer_session_ids: [],
    },
  ]);
  const [counted, abstention] = scenarios;

  test('haystack_dates date the sessions; question_date, weekday and all, is the question’s current date', () => {
    expect(counted!.steps.filter((step) => step.kind === 'session').map((step) => step.at)).toEqual([
      '2023-05-20T02:21:00Z',
      '2023-05-21T10:05:00Z',
    ]);
    expect(probeOf(counted!.steps, 'e47becba').probe).toBe(
      '[Current date: 2023/05/30 (Tue) 23:40] How many plants did I buy?',
    );
  });

  test('a numeric answer becomes its string, reported', () => {
    expect(probeOf(counted!.steps, 'e47becba').expect).toEqual(['3']);
    expect(codes(report, 'e47becba')).toEqual(['answer-number']);
  });

  test('only the turns marked has_answer: true are evidence (false or absent is not)', () => {
    expect(probeOf(counted!.steps, 'e47becba').evidence).toEqual(['answer_4be1b6b4_1.t0']);
  });

  test('an _abs question is an abstention probe, with no answer and no evidence', () => {
    const probe = probeOf(abstention!.steps, '0a995998_abs');
    expect(probe).toMatchObject({ category: 'abstention', evidence: [] });
    expect(probe.expect).toBeUndefined();
  });
});

describe('LoCoMo, as the published file writes it', async () => {
  const { scenarios, report } = await importList('locomo', [
    {
      sample_id: 'conv-9',
      conversation: {
        speaker_a: 'Ann',
        speaker_b: 'Bo',
        session_1_date_time: '1:56 pm on 8 May, 2023',
        session_1: [
          {
            speaker: 'Ann',
            dia_id: 'D1:1',
            text: 'Look at this!',
            img_url: ['https://example.com/bike.jpg'],
            blip_caption: 'a photo of a red bike',
            query: 'red bike',
          },
          { speaker: 'Bo', dia_id: 'D1:2', text: 'Cool bike.' },
          { speaker: 'Ann', dia_id: 'D1:3', text: 'I ride it to work.' },
        ],
        session_2_date_time: '10:37 am on 27 June, 2023',
        session_2: [
          { speaker: 'Bo', dia_id: 'D2:1', text: 'Still biking?' },
          { speaker: 'Ann', dia_id: 'D2:4', text: 'Every day.' },
        ],
      },
      qa: [
        { question: "What colour is Ann's bike?", answer: 'red', evidence: ['D1:1'], category: 4 },
        { question: 'How does Ann commute?', answer: 'by bike', evidence: ['D1:3; D2:4'], category: 1 },
        { question: 'When did Ann show the bike?', answer: '8 May 2023', evidence: ['D10:'], category: 2 },
        { question: "What colour is Bo's bike?", adversarial_answer: 'red', evidence: ['D1:1'], category: 5 },
      ],
    },
  ]);
  const steps = scenarios[0]!.steps;

  test('session_N_date_time dates each session', () => {
    expect(steps.filter((step) => step.kind === 'session').map((step) => step.at)).toEqual([
      '2023-05-08T13:56:00Z',
      '2023-06-27T10:37:00Z',
    ]);
  });

  test('an image turn says what it shares by its blip_caption; the url and the search query stay out', () => {
    const first = steps.find((step) => step.kind === 'user')!;
    expect(first).toMatchObject({ id: 'D1:1', user: 'Ann: Look at this! [shares a photo of a red bike]' });
    expect(JSON.stringify(steps)).not.toMatch(/example\.com|"query"/u);
  });

  test('evidence "D1:3" cites that utterance; "D1:3; D2:4" is split; "D10:" names none and is dropped', () => {
    expect(probeOf(steps, 'qa0-cat4').evidence).toEqual(['D1:1']);
    expect(probeOf(steps, 'qa1-cat1').evidence).toEqual(['D1:3', 'D2:4']);
    expect(codes(report, 'conv-9 qa[1]')).toEqual(['evidence-split']);
    expect(probeOf(steps, 'qa2-cat2').evidence).toEqual([]);
    expect(codes(report, 'conv-9 qa[2]')).toEqual(['evidence-malformed', 'evidence-none-left']);
  });

  test('a category-5 item’s adversarial_answer is what the abstention probe must not say', () => {
    const probe = probeOf(steps, 'qa3-cat5');
    expect(probe).toMatchObject({ category: 'abstention', label: 'adversarial', forbid: ['red'] });
    expect(probe.expect).toBeUndefined();
  });
});
