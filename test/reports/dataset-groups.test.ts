/**
 * A dataset run reads as one suite: a LongMemEval-format file of 60 questions (generated here,
 * six question types plus abstention) gives one leaderboard for the dataset with a breakdown by
 * question type, a console summary of one screen, one junit testcase per strategy and at most a
 * dozen charts — while results.json keeps every question's cell.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../harness/run/runner.js';
import type { RunResult } from '../../harness/results/schema.js';
import { renderConsoleSummary, writeRunOutput } from '../../reports/index.js';
import { renderJunit } from '../../reports/junit.js';
import { tempDir } from '../helpers/temp-dir.js';

const TYPES = [
  'single-session-user',
  'single-session-assistant',
  'single-session-preference',
  'multi-session',
  'temporal-reasoning',
  'knowledge-update',
];

function question(index: number): unknown {
  const type = TYPES[index % TYPES.length]!;
  const abstention = index % 10 === 9;
  const pet = `pet-${index}`;
  return {
    question_id: `q${index}${abstention ? '_abs' : ''}`,
    question_type: type,
    question: `What is the name of my ${abstention ? 'hamster' : 'cat'} number ${index}?`,
    answer: abstention ? 'You never mentioned a hamster.' : pet,
    question_date: '2023/05/30 (Tue) 23:40',
    haystack_session_ids: [`s${index}a`, `s${index}b`],
    haystack_dates: ['2023/05/20 (Sat) 02:21', '2023/05/22 (Mon) 14:10'],
    haystack_sessions: [
      [
        { role: 'user', content: `My cat number ${index} is called ${pet}.`, has_answer: true },
        { role: 'assistant', content: 'What a lovely name!' },
      ],
      [
        { role: 'user', content: 'Any tips for a rainy weekend?' },
        { role: 'assistant', content: 'Board games and soup.' },
      ],
    ],
    answer_session_ids: [`s${index}a`],
  };
}

describe('a dataset run reads as one suite', () => {
  let result: RunResult;
  let dir: string;

  beforeAll(async () => {
    dir = await tempDir('membench-groups-');
    const file = path.join(dir, 'longmemeval_s.json');
    await writeFile(file, JSON.stringify(Array.from({ length: 60 }, (_, index) => question(index))));
    result = await runBenchmark({
      datasets: [`longmemeval:${file}`],
      strategies: ['buffer', 'window', 'bm25'],
      priceDurability: [],
    });
    await writeRunOutput(result, path.join(dir, 'out'), { stepSummary: null });
  }, 120_000);

  it('keeps every question in results.json, in one group', () => {
    expect(result.cells).toHaveLength(180);
    expect(new Set(result.cells.map((cell) => cell.group))).toEqual(new Set(['longmemeval:longmemeval_s.json']));
  });

  it('prints one screen: the group leaderboard and its question types, no per-question rows', () => {
    // Wide enough that no table splits in parts: rows are counted once.
    const text = renderConsoleSummary(result, { width: 1000 });
    expect(text).toContain('leaderboard — group longmemeval:longmemeval_s.json');
    expect(text).toContain("by the dataset's own category");
    for (const type of TYPES) expect(text).toContain(type);
    expect(text).not.toContain('longmemeval-q0');
    // bm25's retrieval figures too: one pooled row per level for the group, not one per question.
    expect(
      text.split('\n').filter((line) => line.includes('│ group longmemeval:longmemeval_s.json │ bm25')),
    ).toHaveLength(2);
    expect(text.split('\n').length).toBeLessThan(70);
    expect(text).toContain('(180 more cells — scenario groups');
    expect(renderConsoleSummary(result, { detail: true })).toContain('longmemeval-q0');
    // One hidden cell is said in the singular.
    const one = {
      ...result,
      cells: [...result.cells.slice(0, 1), ...result.cells.slice(1).map((cell) => ({ ...cell, group: undefined }))],
    };
    expect(renderConsoleSummary(one, { width: 1000 })).toContain('(1 more cell — scenario groups');
  });

  it('writes one junit testcase per strategy for the group, at most a dozen charts, and a report.html led by the group leaderboard', async () => {
    expect(renderJunit(result).match(/<testcase /gu)).toHaveLength(3);
    expect((await readdir(path.join(dir, 'out', 'charts'))).length).toBeLessThanOrEqual(12);
    const html = await readFile(path.join(dir, 'out', 'report.html'), 'utf8');
    const verdict = html.slice(
      html.indexOf('<section id="verdict">'),
      html.indexOf('</section>', html.indexOf('<section id="verdict">')),
    );
    expect(verdict).toContain('Leaderboard — group longmemeval:longmemeval_s.json');
    expect(verdict).toContain("by the dataset's own category");
    const markdown = await readFile(path.join(dir, 'out', 'report.md'), 'utf8');
    expect(markdown).not.toContain('| longmemeval-q0 |');
    expect(markdown).toContain('| group longmemeval:longmemeval_s.json | bm25 |');
  });
});
