/** Errata: located errors in the file; corrected gold and dropped questions at import, counted in the summary and per category. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Errata, formatImportReport, importDataset } from '../../../../harness/scenarios/importers/index.js';
import { plannedCells } from '../../../helpers/planned.js';
import { MAX_ERRATA_BYTES } from '../../../../harness/scenarios/importers/errata.js';
import { ROOT } from '../../../cli/helpers.js';
import { tempDir } from '../../../helpers/temp-dir.js';

const SAMPLE = path.join(ROOT, 'fixtures/datasets/locomo10-sample.json');
const ERRATA = path.join(ROOT, 'fixtures/errata/locomo-sample.json');

describe('errata', () => {
  it('correct and drop LoCoMo questions at import, each counted: in the summary, in the log, and per category', async () => {
    const plain = await importDataset(`locomo:${SAMPLE}`);
    const { scenarios, report } = await importDataset(`locomo:${SAMPLE}`, { errata: ERRATA });
    const probes = (list: typeof scenarios) =>
      list.flatMap((scenario) => scenario.steps.filter((step) => step.kind === 'probe'));
    expect(probes(scenarios)).toHaveLength(probes(plain.scenarios).length - 1);
    const first = probes(scenarios).find((probe) => probe.probe === 'When did Maya sign up for the pottery class?')!;
    expect(first.expect).toEqual(['8 May 2023']);
    expect(probes(scenarios).some((probe) => probe.probe === "What is the name of Ana's dog?")).toBe(false);
    expect(probes(scenarios).find((probe) => probe.probe === 'What did Omar cook for his parents?')!.expect).toEqual([
      'red lentil soup',
    ]);
    expect(report.errata).toMatchObject({ file: ERRATA, unused: 1 });
    expect(report.errata!.byLabel['temporal']).toMatchObject({ corrected: 1, dropped: 0 });
    expect(report.errata!.byLabel['single-hop']).toMatchObject({ corrected: 1, dropped: 1 });
    const questions = Object.values(report.errata!.byLabel).reduce((sum, count) => sum + count.questions, 0);
    expect(questions).toBe(probes(plain.scenarios).length);
    const summary = formatImportReport(report);
    expect(summary).toContain(
      `errata ${ERRATA}: 2 gold answers corrected, 1 question dropped, 1 naming no imported question`,
    );
    // The unused one is named, with the imported id nearest to it.
    expect(summary).toContain('  "conv-z qa[0]": no imported question has this id (closest: "conv-a qa[0]")');
    expect(summary).toContain('erratum-dropped (1)');
    expect(summary).toContain('conv-a qa[0]: gold "7 May 2023" corrected to "8 May 2023"');
  });

  it('names every erratum that matches no imported question, each with the closest imported id', async () => {
    const dir = await tempDir('membench-errata-');
    const file = path.join(dir, 'typos.json');
    await writeFile(
      file,
      JSON.stringify({
        errata: {
          'conv-a qa[0]': { answer: 'x' },
          'conv-a qa[O]': { drop: true, reason: 'a letter O for a zero' },
          'cnv-b qa[1]': { answer: 'y' },
        },
      }),
    );
    const { report } = await importDataset(`locomo:${SAMPLE}`, { errata: file });
    expect(report.unusedErrata).toEqual([
      { id: 'conv-a qa[O]', closest: 'conv-a qa[0]' },
      { id: 'cnv-b qa[1]', closest: 'conv-b qa[1]' },
    ]);
    expect(formatImportReport(report).split('\n')).toEqual(
      expect.arrayContaining([
        `errata ${file}: 1 gold answer corrected, 0 questions dropped, 2 naming no imported question (another file's, past --limit, or a typo):`,
        '  "conv-a qa[O]": no imported question has this id (closest: "conv-a qa[0]")',
        '  "cnv-b qa[1]": no imported question has this id (closest: "conv-b qa[1]")',
      ]),
    );
  });

  it('an erratum naming a question the import skipped says so, with the import\'s reason (not "no imported question has this id")', async () => {
    const dir = await tempDir('membench-errata-');
    const file = path.join(dir, 'skipped.json');
    await writeFile(
      file,
      JSON.stringify({
        errata: { 'conv-a qa[18]': { answer: 'x' }, 'conv-a qa[20]': { drop: true, reason: 'no answer' } },
      }),
    );
    const { report } = await importDataset(`locomo:${SAMPLE}`, { errata: file });
    expect(report.unusedErrata).toEqual([
      { id: 'conv-a qa[18]', skipped: 'category 6 is not one of 1-5' },
      { id: 'conv-a qa[20]', skipped: 'a category-4 item without an answer' },
    ]);
    expect(formatImportReport(report).split('\n')).toEqual(
      expect.arrayContaining([
        '  "conv-a qa[18]": in the file but skipped at import: category 6 is not one of 1-5',
        '  "conv-a qa[20]": in the file but skipped at import: a category-4 item without an answer',
      ]),
    );
  });

  it('a run names an erratum that matches nothing even when the import needed no repair', async () => {
    const dir = await tempDir('membench-errata-');
    const file = path.join(dir, 'only-typos.json');
    await writeFile(file, JSON.stringify({ errata: { 'no-such-conversation qa[0]': { answer: 'x' } } }));
    const warnings: string[] = [];
    await plannedCells({
      // A file the importer takes as it is (no repair, no skip): only the erratum can make the run speak.
      datasets: [`locomo:${path.join(ROOT, 'fixtures/datasets/synthetic/locomo-synthetic.json')}`],
      datasetLimit: 1,
      errata: file,
      strategies: ['buffer'],
      onWarning: (warning) => warnings.push(warning),
    });
    expect(warnings.join('\n')).toMatch(
      /^ {2}"no-such-conversation qa\[0\]": no imported question has this id \(closest: ".+ qa\[\d+\]"\)$/mu,
    );
  });

  it('reports a field of the wrong type as that, not as missing', () => {
    expect(() => Errata.parse('{ "source": 5, "errata": {} }', 'e.json')).toThrow(
      expect.objectContaining({ details: ['e.json:1:13: source: expected string, got 5'] }),
    );
  });

  it('refuses a file past its size bound, or not UTF-8, before parsing it', async () => {
    const dir = await tempDir('membench-errata-');
    const big = path.join(dir, 'big.json');
    await writeFile(big, `{"errata": {}, "source": "${'x'.repeat(MAX_ERRATA_BYTES)}"}`);
    await expect(Errata.load(big)).rejects.toThrow(
      `${big}:1:1: (document): file is ${MAX_ERRATA_BYTES + 28} bytes, over the ${MAX_ERRATA_BYTES}-byte limit for an errata file`,
    );
    const latin1 = path.join(dir, 'latin1.json');
    await writeFile(latin1, Buffer.from('{"source": "caf\xe9", "errata": {}}', 'latin1'));
    await expect(Errata.load(latin1)).rejects.toThrow('not UTF-8 text');
  });

  it('a LongMemEval question its erratum drops is no scenario: nothing measured, nothing counted', async () => {
    const dir = await tempDir('membench-errata-');
    const file = path.join(dir, 'drop.json');
    await writeFile(file, JSON.stringify({ errata: { gpt4_2655b836: { drop: true, reason: 'r' } } }));
    const dataset = `longmemeval:${path.join(ROOT, 'fixtures/datasets/longmemeval-sample.json')}`;
    const { scenarios, report } = await importDataset(dataset, { errata: file, limit: 3 });
    expect(scenarios.map((scenario) => scenario.name)).toEqual(['longmemeval-7f3a91c2', 'longmemeval-6a1eabeb']);
    expect(report.scenarios).toBe(2);
    expect(formatImportReport(report)).toContain('erratum-dropped (1)');
  });

  it('refuses a malformed file with located errors', () => {
    const text =
      '{\n  "errata": {\n    "conv-a qa[0]": { "answer": "" },\n    "conv-a qa[1]": { "drop": true },\n    "conv-a qa[2]": { "anser": "x" }\n  }\n}\n';
    const error = (() => {
      try {
        Errata.parse(text, 'e.json');
      } catch (caught) {
        return caught as { message: string; details: string[] };
      }
      throw new Error('parsed');
    })();
    expect(error.message).toBe('e.json: not a valid errata file');
    expect(error.details.join('\n')).toMatch(/^e\.json:3:\d+: errata\.conv-a qa\[0\]/mu);
    expect(error.details.join('\n')).toMatch(/^e\.json:4:\d+: errata\.conv-a qa\[1\]/mu);
    expect(error.details.join('\n')).toMatch(/^e\.json:5:\d+: errata\.conv-a qa\[2\]/mu);
  });
});
