/**
 * The done-means command of `--protocol longmemeval` on the built CLI: on a small synthetic file in
 * LongMemEval's format, `membench run --dataset longmemeval:FILE --protocol longmemeval -s bm25`
 * prints the paper's table with session-level recall_all and NDCG at 5 and 10 from session
 * documents, the figures results.json holds.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { syntheticLongMemEval } from '../../harness/bench/synthetic-longmemeval.js';
import { poolSummaries } from '../../harness/results/retrieval.js';
import type { OkCell } from '../../harness/results/schema.js';
import { membench } from './helpers.js';
import type { OkRun } from '../helpers/cells.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * The cells of a protocol table row (`│ strategy │ unit │ metric │ n │ @1 │ …`), trimmed: the
 * `table`-th such table of the output (LongMemEval prints one table per averaging). A table too wide
 * for the console goes on in a second one, its key columns repeated: the row continues after them.
 */
function row(stdout: string, strategy: string, unit: string, metric: string, table = 0): string[] | undefined {
  const parts = stdout
    .split('\n')
    .map((line) => line.split('│').map((cell) => cell.trim()))
    .filter((cells) => cells[1] === strategy && cells[2] === unit && cells[3] === metric)
    .map((cells) => cells.slice(1, -1));
  // Each table is printed as a key part and a continuation part.
  const width = parts.length / Math.max(1, tables(stdout));
  const mine = parts.slice(table * width, (table + 1) * width);
  return mine.length === 0 ? undefined : [...mine[0]!, ...mine.slice(1).flatMap((cells) => cells.slice(4))];
}

/** How many protocol tables (averagings) the output prints. */
function tables(stdout: string): number {
  return Math.max(1, (stdout.match(/averaged as /gu) ?? []).length);
}

describe('membench run --protocol longmemeval', () => {
  it('prints session-level recall_all@5/@10 and NDCG@5/@10 from session documents over the non-abstention questions', async () => {
    const dir = await tempDir('membench-protocol-cli-');
    const file = path.join(dir, 'longmemeval_s-synthetic.json');
    // 8 questions: the fewest of this generator's draws that hold an abstention and a single-session-assistant question.
    const questions = [
      ...syntheticLongMemEval({ questions: 8, sessions: [6, 6], messages: [6, 6], replySentences: [3, 6] }),
    ] as { question_id: string; question_type: string }[];
    // Abstention questions and those whose evidence is an assistant turn are left out.
    const scored = questions.filter(
      (question) => !question.question_id.endsWith('_abs') && question.question_type !== 'single-session-assistant',
    ).length;
    expect(scored).toBeGreaterThan(0);
    expect(scored).toBeLessThan(questions.length);
    await writeFile(file, JSON.stringify(questions));
    const out = path.join(dir, 'out');
    const result = await membench([
      'run',
      '--dataset',
      `longmemeval:${file}`,
      '--protocol',
      'longmemeval',
      '-s',
      'bm25',
      '-w',
      '1',
      '--out',
      out,
    ]);
    expect(result.stderr).not.toMatch(/error/iu);
    expect(result.code).toBe(0);
    // The table's columns (a table too wide for the console goes on in a second one, its keys repeated).
    const columns = result.stdout
      .split('\n')
      .filter((line) => /│ strategy\s+│ unit\s+│ metric/u.test(line))
      .flatMap((line) =>
        line
          .split('│')
          .map((cell) => cell.trim())
          .slice(1, -1),
      );
    expect([...new Set(columns)]).toEqual(['strategy', 'unit', 'metric', 'n', '@1', '@3', '@5', '@10', '@30', '@50']);
    // One table per averaging, each captioned with the code it follows, in this order.
    const first = result.stdout.indexOf('averaged as the current src/retrieval/run_retrieval.py');
    expect(first).toBeGreaterThan(0);
    expect(result.stdout.indexOf('averaged as src/evaluation/print_retrieval_metrics.py')).toBeGreaterThan(first);

    const run = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as OkRun;
    const sessionCells = run.cells.filter((cell) => cell.options.unit === 'session' && cell.options.ranker === 'fts5');
    expect(sessionCells).toHaveLength(questions.length);
    const nonAbstention = questions.filter((question) => !question.question_id.endsWith('_abs')).length;
    expect(nonAbstention).toBeGreaterThan(scored);
    // Both averagings: the n scored (run_retrieval.py) and every non-abstention question (print_retrieval_metrics.py).
    for (const [table, n, summaryOf] of [
      [0, scored, (cell: OkCell) => cell.protocolRetrieval?.summary],
      [1, nonAbstention, (cell: OkCell) => cell.protocolRetrieval?.nonAbstentionSummary],
    ] as const) {
      const pooled = poolSummaries(sessionCells.flatMap((cell) => summaryOf(cell) ?? []))!.session!;
      expect(pooled.n).toBe(n);
      const strategy = 'bm25(index=user,unit=session,ranker=fts5)';
      for (const [metric, key] of [
        ['recall_all', 'recallAll'],
        ['NDCG', 'ndcg'],
      ] as const) {
        const printed = row(result.stdout, strategy, 'session', metric, table);
        expect(printed?.[3]).toBe(String(n));
        for (const [k, column] of [
          [5, 6],
          [10, 7],
        ] as const)
          expect(printed?.[column]).toBe(pooled.atK.find((at) => at.k === k)![key].toFixed(2));
      }
    }
    const strategy = 'bm25(index=user,unit=session,ranker=fts5)';
    // Session documents have no turn rows; the turn unit prints both.
    expect(row(result.stdout, strategy, 'turn', 'recall_all')).toBeUndefined();
    expect(row(result.stdout, 'bm25(index=user,unit=turn,ranker=fts5)', 'turn', 'recall_all')).toBeDefined();
    expect(row(result.stdout, 'bm25(index=user,unit=turn,ranker=fts5)', 'session', 'NDCG')).toBeDefined();
    // The paper's BM25 runs beside membench's, each unit its own labelled row.
    for (const unit of ['session', 'turn'])
      expect(row(result.stdout, `bm25(index=user,unit=${unit},ranker=okapi-paper)`, 'session', 'recall_all')?.[3]).toBe(
        String(scored),
      );
    expect(run.cells.filter((cell) => cell.options.ranker === 'okapi-paper')).toHaveLength(2 * questions.length);
  });
});

