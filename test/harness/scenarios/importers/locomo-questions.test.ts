/**
 * LoCoMo's questions as LoCoMo asks them (task_eval/evaluate_gpts.py): an adversarial question as a
 * choice between "Not mentioned in the conversation" and the adversarial answer (scored by
 * evaluation.py's phrases, so an abstaining answer is credited), a temporal question with a date
 * hint; `--question-prompts` replaces the wording. Retrieval still looks for the question alone.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { MembenchError } from '../../../../harness/core/errors.js';
import { chosenAnswer } from '../../../../harness/results/scoring.js';
import { OfflineModel } from '../../../../harness/models/offline.js';
import { readQuestion } from '../../../../harness/models/offline-answer.js';
import type { ChatModel, ChatRequest } from '../../../../harness/models/types.js';
import type { ProbeStep } from '../../../../harness/scenarios/format.js';
import { importDataset } from '../../../../harness/scenarios/importers/index.js';
import {
  loadQuestionPrompts,
  MAX_QUESTION_PROMPTS_BYTES,
  MEMBENCH_QUESTION_PROMPTS,
  NOT_MENTIONED,
  parseQuestionPromptsText,
} from '../../../../harness/scenarios/importers/question-prompts.js';
import { runCell } from '../../../../harness/run/runner.js';
import { offlineProviders } from '../../../helpers/offline-providers.js';
import { tempDir } from '../../../helpers/temp-dir.js';
import { plannedCells } from '../../../helpers/planned.js';

const turn = (session: number, index: number, speaker: string, text: string) => ({
  speaker,
  dia_id: `D${session}:${index}`,
  text,
});

/** One conversation: Ann's cat, Bo's trip; an adversarial question about a pet nobody mentioned, one about Bo's trip. */
function sample(extraQuestions = 0) {
  return {
    sample_id: 'ask',
    conversation: {
      speaker_a: 'Ann',
      speaker_b: 'Bo',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        turn(1, 1, 'Ann', 'I adopted a cat called Miso last week.'),
        turn(1, 2, 'Bo', 'Lovely! I just got back from a trip to Lisbon.'),
      ],
    },
    qa: [
      {
        question: 'When did Bo travel to Lisbon?',
        answer: 'The week before 8 May 2023',
        evidence: ['D1:2'],
        category: 2,
      },
      { question: 'What is the name of the parrot Ann bought?', adversarial_answer: 'Kiwi', evidence: [], category: 5 },
      { question: 'Where did Ann travel?', adversarial_answer: 'Lisbon', evidence: ['D1:2'], category: 5 },
      { question: 'What is the name of Ann’s cat?', answer: 'Miso', evidence: ['D1:1'], category: 4 },
      ...Array.from({ length: extraQuestions }, (_, index) => ({
        question: `What colour is thing number ${index}?`,
        adversarial_answer: `colour ${index}`,
        category: 5,
      })),
    ],
  };
}

async function writeSample(extraQuestions = 0): Promise<string> {
  const dir = await tempDir('membench-locomo-ask-');
  const file = path.join(dir, 'locomo.json');
  await writeFile(file, JSON.stringify([sample(extraQuestions)]));
  return file;
}

async function importedProbes(file: string, questionPrompts?: string): Promise<ProbeStep[]> {
  const { scenarios } = await importDataset(`locomo:${file}`, questionPrompts ? { questionPrompts } : {});
  return scenarios[0]!.steps.filter((step): step is ProbeStep => step.kind === 'probe');
}

