/** The LongMemEval importer on fixtures/datasets/longmemeval-sample.json (published layout and quirks). */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  ImportLog,
  importScenarios,
  type ImportedScenario,
  type ImportReport,
} from '../../../../harness/scenarios/importers/index.js';
import { parseLongMemEvalDate } from '../../../../harness/scenarios/importers/longmemeval.js';
import { checkScenarioText } from '../../../../harness/scenarios/load.js';
import type { ProbeStep, Scenario, UserStep } from '../../../../harness/scenarios/format.js';
import { tempDirSync } from '../../../helpers/temp-dir.js';

const FIXTURE = 'fixtures/datasets/longmemeval-sample.json';

/** Imports a file written as this exact text (number literals a double cannot hold stay as written). */
async function importText(text: string): Promise<{ scenarios: Map<string, Scenario>; report: ImportReport }> {
  const file = path.join(tempDirSync('membench-longmemeval-'), 'longmemeval.json');
  writeFileSync(file, text);
  const log = new ImportLog('longmemeval', file);
  const scenarios = new Map<string, Scenario>();
  for await (const imported of importScenarios('longmemeval', file, log))
    scenarios.set(imported.scenario.name, imported.scenario);
  return { scenarios, report: log.report() };
}

async function importFile(
  limit?: number,
): Promise<{ scenarios: Map<string, Scenario>; yaml: ImportedScenario[]; report: ImportReport }> {
  const log = new ImportLog('longmemeval', FIXTURE);
  const yaml: ImportedScenario[] = [];
  for await (const imported of importScenarios('longmemeval', FIXTURE, log, limit === undefined ? {} : { limit }))
    yaml.push(imported);
  return { scenarios: new Map(yaml.map((item) => [item.scenario.name, item.scenario])), yaml, report: log.report() };
}

const probeOf = (scenario: Scenario | undefined): ProbeStep =>
  scenario!.steps.find((step): step is ProbeStep => step.kind === 'probe')!;
const usersOf = (scenario: Scenario | undefined): UserStep[] =>
  scenario!.steps.filter((step): step is UserStep => step.kind === 'user');
const codes = (report: ImportReport, item: string) =>
  [...report.repaired, ...report.skipped].filter((issue) => issue.item === item).map((issue) => issue.code);

