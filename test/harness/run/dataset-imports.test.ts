/**
 * `run --dataset`: what the import repaired and skipped is in the results header (so results.json and
 * the reports say why the run holds fewer questions than the file), and a resumed run keeps it; the
 * header records `--protocol`, so an abstention-only file says it scored nothing.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../harness/run/runner.js';
import type { CellResult } from '../../../harness/results/schema.js';
import { renderConsoleSummary, renderMarkdown } from '../../../reports/index.js';
import { tempDirSync } from '../../helpers/temp-dir.js';

const FIXTURE = 'fixtures/datasets/longmemeval-sample.json';

describe('dataset imports in the results header', () => {
  it('records each file: counts, and the repairs and skips by code with examples; a resumed run records the same', async () => {
    const options = { strategies: ['bm25'], datasets: [`longmemeval:${FIXTURE}`], onWarning: () => {} };
    const saved = new Map<number, CellResult>();
    const first = await runBenchmark({
      ...options,
      store: { open: async () => new Map(), save: async (position, result) => void saved.set(position, result) },
    });
    const [summary] = first.header.imports ?? [];
    expect(summary).toMatchObject({ source: `longmemeval:${FIXTURE}`, units: 13, scenarios: 10, skippedItems: 3 });
    expect(summary?.skipped.map(({ code, count }) => [code, count])).toEqual([
      ['question-type-unknown', 1],
      ['answer-missing', 1],
      ['question-duplicate', 1],
    ]);
    expect(summary?.skipped[1]?.examples).toEqual([{ where: 'a1b2c3d4', message: 'no answer' }]);
    expect(summary?.repaired.map(({ code }) => code)).toContain('answer-number');
    expect(first.header.protocol).toBeUndefined();
    expect(renderMarkdown(first)).toContain(
      `- longmemeval:${FIXTURE} — 13 questions read, 10 imported; skipped 3 (question-type-unknown 1, answer-missing 1, question-duplicate 1); repaired `,
    );

    // Resumed with every cell finished: nothing runs again, and the header says the same of the import.
    const resumed = await runBenchmark({ ...options, store: { open: async () => saved, save: async () => {} } });
    expect(resumed.header.imports).toEqual(first.header.imports);
  });

  it('--protocol longmemeval on a file of abstention questions only says that no question was scored', async () => {
    const questions = JSON.parse(readFileSync(FIXTURE, 'utf8')) as { question_id: string }[];
    const file = path.join(tempDirSync('membench-abstention-'), 'abstention.json');
    writeFileSync(file, JSON.stringify(questions.filter((question) => question.question_id.endsWith('_abs'))));
    const result = await runBenchmark({
      strategies: ['bm25'],
      datasets: [`longmemeval:${file}`],
      protocol: 'longmemeval',
      onWarning: () => {},
    });
    expect(result.header.protocol).toBe('longmemeval');
    const note =
      'no question was scored under the LongMemEval protocol: its only question is an abstention question, which it leaves out';
    expect(renderMarkdown(result)).toContain(note);
    expect(renderConsoleSummary(result, { width: 1000 })).toContain(`--protocol longmemeval: ${note}`);
  });
});
