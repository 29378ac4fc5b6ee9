/**
 * Built-in generated suites: `scenarios/suites/NAME.yaml` is no scenario file itself, its name
 * expands into the suite's generated scenarios (grouped under the suite's name), and the default
 * run includes every suite.
 */
import { describe, expect, test } from 'vitest';

import {
  builtinScenarioNames,
  builtinSuiteFile,
  builtinSuiteNames,
  builtinSuiteOf,
  loadScenarios,
  resolveScenarioFile,
} from '../../../harness/scenarios/builtins.js';
import { plannedCells } from '../../helpers/planned.js';

describe('built-in suites', () => {
  test('suites are listed after the scenario files; a path or a scenario name is never a suite', () => {
    expect(builtinSuiteNames()).toEqual(['generated']);
    const names = builtinScenarioNames();
    expect(names.at(-1)).toBe('generated');
    expect(names).toContain('recipes-en');
    expect(names).not.toContain('suites');
    expect(builtinSuiteFile('generated')).toMatch(/scenarios\/suites\/generated\.yaml$/u);
    expect(builtinSuiteFile('recipes-en')).toBeUndefined();
    expect(builtinSuiteFile('./generated.yaml')).toBeUndefined();
  });

  test('an unknown name is refused with the built-in a typo away, if one is', () => {
    expect(() => resolveScenarioFile('recipes-ch')).toThrow(
      /^unknown scenario "recipes-ch" \(did you mean recipes-zh\?\): built-ins are /u,
    );
    expect(() => resolveScenarioFile('generatd')).toThrow(
      /^unknown scenario "generatd" \(did you mean generated\?\): /u,
    );
    expect(() => resolveScenarioFile('zzzz')).toThrow(/^unknown scenario "zzzz": built-ins are /u);
    // A suite's scenarios are named among the built-ins, and a typo of one finds it.
    expect(() => resolveScenarioFile('generated-fr')).toThrow(
      /^unknown scenario "generated-fr" \(did you mean generated-en\?\): built-ins are concurrent-edits, .*stale-background-job, generated-en, generated-zh; generated suites: generated \(all of generated-en, generated-zh\); or give a path/u,
    );
  });

  test("a suite's scenario named alone (as reports name it) is generated as in its suite, alone", async () => {
    expect(builtinSuiteOf('generated-zh')).toBe('generated');
    expect(builtinSuiteOf('generated')).toBeUndefined();
    expect(builtinSuiteOf('recipes-en')).toBeUndefined();
    expect(builtinSuiteOf('./generated-zh.yaml')).toBeUndefined();
    const alone = await loadScenarios(['generated-zh']);
    const suite = await loadScenarios(['generated']);
    expect(alone.scenarios.map((scenario) => [scenario.name, scenario.group, scenario.source])).toEqual([
      ['generated-zh', 'generated', 'builtin:generated#generated-zh'],
    ]);
    expect(alone.scenarios[0]).toEqual(suite.scenarios.find((scenario) => scenario.name === 'generated-zh'));
  });

  test('a suite name expands, in place, into its generated scenarios', async () => {
    const { scenarios, warnings } = await loadScenarios(['recipes-en', 'generated']);
    expect(warnings).toEqual([]);
    expect(scenarios.map((scenario) => [scenario.name, scenario.group, scenario.source])).toEqual([
      ['recipes-en', undefined, 'builtin:recipes-en'],
      ['generated-en', 'generated', 'builtin:generated#generated-en'],
      ['generated-zh', 'generated', 'builtin:generated#generated-zh'],
    ]);
  });

  test('the default run includes the generated suite; run -c generated runs it alone', async () => {
    const byDefault = await plannedCells({ strategies: ['window'] });
    expect(byDefault.scenarios.map((scenario) => scenario.name)).toEqual(
      expect.arrayContaining(['recipes-en', 'generated-en', 'generated-zh']),
    );
    const named = await plannedCells({ strategies: ['window', 'buffer'], scenarios: ['generated'] });
    expect(named.plans.map((plan) => plan.id)).toEqual([
      'generated-en/window(k=2)',
      'generated-en/buffer',
      'generated-zh/window(k=2)',
      'generated-zh/buffer',
    ]);
    const probes = named.scenarios.reduce(
      (total, scenario) => total + scenario.steps.filter((step) => step.kind === 'probe').length,
      0,
    );
    expect(probes).toBeGreaterThanOrEqual(500);
  });
});