describe('LongMemEval fixture', async () => {
  const { scenarios, yaml, report } = await importFile();

  test('one valid scenario per question; every question accounted for', () => {
    for (const item of yaml) {
      const check = checkScenarioText(item.yaml(), `${item.scenario.name}.yaml`);
      expect(check.problems).toEqual([]);
      // Validated as data at import: the same Scenario its YAML file loads as.
      expect(check.scenario).toEqual({ ...item.scenario, source: `${item.scenario.name}.yaml` });
    }
    expect(report.items).toBe(13);
    expect(report.imported + report.repairedItems + report.skippedItems).toBe(13);
    expect({
      imported: report.imported,
      repaired: report.repairedItems,
      skipped: report.skippedItems,
      scenarios: report.scenarios,
    }).toEqual({ imported: 6, repaired: 4, skipped: 3, scenarios: 10 });
  });

  test('sessions in order with dates, user turns with their replies, evidence from has_answer', () => {
    const scenario = scenarios.get('longmemeval-7f3a91c2');
    expect(scenario!.tags).toEqual(['longmemeval', 'imported', 'single-session-user']);
    expect(
      scenario!.steps.filter((step) => step.kind === 'session').map((step) => step.kind === 'session' && step.at),
    ).toEqual(['2023-05-20T02:21:00Z', '2023-05-20T02:57:00Z', '2023-05-22T14:10:00Z']);
    expect(usersOf(scenario).map((step) => step.id)).toEqual([
      'sharegpt_yywfIrx_0.t0',
      '85a1be56_1.t0',
      'answer_280352e9.t0',
      'answer_280352e9.t2',
    ]);
    expect(usersOf(scenario)[2]).toMatchObject({
      assistant: 'Congratulations! Put the degree under Education, with the year and your university.',
      at: '2023-05-22T14:10:00Z',
    });
    expect(probeOf(scenario)).toMatchObject({
      id: '7f3a91c2',
      probe: '[Current date: 2023/05/30 (Tue) 23:40] What degree did I graduate with?',
      expect: ['Business Administration'],
      category: 'extraction',
      evidence: ['answer_280352e9.t0'],
    });
  });

  test('question types map to categories; has_answer on an assistant turn is cited as that turn (the reply id)', () => {
    expect(probeOf(scenarios.get('longmemeval-gpt4_2655b836'))).toMatchObject({
      category: 'extraction',
      evidence: ['answer_sharegpt_4d1b7e2_0.t1'],
    });
    expect(
      scenarios.get('longmemeval-gpt4_2655b836')!.steps.find((step) => step.id === 'answer_sharegpt_4d1b7e2_0.t0'),
    ).toMatchObject({ replyId: 'answer_sharegpt_4d1b7e2_0.t1' });
    expect(probeOf(scenarios.get('longmemeval-6a1eabeb'))).toMatchObject({
      category: 'update',
      evidence: ['answer_9a1c_1.t0', 'answer_9a1c_2.t0'],
    });
    expect(probeOf(scenarios.get('longmemeval-0a995998'))).toMatchObject({ category: 'multi-hop', expect: ['3'] });
    expect(probeOf(scenarios.get('longmemeval-8a2466db'))).toMatchObject({ category: 'extraction' });
  });

  test('numeric answers become strings (repaired)', () => {
    expect(probeOf(scenarios.get('longmemeval-b46e15ed'))).toMatchObject({ category: 'temporal', expect: ['9'] });
    expect(codes(report, 'b46e15ed')).toEqual(['answer-number']);
  });

  test('_abs questions are abstention probes without expect and without evidence', () => {
    const scenario = scenarios.get('longmemeval-0862e8bf_abs');
    const probe = probeOf(scenario);
    expect(probe).toMatchObject({ category: 'abstention', evidence: [] });
    expect(probe).not.toHaveProperty('expect');
    expect(scenario!.tags).toContain('abstention');
    expect(codes(report, '0862e8bf_abs')).toEqual([]);
  });

  test('sessions out of date order (oracle file) are sorted by date', () => {
    const scenario = scenarios.get('longmemeval-c4a1ceb8');
    expect(usersOf(scenario).map((step) => step.id)).toEqual(['answer_e5f6_1.t0', 'answer_e5f6_2.t0']);
    expect(codes(report, 'c4a1ceb8')).toEqual(['sessions-reordered']);
  });

  test('turn quirks: every turn is saved as it is (an opening assistant turn on its own, unanswered user turns without a reply); empty turns dropped', () => {
    const scenario = scenarios.get('longmemeval-d52b4f67')!;
    expect(codes(report, 'd52b4f67')).toEqual(['turn-empty']);
    const messages = scenario.steps.flatMap((step): Record<string, unknown>[] =>
      step.kind === 'user'
        ? [{ id: step.id, user: step.user, assistant: step.assistant, reply: step.reply }]
        : step.kind === 'assistant'
          ? [{ id: step.id, assistant: step.assistant }]
          : [],
    );
    expect(messages).toEqual([
      { id: 'ultrachat_55012.t0', assistant: 'Hello! How can I help you today?' },
      {
        id: 'ultrachat_55012.t1',
        user: "What time is it in Tokyo when it's 6am in Denver?",
        assistant: "It's 9pm the same day in Tokyo.",
        reply: undefined,
      },
      { id: 'answer_a0b1_1.t0', user: 'Note to self: parked at level 3, row F.', assistant: undefined, reply: false },
      { id: 'answer_a0b1_1.t1', user: 'Also remind me to buy sunscreen.', assistant: undefined, reply: false },
      { id: 'answer_a0b1_1.t3', user: 'Thanks!', assistant: undefined, reply: false },
    ]);
    expect(probeOf(scenario).evidence).toEqual(['answer_a0b1_1.t0']);
    expect(probeOf(scenario).label).toBe('single-session-user');
  });

  test('no has_answer turn: the answer sessions are the evidence', () => {
    expect(probeOf(scenarios.get('longmemeval-e3038f8c')).evidence).toEqual(['answer_f00d_1.t0', 'answer_f00d_1.t1']);
    expect(codes(report, 'e3038f8c')).toEqual(['evidence-from-sessions']);
  });

  test('unknown question_type, missing answer and duplicate question_id are skipped with reasons', () => {
    expect(codes(report, 'f9e8d7c6')).toEqual(['question-type-unknown']);
    expect(codes(report, 'a1b2c3d4')).toEqual(['answer-missing']);
    expect(codes(report, '7f3a91c2 (question[12])')).toEqual(['question-duplicate']);
    expect(scenarios.has('longmemeval-f9e8d7c6')).toBe(false);
  });

  test('a field there with the wrong type is said as such, not as missing', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const sessions = structuredClone(first!.haystack_sessions) as { content: unknown }[][];
    sessions[0]![0]!.content = ['a list'];
    const { report: typed } = await importText(
      JSON.stringify([
        { ...first, question_id: 'q1', answer: true },
        { ...first, question_id: 'q2', question: 42 },
        { ...first, question_id: { a: 1 } },
        { ...first, question_id: 'q4', haystack_sessions: sessions },
        { ...first, question_id: 'q5', answer: '   ' },
      ]),
    );
    const message = (where: string) =>
      [...typed.repaired, ...typed.skipped].find((issue) => issue.where.startsWith(where))?.message;
    expect(message('q1')).toBe('answer true is not a string or a number');
    expect(message('q2')).toBe('question 42 is not a string');
    expect(message('question[2]')).toBe('question_id {"a":1} is not a string or a number');
    expect(message('q4 haystack_sessions')).toBe('a user turn whose content ["a list"] is not a string: dropped');
    expect(message('q5')).toBe('no answer');
  });

  test('a lone UTF-16 surrogate, read as U+FFFD, is said where it was (a gold answer changed in silence before)', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const text = JSON.stringify([{ ...first, question_id: 'q1', answer: 'Business XAdministration' }]).replace(
      'XAdmin',
      '\\ud800Admin',
    );
    const { scenarios: imported, report: lone } = await importText(text);
    expect(lone.repaired.find((issue) => issue.code === 'lone-surrogate')).toMatchObject({
      where: 'q1',
      message:
        'a string holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape no text can hold), read as U+FFFD: answer',
      item: 'q1',
    });
    expect(probeOf(imported.get('longmemeval-q1')).expect).toEqual(['Business \ufffdAdministration']);
  });

  test('a field the question lacks is said as missing, never as "undefined"', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const { question_type: _type, ...untyped } = first!;
    const { question_date: _date, ...undated } = first!;
    const sessions = first!.haystack_sessions as Record<string, unknown>[][];
    const roleless = {
      ...first!,
      question_id: 'roleless',
      haystack_sessions: [[{ content: 'who said this?' }, ...sessions[0]!], ...sessions.slice(1)],
    };
    const { report: missing } = await importText(
      JSON.stringify([untyped, { ...undated, question_id: 'undated' }, roleless]),
    );
    const messages = [...missing.skipped, ...missing.repaired].map((issue) => issue.message);
    expect(messages).toContainEqual(
      expect.stringMatching(/^no question_type \(expected one of single-session-user, /u),
    );
    expect(messages).toContain(
      'no question_date (expected a date like "2023/05/30 (Tue) 23:40"): asked without the current date',
    );
    expect(messages).toContain('no role (expected user or assistant): dropped');
    expect(messages.join('\n')).not.toContain('undefined');
  });

  test('has_answer spelled "true" or 1 marks the turn, said as a repair; a number as content is said too', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const sessions = (first!.haystack_sessions as Record<string, unknown>[][]).map((session) =>
      session.map((turn): Record<string, unknown> => ({ ...turn, has_answer: undefined })),
    );
    const last = sessions.length - 1;
    sessions[last]![0] = { ...sessions[last]![0], has_answer: 'true' };
    sessions[0]![0] = { ...sessions[0]![0], content: 7, has_answer: 'maybe' };
    const { scenarios: marked, report: said } = await importText(
      JSON.stringify([{ ...first, haystack_sessions: sessions }]),
    );
    const evidence = probeOf([...marked.values()][0]).evidence;
    expect(evidence).toHaveLength(1);
    expect(evidence[0]).toMatch(/\.t0$/u);
    const messages = said.repaired.map((issue) => `${issue.code}: ${issue.message}`);
    expect(messages).toContain('has-answer-not-boolean: has_answer "true" is not a boolean: read as true');
    expect(messages).toContain('has-answer-not-boolean: has_answer "maybe" is not true or false: read as false');
    expect(messages).toContain('content-number: content 7 is a number: read as the text "7"');
  });

  test('a turn marked has_answer in a session whose id does not hold "answer" stays evidence, said as a repair', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const ids = first!.haystack_session_ids as string[];
    const plain = ids.findIndex((id) => !id.includes('answer'));
    const sessions = (first!.haystack_sessions as Record<string, unknown>[][]).map((session, index) =>
      index === plain ? session.map((turn) => ({ ...turn, has_answer: true })) : session,
    );
    const { scenarios, report: said } = await importText(JSON.stringify([{ ...first, haystack_sessions: sessions }]));
    const marked = sessions[plain]!.length;
    const outside = said.repaired.filter((issue) => issue.code === 'has-answer-outside-answer-session');
    expect(outside.map((issue) => issue.message)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${marked} turns? marked has_answer in session ${ids[plain]}, whose id does not hold "answer": kept as evidence`,
          'u',
        ),
      ),
    ]);
    // Kept: the file's label is the evidence, the reference code's rule only said.
    expect(probeOf([...scenarios.values()][0]).evidence.length).toBeGreaterThanOrEqual(marked);
    // The published shape (has_answer only in answer sessions) says nothing.
    const { report: published } = await importText(JSON.stringify([first]));
    expect(published.repaired.map((issue) => issue.code)).not.toContain('has-answer-outside-answer-session');
  });

  test('session ids and dates that do not match the sessions are counted in the number they take', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const { report: said } = await importText(
      JSON.stringify([{ ...first, haystack_session_ids: ['only'], haystack_dates: ['2023/05/20 (Sat) 02:21'] }]),
    );
    const messages = said.repaired.map((issue) => issue.message);
    expect(messages).toContain('1 session id for 3 sessions: missing ones numbered');
    expect(messages).toContain('1 date for 3 sessions: sessions without one have no timestamp');
  });

  test('an empty haystack session is said where it is, not dropped in silence; the others are replayed', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const sessions = first!.haystack_sessions as unknown[][];
    const { scenarios, report: said } = await importText(
      JSON.stringify([
        {
          ...first,
          haystack_session_ids: [...(first!.haystack_session_ids as string[]), 'empty_1'],
          haystack_dates: [...(first!.haystack_dates as string[]), '2023/05/29 (Mon) 10:00'],
          haystack_sessions: [...sessions, []],
        },
      ]),
    );
    const [scenario] = [...scenarios.values()];
    expect(scenario!.steps.filter((step) => step.kind === 'session')).toHaveLength(sessions.length);
    expect(
      said.repaired.filter((issue) => issue.code === 'session-empty').map((issue) => [issue.where, issue.message]),
    ).toEqual([
      [`${first!.question_id} haystack_sessions[${sessions.length}]`, 'an empty session (no turns): ignored'],
    ]);
  });

  test('a session id used twice is said, and answer_session_ids name its first session only (not both)', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const sessions = (first!.haystack_sessions as Record<string, unknown>[][]).map((session) =>
      session.map(({ has_answer: _marked, ...turn }) => turn),
    );
    const { scenarios: imported, report: said } = await importText(
      JSON.stringify([
        {
          ...first,
          haystack_session_ids: ['answer_280352e9', '85a1be56_1', 'answer_280352e9'],
          haystack_sessions: sessions,
        },
      ]),
    );
    expect(said.repaired.find((issue) => issue.code === 'session-id-duplicate')).toEqual({
      where: '7f3a91c2 haystack_session_ids[2]',
      code: 'session-id-duplicate',
      message:
        'session id "answer_280352e9" is used by an earlier session (haystack_session_ids[0]): answer_session_ids name that one only',
      item: '7f3a91c2',
    });
    expect(probeOf(imported.get('longmemeval-7f3a91c2')).evidence).toEqual([
      'answer_280352e9.t0',
      'answer_280352e9.t1',
    ]);
  });

  test('answer_session_ids that is not a list is said as that, not as answer sessions missing from the haystack', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const sessions = (first!.haystack_sessions as Record<string, unknown>[][]).map((session) =>
      session.map(({ has_answer: _marked, ...turn }) => turn),
    );
    const { report: said } = await importText(
      JSON.stringify([{ ...first, haystack_sessions: sessions, answer_session_ids: 'answer_280352e9' }]),
    );
    expect(said.repaired.find((issue) => issue.code === 'evidence-none')).toMatchObject({
      where: '7f3a91c2',
      message:
        'no turn is marked has_answer and answer_session_ids "answer_280352e9" is not a list of session ids: probe kept without evidence',
    });
  });

  test('answer_session_ids naming sessions not in the haystack (or entries of no id type) are said, beside the evidence the others give', async () => {
    const [first] = JSON.parse(readFileSync(FIXTURE, 'utf8')) as Record<string, unknown>[];
    const sessions = (first!.haystack_sessions as Record<string, unknown>[][]).map((session) =>
      session.map(({ has_answer: _marked, ...turn }) => turn),
    );
    const known = first!.answer_session_ids as string[];
    const { report: said, scenarios: imported } = await importText(
      JSON.stringify([
        { ...first, haystack_sessions: sessions, answer_session_ids: [...known, 'answer_gone', null] },
        { ...first, question_id: 'q-none', haystack_sessions: sessions, answer_session_ids: ['answer_gone'] },
      ]),
    );
    expect(said.repaired.filter((issue) => issue.where === '7f3a91c2').map((issue) => issue.code)).toEqual([
      'answer-session-unknown',
      'evidence-from-sessions',
    ]);
    expect(said.repaired.find((issue) => issue.code === 'answer-session-unknown')?.message).toBe(
      `answer_session_ids "answer_gone", null name no haystack session: the other answer sessions' turns are the evidence`,
    );
    expect(probeOf(imported.get('longmemeval-7f3a91c2')).evidence?.length).toBeGreaterThan(0);
    expect(said.repaired.find((issue) => issue.where === 'q-none')).toMatchObject({
      code: 'evidence-none',
      message:
        'no turn is marked has_answer and no answer session is in the haystack (answer_session_ids "answer_gone"): probe kept without evidence',
    });
  });

  test('--limit N imports the first N questions', async () => {
    const limited = await importFile(2);
    expect([...limited.scenarios.keys()]).toEqual(['longmemeval-7f3a91c2', 'longmemeval-gpt4_2655b836']);
    expect(limited.report.units).toBe(2);
  });
});

