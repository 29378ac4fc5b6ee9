/**
 * Filler: determinism from (seed, step position), the stretch of long-recipes to 1,000 turns,
 * a 10,000-turn variant, and the promise that generated text never contains a built-in
 * scenario's expect / forbid strings (the generator only knows its own vocabulary).
 */
import { describe, expect, test } from 'vitest';
import { builtinScenarioNames, loadScenarios } from '../../../harness/scenarios/builtins.js';
import { expandFillers, fillerLanguage, generateFiller, mixSeed } from '../../../harness/scenarios/filler.js';
import { checkScenarioText } from '../../../harness/scenarios/load.js';
import type { FillerStep, Scenario, Step } from '../../../harness/scenarios/format.js';
import { hasCjk, normalizeText } from '../../../harness/core/text.js';

const userTurns = (steps: readonly Step[]): number => steps.filter((step) => step.kind === 'user').length;

async function builtin(name: string): Promise<Scenario> {
  return (await loadScenarios([name])).scenarios[0]!;
}

function scenarioOf(yaml: string): Scenario {
  const { scenario, problems } = checkScenarioText(yaml, 'inline.yaml');
  if (!scenario) throw new Error(problems.map((problem) => problem.message).join('; '));
  return scenario;
}

describe('generateFiller', () => {
  test('the same seed gives the same exchanges; another seed, others', () => {
    const a = generateFiller(50, { seed: 7, language: 'en' });
    expect(generateFiller(50, { seed: 7, language: 'en' })).toEqual(a);
    expect(generateFiller(50, { seed: 8, language: 'en' })).not.toEqual(a);
    expect(new Set(a.map((turn) => turn.user)).size).toBeGreaterThan(20);
  });

  test('languages: en has no CJK, zh is Chinese, mixed has both', () => {
    const en = generateFiller(200, { seed: 1, language: 'en' });
    const zh = generateFiller(200, { seed: 1, language: 'zh' });
    const mixed = generateFiller(200, { seed: 1, language: 'mixed' });
    expect(en.every((turn) => !hasCjk(turn.user) && !hasCjk(turn.assistant))).toBe(true);
    expect(zh.every((turn) => hasCjk(turn.user) && hasCjk(turn.assistant))).toBe(true);
    const chinese = mixed.filter((turn) => hasCjk(turn.user)).length;
    expect(chinese).toBeGreaterThan(50);
    expect(chinese).toBeLessThan(150);
  });

  test('every slot is filled and English sentences start with a capital', () => {
    for (const turn of generateFiller(500, { seed: 3, language: 'mixed' })) {
      expect(`${turn.user} ${turn.assistant}`).not.toMatch(/[{}]/u);
      if (!hasCjk(turn.user)) expect(turn.user).toMatch(/^[A-Z]/u);
    }
  });

  test('mixSeed spreads neighbouring positions', () => {
    const seeds = new Set(Array.from({ length: 1000 }, (_, index) => mixSeed(42, index)));
    expect(seeds.size).toBe(1000);
  });
});

describe('expandFillers', () => {
  const yaml = `
name: tiny
language: zh
steps:
  - id: u1
    user: 我儿子对花生过敏。
    assistant: 记住了。
  - filler: 5
  - filler: 3
    language: en
  - filler: 2
    seed: 99
  - probe: 我儿子对什么过敏？
    expect: [花生]
    evidence: [u1]
`;

  test('replaces each filler step by N user steps without ids, in place, keeping the rest', () => {
    const scenario = scenarioOf(yaml);
    const expanded = expandFillers(scenario, 42);
    expect(expanded.steps.map((step) => step.kind)).toEqual(['user', ...Array<string>(10).fill('user'), 'probe']);
    expect(
      expanded.steps
        .slice(1, 11)
        .every((step) => step.kind === 'user' && step.id === undefined && step.assistant !== undefined),
    ).toBe(true);
    expect(expanded.steps[0]).toBe(scenario.steps[0]);
    expect(expanded.steps[11]).toBe(scenario.steps[4]);
    // Language: the scenario's (zh) unless the step names one.
    expect(expanded.steps.slice(1, 6).every((step) => step.kind === 'user' && hasCjk(step.user))).toBe(true);
    expect(expanded.steps.slice(6, 9).every((step) => step.kind === 'user' && !hasCjk(step.user))).toBe(true);
  });

  test('deterministic: same seed, same steps; another seed, other steps; a step seed ignores the run seed', () => {
    const scenario = scenarioOf(yaml);
    const a = expandFillers(scenario, 42);
    expect(expandFillers(scenario, 42)).toEqual(a);
    const b = expandFillers(scenario, 43);
    expect(b.steps.slice(1, 9)).not.toEqual(a.steps.slice(1, 9));
    // The `seed: 99` step gives the same turns whatever the run seed.
    expect(b.steps.slice(9, 11)).toEqual(a.steps.slice(9, 11));
  });

  test('two filler steps with the same seed at different positions differ', () => {
    const twin = scenarioOf('name: twin\nsteps:\n  - filler: 4\n    seed: 5\n  - filler: 4\n    seed: 5\n');
    const steps = expandFillers(twin, 1).steps;
    expect(steps.slice(0, 4)).not.toEqual(steps.slice(4, 8));
  });

  test('a scenario without filler comes back as is; fillers inside concurrent sessions expand too', () => {
    const plain = scenarioOf('name: plain\nsteps:\n  - user: hi\n');
    expect(expandFillers(plain, 1)).toBe(plain);
    const nested = scenarioOf(
      'name: nested\nsteps:\n  - concurrent:\n      - [{ filler: 2 }]\n      - [{ user: hi }]\n',
    );
    const step = expandFillers(nested, 1).steps[0]!;
    expect(step.kind === 'concurrent' && step.concurrent.map((session) => session.length)).toEqual([2, 1]);
  });

  test('fillerLanguage: the step, else en / zh scenarios, else mixed', () => {
    const step = (language?: FillerStep['language']): FillerStep => ({
      kind: 'filler',
      filler: 1,
      ...(language ? { language } : {}),
    });
    expect(fillerLanguage(step('zh'), 'en')).toBe('zh');
    expect(fillerLanguage(step(), 'en-GB')).toBe('en');
    expect(fillerLanguage(step(), 'zh')).toBe('zh');
    expect(fillerLanguage(step(), 'mixed')).toBe('mixed');
    expect(fillerLanguage(step(), undefined)).toBe('mixed');
  });
});