describe('membench run --protocol locomo', () => {
  it('prints the dialog, observation and summary units in one table, each row the pooled figures of its cells', async () => {
    const dir = await tempDir('membench-protocol-locomo-');
    const out = path.join(dir, 'out');
    const file = 'fixtures/datasets/locomo10-sample.json';
    const result = await membench([
      'run',
      '--dataset',
      `locomo:${file}`,
      '--protocol',
      'locomo',
      '-s',
      'bm25',
      '-w',
      '1',
      '--out',
      out,
    ]);
    expect(result.code).toBe(0);
    const run = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as OkRun;
    for (const unit of ['dialog', 'observation', 'summary'] as const) {
      for (const ranker of ['fts5', 'okapi-paper']) {
        const cells = run.cells.filter(
          (cell) => (cell.protocolRetrieval?.documents ?? 'dialog') === unit && cell.options.ranker === ranker,
        );
        expect(cells).toHaveLength(2);
        const pooled = poolSummaries(cells.flatMap((cell) => cell.protocolRetrieval?.summary ?? []))!.turn;
        const printed = row(result.stdout, `bm25(unit=message,ranker=${ranker})`, unit, 'recall');
        expect(printed?.[3]).toBe(String(pooled.n));
        expect(printed?.slice(4)).toEqual(pooled.atK.map((at) => at.recall!.toFixed(2)));
      }
    }
  });

  it('an observation field of the wrong type is bad input: exit 2, the file and the field named, no stack trace', async () => {
    const dir = await tempDir('membench-protocol-locomo-');
    const file = path.join(dir, 'locomo.json');
    const samples = JSON.parse(readFileSync('fixtures/datasets/locomo10-sample.json', 'utf8')) as Record<
      string,
      unknown
    >[];
    samples[1]!.observation = { session_1_observation: { Ruth: [['Ruth grows tomatoes.', 12]] } };
    await writeFile(file, JSON.stringify(samples));
    const args = [
      'run',
      '--dataset',
      `locomo:${file}`,
      '--protocol',
      'locomo',
      '-s',
      'bm25',
      '--out',
      path.join(dir, 'out'),
    ];
    const result = await membench(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${file}: conv-b observation.session_1_observation.Ruth[0][1]: expected a dia_id like "D1:3" or a list of them, got number 12`,
    );
    expect(result.stderr).not.toMatch(/\n\s+at /u);
  });
});

describe('membench run --protocol with no retrieving strategy', () => {
  it('warns on stderr that no table will be printed, and prints none', async () => {
    const dir = await tempDir('membench-protocol-none-');
    const result = await membench([
      'run',
      '--dataset',
      'locomo:fixtures/datasets/locomo10-sample.json',
      '--limit',
      '1',
      '--protocol',
      'locomo',
      '-s',
      'buffer',
      '-s',
      'window',
      '-w',
      '1',
      '-q',
      '--out',
      path.join(dir, 'out'),
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(
      "warning: --protocol locomo: none of the run's strategies (buffer, window) retrieves (declares `ranks`), so no LoCoMo table will be printed: add a retrieving strategy (vector, bm25, hybrid)",
    );
    expect(result.stdout).not.toMatch(/│ strategy\s+│ unit\s+│ metric/u);
  });
});