test('parseLongMemEvalDate', () => {
  expect(parseLongMemEvalDate('2023/05/20 (Sat) 02:21')).toBe('2023-05-20T02:21:00Z');
  expect(parseLongMemEvalDate('2023/05/30')).toBe('2023-05-30T00:00:00Z');
  expect(parseLongMemEvalDate('2023/02/30 (Thu) 10:00')).toBeUndefined();
  expect(parseLongMemEvalDate('May 30, 2023')).toBeUndefined();
});

test('a numeric answer a double cannot hold keeps the digits the file wrote', async () => {
  const question = (id: string, answer: string) =>
    `{"question_id": "${id}", "question_type": "single-session-user", "question": "What is my account number?", "answer": ${answer}, "question_date": "2023/05/30 (Tue) 23:40", "haystack_session_ids": ["answer_1"], "haystack_dates": ["2023/05/20 (Sat) 02:21"], "haystack_sessions": [[{"role": "user", "content": "My account number is 12345678901234567890.", "has_answer": true}]], "answer_session_ids": ["answer_1"]}`;
  const { scenarios, report } = await importText(
    `[${question('big', '12345678901234567890')}, ${question('pi', '3.14159265358979323846')}, ${question('small', '9')}]`,
  );
  // Read as a double, 12345678901234567890 is 12345678901234567000.
  expect(probeOf(scenarios.get('longmemeval-big'))).toMatchObject({ expect: ['12345678901234567890'] });
  expect(probeOf(scenarios.get('longmemeval-pi'))).toMatchObject({ expect: ['3.14159265358979323846'] });
  expect(probeOf(scenarios.get('longmemeval-small'))).toMatchObject({ expect: ['9'] });
  expect(report.repaired.find((issue) => issue.item === 'big')?.message).toBe(
    'answer 12345678901234567890 is a number: written as the string "12345678901234567890"',
  );
});

test("a question's description counts its sessions and turns in the singular when there is one", async () => {
  const { scenarios } = await importText(
    JSON.stringify([
      {
        question_id: 'one1',
        question_type: 'single-session-user',
        question: 'Where do I live?',
        answer: 'Lisbon',
        question_date: '2023/05/21 (Sun) 10:00',
        haystack_session_ids: ['answer_1'],
        haystack_dates: ['2023/05/20 (Sat) 02:21'],
        haystack_sessions: [[{ role: 'user', content: 'I live in Lisbon.', has_answer: true }]],
        answer_session_ids: ['answer_1'],
      },
    ]),
  );
  expect(scenarios.get('longmemeval-one1')!.description).toMatch(/: 1 session \(1 turn\) and one question;/u);
});
