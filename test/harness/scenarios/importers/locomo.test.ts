/**
 * The LoCoMo importer on fixtures/datasets/locomo10-sample.json (the published layout, with
 * the quirks of the real file) and on inline samples for shapes the real file never has.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  ImportLog,
  importScenarios,
  type ImportedScenario,
  type ImportReport,
} from '../../../../harness/scenarios/importers/index.js';
import { parseLocomoDate } from '../../../../harness/scenarios/importers/locomo.js';
import { parseLongMemEvalDate } from '../../../../harness/scenarios/importers/longmemeval.js';
import { canonicalDiaId } from '../../../../harness/scenarios/importers/locomo-format.js';
import { checkScenarioText } from '../../../../harness/scenarios/load.js';
import type { ProbeStep, Step } from '../../../../harness/scenarios/format.js';
import { tempDirSync } from '../../../helpers/temp-dir.js';

const FIXTURE = 'fixtures/datasets/locomo10-sample.json';

async function importFile(
  file: string,
  limit?: number,
  documents?: boolean,
): Promise<{ scenarios: ImportedScenario[]; report: ImportReport }> {
  const log = new ImportLog('locomo', file);
  const scenarios: ImportedScenario[] = [];
  for await (const imported of importScenarios('locomo', file, log, {
    ...(limit === undefined ? {} : { limit }),
    ...(documents ? { documents } : {}),
  }))
    scenarios.push(imported);
  return { scenarios, report: log.report() };
}

function writeTemp(samples: unknown): string {
  const file = path.join(tempDirSync('membench-locomo-'), 'locomo.json');
  writeFileSync(file, JSON.stringify(samples, null, 2));
  return file;
}

const probes = (steps: readonly Step[]): Map<string, ProbeStep> =>
  new Map(steps.flatMap((step) => (step.kind === 'probe' ? [[step.id!, step] as const] : [])));
const issuesOf = ({ report }: { report: ImportReport }): number => report.skippedItems;
const issues = (report: ImportReport, where: string) =>
  [...report.repaired, ...report.skipped].filter((issue) => issue.where === where).map((issue) => issue.code);

describe('LoCoMo fixture', async () => {
  const { scenarios, report } = await importFile(FIXTURE);
  const [convA, convB] = scenarios;
  const probesA = probes(convA!.scenario.steps);

  test('one scenario per conversation, each valid YAML for the scenario loader, which loads it as the import validated it (as data)', () => {
    expect(scenarios.map((item) => item.scenario.name)).toEqual(['locomo-conv-a', 'locomo-conv-b']);
    for (const item of scenarios) {
      const check = checkScenarioText(item.yaml(), `${item.scenario.name}.yaml`);
      expect(check.problems).toEqual([]);
      expect(check.scenario).toEqual({ ...item.scenario, source: `${item.scenario.name}.yaml` });
    }
    expect(convA!.scenario.source).toBe(`locomo:${FIXTURE}#locomo-conv-a`);
  });

  test('every QA item is accounted for: imported as is, repaired or skipped', () => {
    expect(report.items).toBe(22 + 2);
    expect(report.imported + report.repairedItems + report.skippedItems).toBe(report.items);
    expect({ imported: report.imported, repaired: report.repairedItems, skipped: report.skippedItems }).toEqual({
      imported: 11,
      repaired: 10,
      skipped: 3,
    });
    const probeCount = scenarios.reduce((sum, item) => sum + probes(item.scenario.steps).size, 0);
    expect(probeCount).toBe(report.imported + report.repairedItems);
  });

  test('sessions become `session: new` with the parsed date, utterances are paired with speaker names', () => {
    const steps = convA!.scenario.steps;
    expect(steps[0]).toEqual({ kind: 'session', session: 'new', at: '2023-05-08T13:56:00Z' });
    expect(steps[1]).toMatchObject({
      kind: 'user',
      id: 'D1:1',
      user: 'Maya: Hey Leo! I finally signed up for that pottery class downtown yesterday.',
      assistant: "Leo: Nice, Maya! I've been busy training for the city half marathon.",
      at: '2023-05-08T13:56:00Z',
    });
    // An image is rendered as the dataset's own code does: "[shares CAPTION]".
    expect(steps[1]).toMatchObject({ replyId: 'D1:2' });
    expect(steps[2]).toMatchObject({
      id: 'D1:3',
      user: "Maya: Here's the first bowl I made, it's a bit wonky. [shares a photo of a clay bowl on a pottery wheel]",
    });
    // Session 2 opens with speaker_b and has five utterances: the last one has no scripted reply.
    const session2 = steps.filter((step) => step.kind === 'user' && step.at === '2023-05-27T10:30:00Z');
    expect(session2.map((step) => step.id)).toEqual(['D2:1', 'D2:3', 'D2:5']);
    expect(session2[0]).toMatchObject({
      user: expect.stringMatching(/^Leo: /u),
      assistant: expect.stringMatching(/^Maya: /u),
    });
    expect(session2[2]).toMatchObject({ user: 'Leo: Looks sunny. Pepper would love that rug.' });
    expect(session2[2]).not.toHaveProperty('assistant');
    const utterances = steps.reduce(
      (sum, step) => sum + (step.kind === 'user' ? (step.assistant === undefined ? 1 : 2) : 0),
      0,
    );
    expect(utterances).toBe(15);
  });

  test('categories map to membench categories; the dataset number stays in the probe id', () => {
    expect(probesA.get('qa0-cat2')).toMatchObject({ category: 'temporal', expect: ['7 May 2023'], evidence: ['D1:1'] });
    expect(probesA.get('qa2-cat1')).toMatchObject({
      category: 'multi-hop',
      expect: ['a bowl, mugs'],
      evidence: ['D1:3', 'D2:2'],
    });
    expect(probesA.get('qa3-cat4')).toMatchObject({ category: 'extraction', expect: ['Pepper'] });
    // Open-domain: only the part before ";" is scored by the dataset's evaluation.py.
    expect(probesA.get('qa4-cat3')).toMatchObject({ category: 'extraction', expect: ['Likely yes'] });
  });

  test('integer answers become strings (repaired)', () => {
    expect(probesA.get('qa5-cat2')?.expect).toEqual(['2023']);
    expect(issues(report, 'conv-a qa[5]')).toEqual(['answer-number']);
  });

  test('malformed evidence is split, normalised or dropped, each with its reason', () => {
    // Evidence cites the utterance itself (D1:2 is the reply of the step D1:1), as the dataset does.
    expect(probesA.get('qa6-cat1')?.evidence).toEqual(['D1:2', 'D2:1']);
    expect(issues(report, 'conv-a qa[6]')).toEqual(['evidence-split']);
    expect(probesA.get('qa7-cat1')?.evidence).toEqual(['D2:1', 'D3:2']);
    expect(probesA.get('qa8-cat4')?.evidence).toEqual(['D3:2']);
    expect(issues(report, 'conv-a qa[8]')).toEqual(['evidence-normalized']);
    expect(probesA.get('qa9-cat4')?.evidence).toEqual(['D3:1']);
    expect(probesA.get('qa10-cat4')?.evidence).toEqual(['D3:4']);
    expect(issues(report, 'conv-a qa[10]')).toEqual(['evidence-malformed']);
  });

  test('dangling evidence is dropped and the probe kept without evidence; missing or empty evidence is no repair', () => {
    expect(probesA.get('qa11-cat2')).toMatchObject({ expect: ['The Friday before 27 May 2023'], evidence: [] });
    expect(issues(report, 'conv-a qa[11]')).toEqual(['evidence-unknown', 'evidence-none-left']);
    expect(probesA.get('qa12-cat3')?.evidence).toEqual([]);
    expect(probesA.get('qa13-cat4')?.evidence).toEqual([]);
    expect(issues(report, 'conv-a qa[12]')).toEqual([]);
    expect(issues(report, 'conv-a qa[13]')).toEqual([]);
  });

  test('category 5: abstention probes without expect, the adversarial answer as forbid', () => {
    expect(probesA.get('qa14-cat5')).toMatchObject({ category: 'abstention', forbid: ['Pepper'], evidence: ['D1:4'] });
    expect(probesA.get('qa14-cat5')).not.toHaveProperty('expect');
    expect(issues(report, 'conv-a qa[14]')).toEqual([]);
    expect(probesA.get('qa16-cat5')).toMatchObject({ category: 'abstention', forbid: ['a set of four mugs'] });
    expect(issues(report, 'conv-a qa[16]')).toEqual(['adversarial-from-answer']);
    expect(probesA.get('qa17-cat5')).toMatchObject({ category: 'abstention', forbid: [] });
    expect(issues(report, 'conv-a qa[17]')).toEqual(['adversarial-missing']);
  });

  test('quoted answers lose their quotes; unusable items are skipped with the reason', () => {
    expect(probesA.get('qa21-cat4')?.expect).toEqual(['The Overstory']);
    expect(issues(report, 'conv-a qa[18]')).toEqual(['category-unknown']);
    expect(issues(report, 'conv-a qa[19]')).toEqual(['question-missing']);
    expect(issues(report, 'conv-a qa[20]')).toEqual(['answer-missing']);
    expect([...probesA.keys()].some((id) => /^qa(18|19|20)-/u.test(id))).toBe(false);
  });

  test('session_01 beside session_1 names the same session: the first key in the file is kept, the other said and ignored', async () => {
    const [sample] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { conversation: Record<string, unknown> }[];
    const conversation = { ...sample!.conversation };
    const session1 = conversation.session_1 as { text: string }[];
    conversation.session_01 = [{ speaker: 'Maya', dia_id: 'D9:1', text: 'I secretly own a llama named Gus.' }];
    conversation.session_01_date_time = '1:56 pm on 8 May, 2023';
    const { scenarios: imported, report: twice } = await importFile(writeTemp([{ ...sample, conversation }]));
    expect(issues(twice, 'conv-a session_01')).toEqual(['session-key-duplicate']);
    expect(issues(twice, 'conv-a session_01_date_time')).toEqual(['session-key-duplicate']);
    const said = JSON.stringify(imported[0]!.scenario.steps);
    expect(said).toContain(session1[0]!.text);
    expect(said).not.toContain('llama');
  });

  test('a mistyped session key, a session number past nine digits, a caption that is no text: each said, not dropped silently', async () => {
    const [sample] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { conversation: Record<string, unknown> }[];
    const conversation = { ...sample!.conversation };
    conversation.session3 = [{ speaker: 'Maya', dia_id: 'D3:1', text: 'I secretly own a llama named Gus.' }];
    conversation.Session_4 = conversation.session3;
    conversation.session_99999999999999999999 = conversation.session3;
    const session1 = (conversation.session_1 as Record<string, unknown>[]).map((turn) => ({ ...turn }));
    session1[0]!.blip_caption = ['a photo', 'of a dog'];
    session1[1]!.dia_id = 'D2:9';
    conversation.session_1 = session1;
    const { scenarios: imported, report: typos } = await importFile(writeTemp([{ ...sample, conversation }]));
    for (const key of ['session3', 'Session_4', 'session_99999999999999999999'])
      expect(issues(typos, `conv-a ${key}`)).toEqual(['session-key-unknown']);
    expect(typos.repaired.find((issue) => issue.code === 'caption-dropped')?.message).toBe(
      'blip_caption ["a photo","of a dog"] is not a string: the turn kept without it',
    );
    expect(JSON.stringify(imported[0]!.scenario.steps)).not.toContain('llama');
    expect(issues(typos, 'conv-a session_1[1]')).toEqual(['dia-id-session']);
  });

  test('a turn that shares an image with no words is kept as its caption, said; one with neither is dropped, said', async () => {
    const [sample] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { conversation: Record<string, unknown> }[];
    const conversation = { ...sample!.conversation };
    const session1 = (conversation.session_1 as Record<string, unknown>[]).map((turn) => ({ ...turn }));
    session1[0] = { ...session1[0]!, text: '', blip_caption: 'a photo of a clay bowl' };
    session1[1] = { ...session1[1]!, text: '  ' };
    delete session1[1]!.blip_caption;
    conversation.session_1 = session1;
    const { scenarios: imported, report } = await importFile(writeTemp([{ ...sample, conversation }]));
    expect(issues(report, 'conv-a session_1[0]')).toEqual(['text-empty']);
    expect(issues(report, 'conv-a session_1[1]')).toEqual(['turn-dropped']);
    expect(JSON.stringify(imported[0]!.scenario.steps)).toContain(
      `${String(session1[0]!.speaker)}: [shares a photo of a clay bowl]`,
    );
  });

  test('a sample_id used twice: both imported, the QA items told apart so the counts add up; an unnamed sample named past the ids taken', async () => {
    const samples = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const first = samples[0]!;
    const qa = (first.qa as unknown[]).length;
    const { scenarios: imported, report: twice } = await importFile(writeTemp([first, first]));
    expect(imported.map((item) => item.scenario.name)).toEqual(['locomo-conv-a', 'locomo-conv-a-2']);
    expect(twice.items).toBe(2 * qa);
    expect(twice.imported + twice.repairedItems + twice.skippedItems).toBe(twice.items);
    expect(twice.skippedItems).toBe(2 * issuesOf(await importFile(writeTemp([first]))));
    expect(twice.skipped.some((issue) => issue.where.startsWith('conv-a (sample[1]) qa['))).toBe(true);
    // A sample without an id is named after its place, past an earlier sample's own id of that name.
    const { scenarios: clash } = await importFile(
      writeTemp([
        { ...first, sample_id: 'sample-2' },
        { ...first, sample_id: undefined },
      ]),
    );
    expect(clash.map((item) => item.scenario.name)).toEqual(['locomo-sample-2', 'locomo-sample-2-2']);
  });

  test('sessions without a date, dates without a session and empty sessions are handled with reasons', () => {
    expect(issues(report, 'conv-b session_2')).toEqual(['session-without-date']);
    expect(issues(report, 'conv-b session_3')).toEqual(['session-empty']);
    expect(issues(report, 'conv-b session_4_date_time')).toEqual(['date-without-session']);
    expect(convB!.scenario.steps.map((step) => step.kind)).toEqual([
      'session',
      'user',
      'session',
      'user',
      'probe',
      'probe',
    ]);
    expect(convB!.scenario.steps[2]).toEqual({ kind: 'session', session: 'new' });
    expect(probes(convB!.scenario.steps).get('qa1-cat4')?.evidence).toEqual(['D2:2']);
  });

  test('--limit reads only the first conversations', async () => {
    const { scenarios: one, report: limited } = await importFile(FIXTURE, 1);
    expect(one.map((item) => item.scenario.name)).toEqual(['locomo-conv-a']);
    expect(limited.units).toBe(1);
    expect(limited.items).toBe(22);
  });
});

describe('LoCoMo shapes the published file does not have', () => {
  const session = [
    { speaker: 'A', dia_id: 'D1:1', text: 'I like tea.' },
    { speaker: 'B', dia_id: 'D1:2', text: 'Me too.' },
  ];

  test('a sample without a conversation: its QA items are skipped; a non-object sample is skipped', async () => {
    const file = writeTemp([
      { qa: [{ question: 'q?', answer: 'a', category: 4 }], sample_id: 'x' },
      42,
      { qa: [], conversation: { session_1: session }, sample_id: 'ok' },
    ]);
    const { scenarios, report } = await importFile(file);
    expect(scenarios.map((item) => item.scenario.name)).toEqual(['locomo-ok']);
    expect(report.skipped.map((issue) => [issue.where, issue.code])).toEqual([
      ['x qa[0]', 'conversation-missing'],
      ['sample[1]', 'sample-not-object'],
    ]);
    expect(report.items).toBe(1);
    expect(report.skippedItems).toBe(1);
  });

  test('odd turns: no text, no speaker, no dia_id, duplicate dia_id, unparsable date, numeric sample_id, string category', async () => {
    const file = writeTemp([
      {
        qa: [{ question: 'What does A like?', answer: 'tea', evidence: ['D1:1'], category: '4' }],
        conversation: {
          session_1_date_time: 'sometime in May',
          session_1: [
            session[0],
            { speaker: 'B', dia_id: 'D1:2' },
            { dia_id: 'D1:3', text: 'Nameless.' },
            { speaker: 'B', text: 'No id.' },
            { speaker: 'A', dia_id: 'D1:1', text: 'Again.' },
          ],
        },
        sample_id: 7,
      },
    ]);
    const { scenarios, report } = await importFile(file);
    expect(scenarios[0]!.scenario.name).toBe('locomo-7');
    const codes = report.repaired.map((issue) => issue.code);
    expect(codes).toEqual(
      expect.arrayContaining([
        'date-unparsed',
        'turn-dropped',
        'speaker-missing',
        'dia-id-missing',
        'dia-id-duplicate',
        'category-string',
      ]),
    );
    expect(scenarios[0]!.scenario.steps[0]).toEqual({ kind: 'session', session: 'new' });
    // Utterances left: D1:1, the nameless D1:3, the id-less one, the second D1:1; paired in order.
    const users = scenarios[0]!.scenario.steps.filter((step) => step.kind === 'user');
    expect(users.map((step) => step.kind === 'user' && [step.id, step.replyId])).toEqual([
      ['D1:1', 'D1:3'],
      [undefined, 'D1:1.2'],
    ]);
    expect(users.map((step) => step.kind === 'user' && step.assistant)).toEqual(['Nameless.', 'A: Again.']);
    expect(probes(scenarios[0]!.scenario.steps).get('qa0-cat4')?.evidence).toEqual(['D1:1']);
  });

  test('a category a double cannot hold is named as the file wrote it (1e400, not null)', async () => {
    const file = path.join(tempDirSync('membench-locomo-'), 'locomo.json');
    writeFileSync(
      file,
      `[{"qa": [{"question": "q?", "answer": "tea", "category": 1e400}], "conversation": {"session_1": ${JSON.stringify(session)}}, "sample_id": "big"}]`,
    );
    const { report } = await importFile(file);
    expect(report.skipped.map((issue) => issue.message)).toEqual(['category 1e400 is not one of 1-5']);
  });

  test('evidence null or of another type than a list or a string is said, with the value, as evidence of any wrong type is', async () => {
    const file = writeTemp([
      {
        qa: [
          { question: 'What does A like?', answer: 'tea', evidence: null, category: 4 },
          { question: 'What does B like?', answer: 'tea', evidence: 5, category: 4 },
        ],
        conversation: { session_1_date_time: '1:56 pm on 8 May, 2023', session_1: session },
        sample_id: 'typed',
      },
    ]);
    const { scenarios, report } = await importFile(file);
    expect(report.repaired.map(({ where, code, message }) => [where, code, message])).toEqual([
      ['typed qa[0]', 'evidence-not-list', 'evidence null is not a list of dialogue ids: dropped'],
      ['typed qa[1]', 'evidence-not-list', 'evidence 5 is not a list of dialogue ids: dropped'],
    ]);
    expect(report.repairedItems).toBe(2);
    expect(probes(scenarios[0]!.scenario.steps).get('qa0-cat4')?.evidence).toEqual([]);
  });

  test('two samples with one sample_id get distinct scenario names', async () => {
    const sample = { qa: [], conversation: { session_1: session }, sample_id: 'conv-1' };
    const { scenarios, report } = await importFile(writeTemp([sample, sample]));
    expect(scenarios.map((item) => item.scenario.name)).toEqual(['locomo-conv-1', 'locomo-conv-1-2']);
    expect(report.repaired.map((issue) => issue.code)).toContain('name-taken');
    // An empty qa list is said: a scenario without probes scores nothing.
    expect(report.repaired.find((issue) => issue.where === 'conv-1 qa')?.message).toBe(
      'an empty qa list: a scenario without probes',
    );
  });
});

describe('LoCoMo: the text its RAG indexes', () => {
  test('each utterance carries `SPEAKER said, "TEXT"` (clean_text when the file has it, no caption); derived documents their own text when cleaning changed it', async () => {
    const file = writeTemp([
      {
        qa: [],
        sample_id: 'rag',
        conversation: {
          session_1: [
            { speaker: 'A', dia_id: 'D1:1', text: ' I like tea. ', blip_caption: 'a cup' },
            { speaker: 'B', dia_id: 'D1:2', text: 'Me too!!', clean_text: 'Me too!' },
            { speaker: 'A', dia_id: 'D1:3', text: 'Bye.' },
          ],
        },
        observation: { session_1_observation: { A: [['A likes tea. ', 'D1:1']] } },
        session_summary: { session_1_summary: 'A and B like tea.' },
      },
    ]);
    const { scenarios } = await importFile(file, undefined, true);
    const userSteps = (index: number) =>
      scenarios[index]!.scenario.steps.filter((step): step is Extract<Step, { kind: 'user' }> => step.kind === 'user');
    expect(userSteps(0).map((step) => [step.user, step.indexText, step.replyIndexText])).toEqual([
      ['A: I like tea. [shares a cup]', 'A said, " I like tea. "', 'B said, "Me too!"'],
      ['A: Bye.', 'A said, "Bye."', undefined],
    ]);
    const documents = scenarios
      .slice(1)
      .map((item) => userSteps(scenarios.indexOf(item)).map((step) => step.indexText));
    expect(documents).toEqual([['A likes tea. '], [undefined]]);
  });
});

describe('LoCoMo derived documents (observations, session summaries)', async () => {
  const { scenarios, report } = await importFile(FIXTURE, undefined, true);
  const named = (name: string) => scenarios.find((item) => item.scenario.name === name)!.scenario;
  const documents = (steps: readonly Step[]) =>
    steps.flatMap((step) => (step.kind === 'user' ? [{ id: step.id, text: step.user, cites: step.cites }] : []));

  test('asked for, each field becomes a scenario of its own after its dialog, in a group of its own', () => {
    expect(scenarios.map((item) => item.scenario.name)).toEqual([
      'locomo-conv-a',
      'locomo-conv-a-observation',
      'locomo-conv-a-summary',
      'locomo-conv-b',
      'locomo-conv-b-observation',
      'locomo-conv-b-summary',
    ]);
    expect(named('locomo-conv-a-observation').documents).toBe('observation');
    expect(named('locomo-conv-a-summary').documents).toBe('summary');
    expect(named('locomo-conv-a').documents).toBeUndefined();
    expect(named('locomo-conv-a-observation').group).toBe('locomo:locomo10-sample.json observations');
    // The import summary counts the dialogs alone.
    expect(report.scenarios).toBe(2);
  });

  test('an observation is one message, dated with its session, citing its dia_id; its text names no id', () => {
    const steps = named('locomo-conv-a-observation').steps;
    expect(documents(steps).slice(0, 3)).toEqual([
      { id: 'O1.1', text: 'Maya signed up for a pottery class downtown.', cites: ['D1:1'] },
      { id: 'O1.2', text: 'Maya is moving to Denver in August.', cites: ['D1:5'] },
      { id: 'O1.3', text: 'Leo is training for the city half marathon.', cites: ['D1:2'] },
    ]);
    expect(steps.filter((step) => step.kind === 'session')).toHaveLength(3);
    expect(steps.some((step) => step.kind === 'user' && /D\d+:\d+/u.test(step.user))).toBe(false);
    expect(steps.every((step) => step.kind !== 'user' || (step.reply === false && step.at !== undefined))).toBe(true);
  });

  test('a session summary cites every dia_id numbered with its session', () => {
    const [first] = documents(named('locomo-conv-a-summary').steps);
    expect(first).toEqual({
      id: 'S1',
      text: 'Maya told Leo about her pottery class and her move to Denver; Leo is training for a half marathon.',
      cites: ['D1:1', 'D1:2', 'D1:3', 'D1:4', 'D1:5', 'D1:6'],
    });
  });

  test('each derived scenario asks the dialog’s questions, with the same evidence', () => {
    const dialog = [...probes(named('locomo-conv-a').steps).values()];
    expect([...probes(named('locomo-conv-a-observation').steps).values()]).toEqual(dialog);
    expect([...probes(named('locomo-conv-a-summary').steps).values()]).toEqual(dialog);
  });

  test('not asked for, nothing derived is imported', async () => {
    const { scenarios: dialogs } = await importFile(FIXTURE);
    expect(dialogs.map((item) => item.scenario.name)).toEqual(['locomo-conv-a', 'locomo-conv-b']);
  });

  const sample = (extra: Record<string, unknown>) => ({
    qa: [{ question: 'What does Ana grow?', answer: 'basil', evidence: ['D1:1'], category: 4 }],
    conversation: {
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        { speaker: 'Ana', dia_id: 'D1:1', text: 'I grow basil.' },
        { speaker: 'Bo', dia_id: 'D1:2', text: 'Nice.' },
      ],
    },
    sample_id: 'conv-x',
    ...extra,
  });

  test('a sample without the fields: its units are skipped, each with a note', async () => {
    const { scenarios, report } = await importFile(writeTemp([sample({})]), undefined, true);
    expect(scenarios.map((item) => item.scenario.name)).toEqual(['locomo-conv-x']);
    expect(issues(report, 'conv-x observation')).toEqual(['observation-missing']);
    expect(issues(report, 'conv-x session_summary')).toEqual(['summary-missing']);
  });

  test('an observation or summary of a session the conversation does not have is kept, undated, and said', async () => {
    const observation = {
      session_1_observation: { Ana: [['Ana grows basil.', 'D1:1']] },
      session_9_observation: { Bo: [['Bo moved.', 'D9:1']] },
    };
    const session_summary = { session_1_summary: 'Ana grows basil.', session_9_summary: 'Bo moved.' };
    const { scenarios, report } = await importFile(
      writeTemp([sample({ observation, session_summary })]),
      undefined,
      true,
    );
    expect(issues(report, 'conv-x observation.session_9_observation')).toEqual(['observation-session-unknown']);
    expect(issues(report, 'conv-x session_summary.session_9_summary')).toEqual(['summary-session-unknown']);
    expect(issues(report, 'conv-x observation.session_1_observation')).toEqual([]);
    const steps = scenarios.find((item) => item.scenario.documents === 'summary')!.scenario.steps;
    expect(documents(steps).map((document) => document.text)).toEqual(['Ana grows basil.', 'Bo moved.']);
  });

  test('several ids in one dia_id field, or a list, are all cited; an id naming no turn is reported and not cited', async () => {
    const observation = {
      session_1_observation: {
        Ana: [
          ['Ana grows basil.', 'D1:1, D1:2'],
          ['Ana likes herbs.', ['D1:1', 'D9:9']],
        ],
      },
    };
    const { scenarios, report } = await importFile(writeTemp([sample({ observation })]), undefined, true);
    const steps = scenarios.find((item) => item.scenario.documents === 'observation')!.scenario.steps;
    expect(documents(steps).map((document) => document.cites)).toEqual([['D1:1', 'D1:2'], ['D1:1']]);
    expect(issues(report, 'conv-x observation.session_1_observation.Ana[1][1]')).toEqual(['observation-cite-unknown']);
  });

  test.each([
    [{ observation: [] }, 'conv-x observation: expected an object of session_N_observation entries, got a list'],
    [
      { observation: { session_1_observation: { Ana: [['Ana grows basil.', 7]] } } },
      'conv-x observation.session_1_observation.Ana[0][1]: expected a dia_id like "D1:3" or a list of them, got number 7',
    ],
    [
      { observation: { session_1_observation: { Ana: 'Ana grows basil.' } } },
      'conv-x observation.session_1_observation.Ana: expected a list of [text, dia_id] pairs, got string "Ana grows basil."',
    ],
    [
      { observation: { session_1_observation: { Ana: [['Ana grows basil.']] } } },
      'conv-x observation.session_1_observation.Ana[0]: expected a pair [observation text, dia_id], got a list',
    ],
    [
      {
        observation: {
          session_1_observation: {
            Ana: [
              ['Ana grows basil.', 'D1:1'],
              [7, 'D1:1'],
            ],
          },
        },
      },
      'conv-x observation.session_1_observation.Ana[1][0]: expected the observation text, got number 7',
    ],
    [
      { observation: { session_1_observation: ['Ana grows basil.'] } },
      'conv-x observation.session_1_observation: expected an object of speaker → [[text, dia_id], ...], got a list',
    ],
    [
      { session_summary: { session_1_summary: ['Ana grows basil.'] } },
      'conv-x session_summary.session_1_summary: expected the summary text, got a list',
    ],
  ])('a field of the wrong type is bad input naming the file and the field (%j)', async (extra, message) => {
    const file = writeTemp([sample(extra)]);
    await expect(importFile(file, undefined, true)).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      message: `${file}: ${message}`,
    });
    // Not asked for, the fields are not read.
    await expect(importFile(file)).resolves.toBeDefined();
  });
});

describe('LoCoMo helpers', () => {
  test('parseLocomoDate reads the dataset format as UTC and refuses anything else', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe('2023-05-08T13:56:00Z');
    expect(parseLocomoDate('12:09 am on 13 September, 2023')).toBe('2023-09-13T00:09:00Z');
    expect(parseLocomoDate('12:30 pm on 1 Jan, 2024')).toBe('2024-01-01T12:30:00Z');
    expect(parseLocomoDate('1:56 pm on 31 June, 2023')).toBeUndefined();
    expect(parseLocomoDate('13:56 pm on 8 May, 2023')).toBeUndefined();
    expect(parseLocomoDate('8 May 2023')).toBeUndefined();
    // A year below 100 is that year (Date.UTC alone reads 0023 as 1923), in both datasets' formats.
    expect(parseLocomoDate('1:56 pm on 8 May, 0023')).toBe('0023-05-08T13:56:00Z');
    expect(parseLongMemEvalDate('0023/05/20 (Sat) 02:21')).toBe('0023-05-20T02:21:00Z');
    expect(parseLongMemEvalDate('2024/02/29 (Thu) 23:59')).toBe('2024-02-29T23:59:00Z');
    expect(parseLongMemEvalDate('2023/02/29 (Wed) 10:00')).toBeUndefined();
    expect(parseLongMemEvalDate('2023/05/20 (Sat) 24:00')).toBeUndefined();
  });

  test('canonicalDiaId', () => {
    expect(canonicalDiaId('D1:3')).toBe('D1:3');
    expect(canonicalDiaId('D:11:26')).toBe('D11:26');
    expect(canonicalDiaId('D30:05')).toBe('D30:5');
    expect(canonicalDiaId('(D2:4)')).toBe('D2:4');
    expect(canonicalDiaId('D')).toBeUndefined();
    expect(canonicalDiaId('S1')).toBeUndefined();
  });
});

describe('LoCoMo session dates', () => {
  test('a session dated before an earlier one is said, and replayed where its number puts it', async () => {
    const turn = (id: string, speaker: string, text: string) => ({ speaker, dia_id: id, text });
    const file = writeTemp([
      {
        sample_id: 'conv-d',
        qa: [{ question: 'What does Ana grow?', answer: 'basil', evidence: ['D1:1'], category: 4 }],
        conversation: {
          session_1_date_time: '1:56 pm on 8 May, 2023',
          session_1: [turn('D1:1', 'Ana', 'I grow basil.'), turn('D1:2', 'Bo', 'Nice.')],
          session_2_date_time: '1:56 pm on 1 May, 2023',
          session_2: [turn('D2:1', 'Ana', 'I moved.'), turn('D2:2', 'Bo', 'Where to?')],
          session_3_date_time: '1:56 pm on 9 May, 2023',
          session_3: [turn('D3:1', 'Ana', 'Lisbon.'), turn('D3:2', 'Bo', 'Nice.')],
        },
      },
    ]);
    const { scenarios, report } = await importFile(file);
    expect(issues(report, 'conv-d session_2_date_time')).toEqual(['session-dates-backwards']);
    expect(issues(report, 'conv-d session_3_date_time')).toEqual([]);
    const sessions = scenarios[0]!.scenario.steps.filter((step) => step.kind === 'session');
    expect(sessions.map((step) => (step.kind === 'session' ? step.at : ''))).toEqual([
      '2023-05-08T13:56:00Z',
      '2023-05-01T13:56:00Z',
      '2023-05-09T13:56:00Z',
    ]);
    // Its scenario file still loads (`validate`, `run -c`): the backward date is a warning, never an error.
    const check = checkScenarioText(scenarios[0]!.yaml(), 'conv-d.yaml');
    expect(check.scenario).toBeDefined();
    expect(check.problems.map((problem) => [problem.severity, problem.path, problem.message])).toEqual([
      [
        'warning',
        `steps[${scenarios[0]!.scenario.steps.findIndex((step) => step.kind === 'session' && step.at === '2023-05-01T13:56:00Z')}].at`,
        expect.stringMatching(
          /^2023-05-01T13:56:00Z is before steps\[\d+\]\.at \(2023-05-08T13:56:00Z\): the dates run backwards/u,
        ),
      ],
    ]);
  });
});