describe('LoCoMo questions as asked', () => {
  it('asks an adversarial question as a choice with "Not mentioned in the conversation", a temporal one with a date hint', async () => {
    const [temporal, parrot, trip, cat] = await importedProbes(await writeSample());
    expect(temporal!.probe).toBe('When did Bo travel to Lisbon?');
    expect(temporal!.ask).toBe(MEMBENCH_QUESTION_PROMPTS.temporal.replace('{{question}}', temporal!.probe));
    expect(temporal!.ask).toMatch(/^When did Bo travel to Lisbon\? .*date/u);
    expect(temporal!.choices).toBeUndefined();
    for (const [probe, adversarial] of [
      [parrot!, 'Kiwi'],
      [trip!, 'Lisbon'],
    ] as const) {
      expect([...probe.choices!].sort()).toEqual([NOT_MENTIONED, adversarial].sort());
      expect(probe.ask).toBe(`${probe.probe} Choose one answer: (a) ${probe.choices![0]} (b) ${probe.choices![1]}.`);
      expect(probe.forbid).toEqual([adversarial]);
      expect(probe.scoring).toBe('locomo-adversarial');
    }
    expect(cat!.ask).toBeUndefined();
  });

  it('draws the order of the choices per question, the same at every import', async () => {
    const file = await writeSample(16);
    const first = await importedProbes(file);
    const again = await importedProbes(file);
    const orders = first.filter((probe) => probe.choices).map((probe) => probe.choices![0] === NOT_MENTIONED);
    expect(again.map((probe) => probe.choices)).toEqual(first.map((probe) => probe.choices));
    // Both orders occur: not a constant.
    expect(orders).toContain(true);
    expect(orders).toContain(false);
  });

  it('--question-prompts replaces the wording; a bad template is refused with its line', async () => {
    const dir = await tempDir('membench-question-prompts-');
    const prompts = path.join(dir, 'prompts.yaml');
    await writeFile(prompts, 'adversarial: "{{question}} Pick: (a) {{a}} (b) {{b}}"\n');
    const [temporal, parrot] = await importedProbes(await writeSample(), prompts);
    expect(parrot!.ask).toBe(`${parrot!.probe} Pick: (a) ${parrot!.choices![0]} (b) ${parrot!.choices![1]}`);
    expect(temporal!.ask).toBe(MEMBENCH_QUESTION_PROMPTS.temporal.replace('{{question}}', temporal!.probe));
    expect(parseQuestionPromptsText('temporal: "{{question}} Use the dates."\n', 'p.yaml').source).toBe(
      'p.yaml + membench (adversarial)',
    );
    const refused = (text: string): readonly string[] => {
      try {
        parseQuestionPromptsText(text, 'p.yaml');
      } catch (error) {
        expect(error).toBeInstanceOf(MembenchError);
        return (error as MembenchError).details;
      }
      throw new Error('accepted');
    };
    expect(refused('temporal: "Answer with a date."\n')).toEqual([
      'p.yaml:1:11: temporal: the template never shows {{question}}: a temporal template uses {{question}}',
    ]);
    expect(refused('adversarial: "{{question}} (a) {{a}}"\n')[0]).toMatch(/^p\.yaml:1:14: adversarial: .*\{\{b\}\}/u);
    expect(refused('temporal: "{{question}}"\nmulti-hop: "{{question}}"\n')[0]).toMatch(
      /^p\.yaml:2:1: multi-hop: unknown kind of question/u,
    );
    await expect(
      importDataset(`locomo:${await writeSample()}`, { questionPrompts: path.join(dir, 'none.yaml') }),
    ).rejects.toThrow(/none\.yaml:1:1: \(document\): cannot read: no such file/u);
    // Bounded and UTF-8, as the judge's prompts and the errata are.
    const huge = path.join(dir, 'huge.yaml');
    await writeFile(huge, `temporal: "{{question}} ${'x'.repeat(MAX_QUESTION_PROMPTS_BYTES)}"\n`);
    await expect(loadQuestionPrompts(huge, 'locomo')).rejects.toThrow(/huge\.yaml.*(large|bytes|KiB|MiB)/iu);
    const latin1 = path.join(dir, 'latin1.yaml');
    await writeFile(latin1, Buffer.from('temporal: "{{question}} caf\xe9"\n', 'latin1'));
    await expect(loadQuestionPrompts(latin1, 'locomo')).rejects.toThrow(/latin1\.yaml.*UTF-8/iu);
    // LongMemEval's questions are asked as its file writes them: the templates would be read and ignored.
    await expect(
      importDataset('longmemeval:fixtures/datasets/longmemeval-sample.json', { questionPrompts: huge }),
    ).rejects.toThrow(`--question-prompts ${huge}: the templates word LoCoMo's temporal and adversarial questions`);
  });
});

