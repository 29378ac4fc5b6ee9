/** What a run records of a dataset import: the counts, and each kind of repair and skip with a few examples, bounded. */
import { describe, expect, it } from 'vitest';
import { IMPORT_EXAMPLE_CHARS, IMPORT_EXAMPLES, importSummary } from '../../../harness/results/import-summary.js';
import { parseResults } from '../../../harness/results/read.js';
import { ImportLog } from '../../../harness/scenarios/importers/index.js';
import { renderJson } from '../../../reports/json.js';
import { smallRun } from '../../reports/fixture.js';

/** A LongMemEval import of `n` questions, every one repaired, the last one skipped too. */
function everyQuestionRepaired(n: number): ImportLog {
  const log = new ImportLog('longmemeval', 'longmemeval_s.json');
  for (let index = 0; index < n; index++) {
    const id = `q${index}`;
    log.unit();
    log.item(id);
    log.repair(id, 'answer-number', `answer ${index} is a number: written as the string "${index}"`, id);
    log.repair(`${id} haystack_sessions[0][1]`, 'turn-empty', 'an assistant turn without content: dropped', id);
  }
  log.skip(`q${n - 1}`, 'answer-missing', `no answer ${'and a very long reason '.repeat(40)}`, `q${n - 1}`);
  return log;
}

describe('importSummary', () => {
  it('keeps the counts, and each code with its count and at most three examples', () => {
    const summary = importSummary('longmemeval:data/longmemeval_s.json', everyQuestionRepaired(500).report());
    expect(summary).toMatchObject({
      source: 'longmemeval:data/longmemeval_s.json',
      unitsName: 'questions',
      units: 500,
      itemsName: 'questions',
      items: 500,
      repairedItems: 499,
      skippedItems: 1,
    });
    expect(summary.repaired.map(({ code, count }) => [code, count])).toEqual([
      ['answer-number', 500],
      ['turn-empty', 500],
    ]);
    expect(summary.repaired[0]!.examples).toEqual([
      { where: 'q0', message: 'answer 0 is a number: written as the string "0"' },
      { where: 'q1', message: 'answer 1 is a number: written as the string "1"' },
      { where: 'q2', message: 'answer 2 is a number: written as the string "2"' },
    ]);
    for (const group of [...summary.repaired, ...summary.skipped])
      expect(group.examples.length).toBeLessThanOrEqual(IMPORT_EXAMPLES);
    const [skipped] = summary.skipped;
    expect(skipped?.code).toBe('answer-missing');
    expect(skipped?.examples[0]?.message.length).toBeLessThanOrEqual(IMPORT_EXAMPLE_CHARS);
    expect(skipped?.examples[0]?.message).toMatch(/^no answer and a very long reason .*…$/u);
  });

  it('stays a few hundred bytes whatever the file size: 500 repaired questions cost what 5 do', () => {
    const size = (n: number) =>
      JSON.stringify(importSummary('longmemeval:f.json', everyQuestionRepaired(n).report())).length;
    expect(size(500)).toBeLessThan(1500);
    expect(size(500) - size(5)).toBeLessThan(20);
  });

  it('is written to results.json and read back through the schema (the header keeps it)', () => {
    const result = smallRun();
    const summary = importSummary('longmemeval:f.json', everyQuestionRepaired(4).report());
    result.header = { ...result.header, imports: [summary], protocol: 'longmemeval' };
    const read = parseResults(renderJson(result), 'results.json');
    expect(read.header.imports).toEqual([summary]);
    expect(read.header.protocol).toBe('longmemeval');
    // A file written before imports were recorded reads as before.
    expect(parseResults(renderJson(smallRun()), 'old.json').header.imports).toBeUndefined();
  });
});