describe('long-recipes', () => {
  test('stretches recipes-en to at least 1,000 user turns, keeping every probe and its evidence', async () => {
    const [long, recipes] = await Promise.all([builtin('long-recipes'), builtin('recipes-en')]);
    const expanded = expandFillers(long, 42);
    expect(userTurns(expanded.steps)).toBeGreaterThanOrEqual(1000);
    expect(expanded.steps.some((step) => step.kind === 'filler')).toBe(false);
    const probes = (scenario: Scenario) => scenario.steps.filter((step) => step.kind === 'probe');
    expect(probes(expanded)).toEqual(probes(recipes));
    // The tofu probe still follows its answer directly.
    const tofu = expanded.steps.findIndex((step) => step.id === 'p-tofu');
    expect(expanded.steps[tofu - 1]?.id).toBe('u13');
  });

  test('a 10,000-turn variant expands (counts only, no timing)', async () => {
    const long = await builtin('long-recipes');
    const steps = long.steps.map((step) => (step.kind === 'filler' ? { ...step, filler: step.filler * 10 } : step));
    const expanded = expandFillers({ ...long, steps }, 7);
    expect(userTurns(expanded.steps)).toBe(16 + 9840);
  });

  test("generated filler never contains long-recipes' expect or forbid strings, for many seeds", async () => {
    const long = await builtin('long-recipes');
    const needles = long.steps
      .flatMap((step) => (step.kind === 'probe' ? [...(step.expect ?? []), ...step.forbid] : []))
      .map(normalizeText);
    expect(needles).toContain('peanut');
    const fillerIds = new Set(long.steps.filter((step) => step.kind === 'filler').map((step) => step.id));
    expect(fillerIds.size).toBe(4);
    const originals = new Set(long.steps);
    for (const seed of [0, 1, 42, 1234, -5]) {
      const generated = expandFillers(long, seed).steps.filter((step) => !originals.has(step));
      expect(generated).toHaveLength(984);
      const text = normalizeText(
        generated.map((step) => (step.kind === 'user' ? `${step.user}\n${step.assistant}` : '')).join('\n'),
      );
      for (const needle of needles)
        expect(text.includes(needle), `"${needle}" in the filler of seed ${seed}`).toBe(false);
    }
  });

  test("no built-in scenario's expect / forbid string occurs in 7,000 generated turns of each language", async () => {
    const { scenarios } = await loadScenarios(builtinScenarioNames());
    const needles = [
      ...new Set(
        scenarios.flatMap((scenario) =>
          scenario.steps.flatMap((step) => (step.kind === 'probe' ? [...(step.expect ?? []), ...step.forbid] : [])),
        ),
      ),
    ].map(normalizeText);
    expect(needles).toEqual(expect.arrayContaining(['花生', '六个人', 'tuesday', 'soy milk', '上海']));
    for (const language of ['en', 'zh', 'mixed'] as const) {
      const text = normalizeText(
        generateFiller(7000, { seed: 11, language })
          .map((turn) => `${turn.user}\n${turn.assistant}`)
          .join('\n'),
      );
      for (const needle of needles) expect(text.includes(needle), `"${needle}" in ${language} filler`).toBe(false);
    }
  });
});

describe('stretchScenario', () => {
  test('stretches any scenario to the asked number of turns, probes kept in order', async () => {
    const { stretchScenario, userTurns, expandFillers } = await import('../../../harness/scenarios/filler.js');
    const { loadScenarioFile } = await import('../../../harness/scenarios/load.js');
    const scenario = await loadScenarioFile('scenarios/recipes-en.yaml');
    for (const turns of [1_000, 10_000]) {
      const stretched = expandFillers(stretchScenario(scenario, turns), 42);
      expect(userTurns(stretched.steps)).toBe(turns);
      expect(stretched.name).toBe(`recipes-en~${turns}`);
      expect(stretched.tags).toContain('long');
      const probes = (steps: typeof scenario.steps) =>
        steps.flatMap((step) => (step.kind === 'probe' ? [step.probe] : []));
      expect(probes(stretched.steps)).toEqual(probes(scenario.steps));
    }
    expect(stretchScenario(scenario, 3)).toBe(scenario);
  });
});