describe('answering a choice', () => {
  it("reads a reply of one or three characters as a letter, as LoCoMo's code does", () => {
    const choices = [NOT_MENTIONED, 'Kiwi'];
    expect(chosenAnswer('a', choices)).toBe(NOT_MENTIONED);
    expect(chosenAnswer(' (A) ', choices)).toBe(NOT_MENTIONED);
    expect(chosenAnswer('B', choices)).toBe('Kiwi');
    expect(chosenAnswer('(b)', choices)).toBe('Kiwi');
    // Any other one- or three-character reply is the second choice there.
    expect(chosenAnswer('c', choices)).toBe('Kiwi');
    expect(chosenAnswer('yes', choices)).toBe('Kiwi');
    expect(chosenAnswer('Kiwi, I think', choices)).toBe('Kiwi, I think');
    expect(chosenAnswer('a', undefined)).toBe('a');
  });

  it('the offline model reads the question and its choices from the text it is asked, and picks "not mentioned" without support', async () => {
    expect(
      readQuestion('Where did Ann go? Choose one answer: (a) Not mentioned in the conversation (b) Lisbon.'),
    ).toEqual({
      question: 'Where did Ann go?',
      choices: ['Not mentioned in the conversation', 'Lisbon'],
    });
    expect(readQuestion('When did Bo go? Give the date.')).toEqual({ question: 'When did Bo go?', choices: [] });
    const model = new OfflineModel();
    const ask = async (question: string): Promise<string> =>
      (
        await model.chat({
          task: 'answer',
          messages: [
            new SystemMessage('Answer the last question using only what the conversation so far and your memory say.'),
            new HumanMessage('Ann: I adopted a cat called Miso last week.'),
            new HumanMessage('Bo: I just got back from a trip to Lisbon.'),
            new HumanMessage(question),
          ],
        })
      ).text;
    expect(
      await ask(
        'What is the name of the parrot Ann bought? Choose one answer: (a) Kiwi (b) Not mentioned in the conversation.',
      ),
    ).toBe(NOT_MENTIONED);
    expect(await ask('Where did Bo travel? Choose one answer: (a) Not mentioned in the conversation (b) Lisbon.')).toBe(
      'Lisbon',
    );
    // Found a sentence, but it does not say the offered answer: not mentioned.
    expect(await ask('Where did Bo travel? Choose one answer: (a) Porto (b) Not mentioned in the conversation.')).toBe(
      NOT_MENTIONED,
    );
    // A hint after the question mark does not change what is looked for.
    expect(await ask('Where did Bo travel? Give the place; an approximate answer is fine.')).toBe(
      await ask('Where did Bo travel?'),
    );
  });
});

describe('a replayed LoCoMo conversation', () => {
  async function runBuffer(model?: ChatModel) {
    const { plans } = await plannedCells({ datasets: [`locomo:${await writeSample()}`], strategies: ['buffer'] });
    const providers = offlineProviders();
    const result = await runCell(plans[0]!, model ? { ...providers, model, modelFor: () => model } : providers);
    expect(result.status === 'error' ? result.error : result.status).toBe('ok');
    return result.status === 'ok' ? result.probes : [];
  }

  it("credits the offline model's abstention on an adversarial question by LoCoMo's rule", async () => {
    const probes = await runBuffer();
    const parrot = probes.find((probe) => probe.question.startsWith('What is the name of the parrot'))!;
    expect(parrot.answer).toBe(NOT_MENTIONED);
    expect(parrot.answerF1).toBe(1);
    expect(parrot.answerCorrect).toBe(true);
  });

  it('asks the model the question with its choices, and reads a one-letter reply as the answer it names', async () => {
    const asked: string[] = [];
    const letters: ChatModel = {
      id: 'letters',
      offline: true,
      async chat(request: ChatRequest) {
        if (request.task !== 'answer') return { text: 'OK.', cached: false };
        const question = String(request.messages.at(-1)!.content);
        asked.push(question);
        return { text: readQuestion(question).choices[0] === NOT_MENTIONED ? '(a)' : 'b', cached: false };
      },
    };
    const probes = await runBuffer(letters);
    expect(asked).toHaveLength(4);
    expect(asked.filter((question) => question.includes('(a)'))).toHaveLength(2);
    const adversarial = probes.filter((probe) => probe.label === 'adversarial');
    expect(adversarial.map((probe) => [probe.answer, probe.answerF1])).toEqual([
      [NOT_MENTIONED, 1],
      [NOT_MENTIONED, 1],
    ]);
  });
});
