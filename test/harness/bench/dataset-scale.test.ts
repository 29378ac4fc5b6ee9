/**
 * The measuring stick of dataset scale (docs/scale.md): the synthetic file is in LongMemEval_S's published format and
 * shape (imported by the real importer without a repair of its structure), seeded, and the bench's
 * "dataset scale" section replays it per strategy. Counts only, never seconds.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchDatasetScale } from '../../../harness/bench/dataset-scale.js';
import { renderBenchReport } from '../../../harness/bench/render.js';
import { syntheticLongMemEval, writeSyntheticLongMemEval } from '../../../harness/bench/synthetic-longmemeval.js';
import { ImportLog, importScenarios } from '../../../harness/scenarios/importers/index.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import type { BenchReport } from '../../../harness/bench/index.js';
import { benchHeader } from '../../helpers/bench-header.js';

interface Question {
  question_id: string;
  question_type: string;
  question: string;
  answer: string | number;
  question_date: string;
  haystack_session_ids: string[];
  haystack_dates: string[];
  haystack_sessions: { role: string; content: string; has_answer?: boolean }[][];
  answer_session_ids: string[];
}

describe('the synthetic LongMemEval_S-shaped file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-lme-synthetic-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('has the published fields, about 50 sessions, 500 messages and 115k tokens per question, and the published type mix', () => {
    // The type of each question and whether it abstains are drawn before its haystack: the mix is read from
    // 500 questions with one short session each, the shape from full-sized ones (the defaults).
    const questions = [
      ...syntheticLongMemEval({ questions: 500, sessions: [1, 1], messages: [2, 2], replySentences: [1, 1] }),
    ] as unknown as Question[];
    expect(questions).toHaveLength(500);
    const types = new Map<string, number>();
    for (const question of questions) types.set(question.question_type, (types.get(question.question_type) ?? 0) + 1);
    expect(Object.fromEntries(types)).toEqual({
      'single-session-user': 70,
      'single-session-assistant': 56,
      'single-session-preference': 30,
      'multi-session': 133,
      'temporal-reasoning': 133,
      'knowledge-update': 78,
    });
    const abstention = questions.filter((question) => question.question_id.endsWith('_abs')).length;
    expect(abstention).toBeGreaterThan(15);
    expect(abstention).toBeLessThan(45);
    const tokens = new TokenCounter('gpt-4o');
    const sample = [...syntheticLongMemEval({ questions: 5 })] as unknown as Question[];
    for (const question of sample) {
      expect(question.haystack_session_ids).toHaveLength(question.haystack_sessions.length);
      expect(question.haystack_dates).toHaveLength(question.haystack_sessions.length);
      expect(question.question_date).toMatch(/^\d{4}\/\d{2}\/\d{2} \([A-Z][a-z]{2}\) \d{2}:\d{2}$/u);
      expect(
        question.answer_session_ids.every(
          (id) => question.haystack_session_ids.includes(id) && id.startsWith('answer_'),
        ),
      ).toBe(true);
      const turns = question.haystack_sessions.flat();
      expect(turns.filter((turn) => turn.has_answer === true).length).toBeGreaterThan(0);
    }
    const messages = sample.flatMap((question) => question.haystack_sessions.flat());
    const perQuestion = (value: number): number => value / sample.length;
    expect(perQuestion(sample.reduce((sum, question) => sum + question.haystack_sessions.length, 0))).toBeGreaterThan(
      44,
    );
    expect(perQuestion(sample.reduce((sum, question) => sum + question.haystack_sessions.length, 0))).toBeLessThan(57);
    expect(perQuestion(messages.length)).toBeGreaterThan(420);
    expect(perQuestion(messages.length)).toBeLessThan(580);
    const tokenCount = perQuestion(messages.reduce((sum, turn) => sum + tokens.countText(turn.content), 0));
    expect(tokenCount).toBeGreaterThan(95_000);
    expect(tokenCount).toBeLessThan(135_000);
  });

  it('plants near misses (the question asked, never answered) in distractor sessions only, without touching the rest of the file', () => {
    const settings = { questions: 24, sessions: [20, 20], messages: [6, 6], replySentences: [2, 3] } as const;
    const withNearMisses = [...syntheticLongMemEval({ ...settings, nearMisses: 0.3 })] as unknown as Question[];
    const without = [...syntheticLongMemEval({ ...settings, nearMisses: 0 })] as unknown as Question[];
    // Content words of each question type that a near miss shares with its question.
    const asked: Record<string, RegExp> = {
      'single-session-user': /\b(degree|graduat\w*)\b/iu,
      'single-session-assistant': /\b(book|suggest\w*|read)\b/iu,
      'single-session-preference': /\b(destination|holiday)\b/iu,
      'multi-session': /\b(bought|sale|things)\b/iu,
      'temporal-reasoning': /\b(start\w*|days)\b/iu,
      'knowledge-update': /\b(pet|home)\b/iu,
    };
    let planted = 0;
    for (const [q, question] of withNearMisses.entries()) {
      const plain = without[q]!;
      expect(question.haystack_session_ids).toEqual(plain.haystack_session_ids);
      expect([question.question, question.answer]).toEqual([plain.question, plain.answer]);
      for (const [s, session] of question.haystack_sessions.entries()) {
        for (const [t, turn] of session.entries()) {
          const before = plain.haystack_sessions[s]![t]!;
          if (turn.content === before.content) continue;
          // A near miss leads a user turn of a distractor session, is no evidence and does not give the answer.
          planted++;
          expect(turn.role).toBe('user');
          expect(question.answer_session_ids).not.toContain(question.haystack_session_ids[s]);
          expect(turn.has_answer).toBeUndefined();
          const lead = turn.content.slice(0, -before.content.length - 1);
          expect(`${lead} ${before.content}`).toBe(turn.content);
          expect(lead).toMatch(asked[question.question_type]!);
          expect(lead.toLowerCase()).not.toContain(String(question.answer).toLowerCase());
        }
      }
    }
    // About 0.3 of 19 distractor sessions in each of 24 haystacks.
    expect(planted).toBeGreaterThan(24 * 19 * 0.2);
    expect(planted).toBeLessThan(24 * 19 * 0.4);
  });

  it('is the same file for the same seed, and the importer reads it as LongMemEval', async () => {
    const [a, b] = [path.join(dir, 'a.json'), path.join(dir, 'b.json')];
    await writeSyntheticLongMemEval(a, { questions: 3, seed: 9 });
    await writeSyntheticLongMemEval(b, { questions: 3, seed: 9 });
    expect(await readFile(a, 'utf8')).toBe(await readFile(b, 'utf8'));
    const log = new ImportLog('longmemeval', a);
    const scenarios = [];
    for await (const imported of importScenarios('longmemeval', a, log)) scenarios.push(imported.scenario);
    expect(scenarios).toHaveLength(3);
    const report = log.report();
    expect(report.skipped).toEqual([]);
    // Its only repairs are numeric answers written as strings, as in the published file.
    expect(new Set(report.repaired.map((issue) => issue.code))).toEqual(
      new Set(report.repaired.length > 0 ? ['answer-number'] : []),
    );
    const probes = scenarios.flatMap((scenario) => scenario.steps.filter((step) => step.kind === 'probe'));
    expect(probes).toHaveLength(3);
  });
});

describe('bench: dataset scale', () => {
  it('replays the file once per strategy and reports per question and per message against the floor', async () => {
    const dataset = await benchDatasetScale({ questions: 1, strategies: ['buffer', 'bm25'] });
    expect(dataset.questions).toBe(1);
    expect(dataset.messages).toBeGreaterThan(400);
    expect(dataset.floor.questions).toBe(1);
    expect(dataset.floor.msPerMessage).toBeGreaterThan(0);
    expect(dataset.rows.map((row) => [row.strategy, row.questions, row.errors])).toEqual([
      ['buffer', 1, 0],
      ['bm25', 1, 0],
    ]);
    for (const row of dataset.rows) {
      expect(row.msPerMessage).toBeCloseTo(row.wallMs / dataset.messages);
      expect(row.floorRatio).toBeCloseTo(row.msPerMessage / dataset.floor.msPerMessage);
      expect(row.peakRssMb).toBeGreaterThan(0);
    }
    // Extrapolated from the measured CPU per question, to the published 500 questions over the cores.
    const cpuMinutes = (dataset.rows.reduce((sum, row) => sum + row.cpuMs / row.questions, 0) * 500) / 60_000;
    expect(dataset.fullFile.questions).toBe(500);
    expect(dataset.fullFile.cpuMinutes).toBeCloseTo(cpuMinutes);
    expect(dataset.fullFile.wallMinutes).toBeCloseTo(cpuMinutes / dataset.fullFile.cores);
    const report = {
      header: benchHeader({ loadAverage: { start: 1, end: 1 }, sections: ['dataset'], durationMs: 1 }),
      dataset,
      targets: [],
    } as BenchReport;
    expect(renderBenchReport(report)).toMatch(
      /## Dataset scale[\s\S]*\| bm25 +\| 1 [\s\S]*Extrapolated \(not measured\): these 2 strategies over all 500 questions/u,
    );
  }, 120_000);
});
