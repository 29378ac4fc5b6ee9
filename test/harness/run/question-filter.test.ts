/** `--question ID` with `--dataset`: only the named questions (LongMemEval) or conversations (LoCoMo) are planned; an unknown id is refused naming the closest. */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isMembenchError } from '../../../harness/core/errors.js';
import { plannedCells } from '../../helpers/planned.js';
import { MAX_SCENARIO_NAME_CHARS } from '../../../harness/scenarios/scenario-name.js';
import { tempDirSync } from '../../helpers/temp-dir.js';

const LONGMEMEVAL = 'longmemeval:fixtures/datasets/longmemeval-sample.json';
const LOCOMO = 'locomo:fixtures/datasets/locomo10-sample.json';

describe('--question', () => {
  it('plans only the named questions, by the id reports show or the file own id, in file order', async () => {
    const { scenarios } = await plannedCells({
      strategies: ['bm25'],
      datasets: [LONGMEMEVAL],
      questions: ['b46e15ed', 'longmemeval-6a1eabeb'],
    });
    expect(scenarios.map((scenario) => scenario.name)).toEqual(['longmemeval-6a1eabeb', 'longmemeval-b46e15ed']);
  });

  it('picks a LoCoMo conversation by its sample_id, with the documents its protocol replays', async () => {
    const { scenarios } = await plannedCells({
      strategies: ['bm25'],
      datasets: [LOCOMO],
      protocol: 'locomo',
      questions: ['conv-a'],
    });
    expect(scenarios).toHaveLength(3); // the dialog, its observations and its session summaries
    expect(scenarios.every((scenario) => scenario.name.startsWith('locomo-conv-a'))).toBe(true);
  });

  it('refuses an unknown id with exit code 2, naming it and the closest id of the file', async () => {
    const planned = plannedCells({
      strategies: ['bm25'],
      datasets: [LONGMEMEVAL],
      questions: ['6a1eabeb', 'b46e15ec'],
    });
    await expect(planned).rejects.toThrow(
      /--question b46e15ec: no such question in .*longmemeval-sample\.json \(closest: b46e15ed\)/u,
    );
    await planned.catch((error: unknown) => expect(isMembenchError(error) && error.exitCode).toBe(2));
  });

  it('refuses a question the import skipped, with the reason, rather than running nothing', async () => {
    // f9e8d7c6 is in the sample with a question_type LongMemEval does not have.
    await expect(
      plannedCells({ strategies: ['bm25'], datasets: [LONGMEMEVAL], questions: ['f9e8d7c6'] }),
    ).rejects.toThrow(
      /--question f9e8d7c6: in .*longmemeval-sample\.json but not imported: f9e8d7c6: question_type "single_hop" is not one of/u,
    );
    // One too large for a scenario file is matched, then skipped: refused (it ran 0 cells and exited 0).
    const [first] = JSON.parse(readFileSync('fixtures/datasets/longmemeval-sample.json', 'utf8')) as Record<
      string,
      unknown
    >[];
    const sessions = first!.haystack_sessions as { role: string; content: string }[][];
    const huge = structuredClone(sessions);
    huge[0]![0]!.content = 'x'.repeat(17_000_000);
    const file = path.join(tempDirSync('membench-question-huge-'), 'huge.json');
    writeFileSync(
      file,
      JSON.stringify([
        { ...first, question_id: 'big', haystack_sessions: huge },
        { ...first, question_id: 'small' },
      ]),
    );
    const planned = plannedCells({ strategies: ['bm25'], datasets: [`longmemeval:${file}`], questions: ['big'] });
    await expect(planned).rejects.toThrow(
      /--question big: in .*huge\.json but not imported: longmemeval-big: the scenario would be \d+ bytes, over/u,
    );
    await planned.catch((error: unknown) => expect(isMembenchError(error) && error.exitCode).toBe(2));
    expect(
      (await plannedCells({ strategies: ['bm25'], datasets: [`longmemeval:${file}`], questions: ['small'] })).scenarios,
    ).toHaveLength(1);
  });

  it('picks among the first N under --limit: a later question is not among them', async () => {
    const { scenarios } = await plannedCells({
      strategies: ['bm25'],
      datasets: [LONGMEMEVAL],
      questions: ['6a1eabeb'],
    });
    expect(scenarios).toHaveLength(1);
    await expect(
      plannedCells({ strategies: ['bm25'], datasets: [LONGMEMEVAL], questions: ['6a1eabeb'], datasetLimit: 1 }),
    ).rejects.toThrow(/--question 6a1eabeb: no such question in .* among the first 1 \(--limit 1\)/u);
    await expect(plannedCells({ strategies: ['bm25'], datasets: [LOCOMO], questions: ['nope'] })).rejects.toThrow(
      /--question nope: no such conversation in locomo:/u,
    );
  });

  describe('ids a slug does not keep', () => {
    /** The sample's first question three times over, as `ids`, in a file of its own. */
    const fileWith = (ids: readonly string[]): string => {
      const [first] = JSON.parse(readFileSync('fixtures/datasets/longmemeval-sample.json', 'utf8')) as Record<
        string,
        unknown
      >[];
      const file = path.join(tempDirSync('membench-question-ids-'), 'ids.json');
      writeFileSync(file, JSON.stringify(ids.map((id) => ({ ...first, question_id: id }))));
      return `longmemeval:${file}`;
    };
    const planned = async (dataset: string, questions: string[]): Promise<string[]> =>
      (await plannedCells({ strategies: ['bm25'], datasets: [dataset], questions })).scenarios.map((s) => s.name);

    it('matches the file own id exactly: ABC and abc are two questions, each picked alone', async () => {
      const dataset = fileWith(['ABC', 'abc', '问题一']);
      // ABC and abc slug alike: the second is renamed, and each id still picks its own question.
      expect(await planned(dataset, ['ABC'])).toEqual(['longmemeval-abc']);
      expect(await planned(dataset, ['abc'])).toEqual(['longmemeval-abc-2']);
      expect(await planned(dataset, ['问题一'])).toEqual(['longmemeval']);
      // The file's id as written, spaces and all (the import trims it), names it too.
      expect(await planned(fileWith(['  padded  ']), ['  padded  '])).toEqual(['longmemeval-padded']);
      // The scenario names reports show pick them too, the renamed one included.
      expect(await planned(dataset, ['longmemeval-abc-2', 'longmemeval-abc'])).toEqual([
        'longmemeval-abc',
        'longmemeval-abc-2',
      ]);
      await expect(planned(dataset, ['Abc'])).rejects.toThrow(
        /--question Abc: no such question .*\(closest: (?:abc|ABC)\)/u,
      );
    });

    it('names a question with a very long id within the limit, keeping two long ids with one start apart', async () => {
      const long = 'q'.repeat(5000);
      const names = await planned(fileWith([`${long}1`, `${long}2`]), [`${long}2`, `${long}1`]);
      expect(names).toHaveLength(2);
      expect(new Set(names).size).toBe(2);
      for (const name of names) {
        expect(name.length).toBeLessThanOrEqual(MAX_SCENARIO_NAME_CHARS);
        expect(name).toMatch(/^longmemeval-q+-[0-9a-f]{8}$/u);
      }
    });
  });

  it('needs a dataset', async () => {
    await expect(plannedCells({ strategies: ['bm25'], questions: ['x'] })).rejects.toThrow(
      '--question x applies to dataset imports only: name a dataset (--dataset locomo:FILE), or drop --question',
    );
  });
});
