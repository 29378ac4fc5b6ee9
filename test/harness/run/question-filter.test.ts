/** `--question ID` with `--dataset`: only the named questions (LongMemEval) or conversations (LoCoMo) are planned; an unknown id is refused naming the closest. */
import { describe, expect, it } from 'vitest';
import { isMembenchError } from '../../../harness/core/errors.js';
import { planRun } from '../../../harness/run/runner.js';

const LONGMEMEVAL = 'longmemeval:fixtures/datasets/longmemeval-sample.json';
const LOCOMO = 'locomo:fixtures/datasets/locomo10-sample.json';

describe('--question', () => {
  it('plans only the named questions, by the id reports show or the file own id, in file order', async () => {
    const { scenarios } = await planRun({
      strategies: ['bm25'],
      datasets: [LONGMEMEVAL],
      questions: ['b46e15ed', 'longmemeval-6a1eabeb'],
    });
    expect(scenarios.map((scenario) => scenario.name)).toEqual(['longmemeval-6a1eabeb', 'longmemeval-b46e15ed']);
  });

  it('picks a LoCoMo conversation by its sample_id, with the documents its protocol replays', async () => {
    const { scenarios } = await planRun({
      strategies: ['bm25'],
      datasets: [LOCOMO],
      protocol: 'locomo',
      questions: ['conv-a'],
    });
    expect(scenarios).toHaveLength(3); // the dialog, its observations and its session summaries
    expect(scenarios.every((scenario) => scenario.name.startsWith('locomo-conv-a'))).toBe(true);
  });

  it('refuses an unknown id with exit code 2, naming it and the closest id of the file', async () => {
    const planned = planRun({ strategies: ['bm25'], datasets: [LONGMEMEVAL], questions: ['6a1eabeb', 'b46e15ec'] });
    await expect(planned).rejects.toThrow(
      /--question b46e15ec: no such question in .*longmemeval-sample\.json \(closest: b46e15ed\)/u,
    );
    await planned.catch((error: unknown) => expect(isMembenchError(error) && error.exitCode).toBe(2));
  });

  it('needs a dataset', async () => {
    await expect(planRun({ strategies: ['bm25'], questions: ['x'] })).rejects.toThrow('name it with --dataset');
  });
});
