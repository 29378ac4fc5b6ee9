/**
 * The conformance suite every dataset importer passes, as every strategy passes
 * test/strategies/conformance.ts: `describeImporterConformance(dataset)` runs the checks on the
 * converter registered for `dataset` and its published format (the format file's schema, example
 * element and required fields). A new importer gets these checks by being registered.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MembenchError } from '../../../../harness/core/errors.js';
import type { ProbeStep, Scenario } from '../../../../harness/scenarios/format.js';
import {
  CONVERTERS,
  importDataset,
  ImportLog,
  importScenarios,
  type ImportReport,
} from '../../../../harness/scenarios/importers/index.js';
import type { DatasetName } from '../../../../harness/scenarios/importers/shared.js';
import { MAX_SCENARIO_BYTES } from '../../../../harness/scenarios/load.js';

/** The example's first turn in plain words, and in Chinese with punctuation a segmenter must keep. */
const PLAIN = 'I finally bought a cast-iron pot for stews.';
const CHINESE = '我家只有一口铸铁锅，可以用它来炖红烧肉吗？';

/** The element (a JSON value) with the field at `at` removed. */
function without(element: unknown, at: readonly (string | number)[]): unknown {
  const copy = structuredClone(element) as Record<string | number, unknown>;
  let parent = copy;
  for (const key of at.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  delete parent[at.at(-1)!];
  return copy;
}

export function describeImporterConformance(dataset: DatasetName): void {
  const converter = CONVERTERS[dataset];
  const { format } = converter;
  const dir = mkdtempSync(path.join(os.tmpdir(), `membench-importer-${dataset}-`));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  const write = (content: string): string => {
    const file = path.join(dir, `${dataset}-${++files}.json`);
    writeFileSync(file, content);
    return file;
  };
  const importList = async (list: unknown[]): Promise<{ scenarios: Scenario[]; report: ImportReport }> => {
    const file = write(JSON.stringify(list));
    const log = new ImportLog(dataset, file);
    const scenarios: Scenario[] = [];
    for await (const imported of importScenarios(dataset, file, log)) scenarios.push(imported.scenario);
    return { scenarios, report: log.report() };
  };
  const failure = async (file: string): Promise<MembenchError> => {
    const error = await importDataset(`${dataset}:${file}`).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(MembenchError);
    return error as MembenchError;
  };
  const userTexts = (scenario: Scenario): string[] =>
    scenario.steps.flatMap((step) => (step.kind === 'user' ? [step.user] : []));

  describe(`importer conformance: ${dataset}`, () => {
    it('the schema accepts the published example, and the importer imports it with nothing to repair or skip', async () => {
      expect(format.element.safeParse(format.example(PLAIN)).success).toBe(true);
      const { scenarios, report } = await importList([format.example(PLAIN)]);
      expect(scenarios).toHaveLength(1);
      expect([...report.repaired, ...report.skipped]).toEqual([]);
      expect(report.imported).toBe(report.items);
      expect(scenarios[0]!.steps.some((step) => step.kind === 'probe')).toBe(true);
      expect(userTexts(scenarios[0]!).some((text) => text.includes(PLAIN))).toBe(true);
    });

    it('refuses a file that is not JSON, naming the file, line, column and element (exit code 2)', async () => {
      const file = write(`[\n  ${JSON.stringify(format.example(PLAIN))},\n  {"question": oops}\n]`);
      const error = await failure(file);
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message).toMatch(
        new RegExp(
          `^${file.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}:3:\\d+: ${converter.units}\\[1\\]: invalid JSON`,
          'u',
        ),
      );
    });

    it('refuses a top level that is not a list, naming what it found', async () => {
      const file = write(JSON.stringify(format.example(PLAIN)));
      expect((await failure(file)).message).toBe(
        `${file}:1:1: expected a JSON list of ${converter.units} (the published file is one), found a JSON object: one element alone, or the first line of a JSON Lines file (one object per line), which is not read; \`jq -s . FILE > list.json\` makes a JSON Lines file the list`,
      );
    });

    it('skips an element that is not an object, located by its index; a file of only those is an error listing why', async () => {
      const { scenarios, report } = await importList([42, format.example(PLAIN)]);
      expect(scenarios).toHaveLength(1);
      expect(report.skipped.map((issue) => issue.where)).toEqual([expect.stringMatching(/\[0\]$/u)]);
      const error = await failure(write('[42, "text"]'));
      expect(error.message).toContain(`nothing to import: none of its 2 ${converter.units} could be imported`);
    });

    it.for(format.required.map((field) => [field.path.join('.'), field] as const))(
      'without its required field %s: the schema refuses it there, the import skips the item where it is, naming the field',
      async ([, field]) => {
        const element = without(format.example(PLAIN), field.path);
        const parsed = format.element.safeParse(element);
        expect(parsed.success).toBe(false);
        expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toContain(field.path.join('.'));
        const { report } = await importList([element]);
        const name = String(field.path.at(-1));
        const located = report.skipped.filter((issue) => issue.where.startsWith(field.where));
        expect(located.length).toBeGreaterThan(0);
        expect(located.some((issue) => issue.message.includes(name))).toBe(true);
      },
    );

    it('gives stable ids: the same file imports to the same names and step ids; a repeated element never takes a name already given', async () => {
      const ids = (scenario: Scenario): (string | undefined)[] => scenario.steps.map((step) => step.id);
      const first = await importList([format.example(PLAIN)]);
      const second = await importList([format.example(PLAIN)]);
      expect(second.scenarios.map((scenario) => scenario.name)).toEqual(first.scenarios.map((s) => s.name));
      expect(second.scenarios.map(ids)).toEqual(first.scenarios.map(ids));
      expect(first.scenarios[0]!.name.startsWith(`${dataset}-`)).toBe(true);
      const twice = await importList([format.example(PLAIN), format.example(PLAIN)]);
      const names = twice.scenarios.map((scenario) => scenario.name);
      expect(new Set(names).size).toBe(names.length);
      // Renamed (a LoCoMo sample_id twice) or skipped as a duplicate (a LongMemEval question_id twice), either way reported.
      const reported = [...twice.report.repaired, ...twice.report.skipped].map((issue) => issue.code);
      expect(reported.filter((code) => code === 'name-taken' || code.endsWith('-duplicate'))).toHaveLength(1);
    });

    it('keeps Chinese text intact, character for character', async () => {
      const { scenarios, report } = await importList([format.example(CHINESE)]);
      expect([...report.repaired, ...report.skipped]).toEqual([]);
      expect(userTexts(scenarios[0]!).filter((text) => text.includes(CHINESE))).toHaveLength(1);
    });

    it('drops an empty turn (reported where it is) and imports the rest', async () => {
      const { scenarios, report } = await importList([format.example('   ')]);
      expect(scenarios).toHaveLength(1);
      const dropped = report.repaired.filter((issue) => /^turn-/u.test(issue.code));
      expect(dropped).toHaveLength(1);
      expect(dropped[0]!.where).toMatch(/\[0\]$/u);
      expect(userTexts(scenarios[0]!).every((text) => text.trim().length > 0)).toBe(true);
      expect(scenarios[0]!.steps.filter((step): step is ProbeStep => step.kind === 'probe').length).toBeGreaterThan(0);
    });

    it('skips an element whose scenario would pass the scenario size bound, reporting why', async () => {
      const { scenarios, report } = await importList([format.example('x'.repeat(MAX_SCENARIO_BYTES + 1))]);
      expect(scenarios).toEqual([]);
      expect(report.skipped.map((issue) => issue.code)).toContain('too-large');
      expect(report.skipped.find((issue) => issue.code === 'too-large')!.message).toContain(
        `${MAX_SCENARIO_BYTES}-byte limit`,
      );
    });
  });
}
