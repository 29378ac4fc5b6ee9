/**
 * The workload generator on the built-in suite's spec: determinism, every kind with its gold
 * checked from the scenario itself (not from the generator's own check), the gold-visibility
 * rule, distances from 1 to 256, dated sessions, scripted replies, and the gold check catching
 * tampered copies.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { isMembenchError } from '../../../harness/core/errors.js';
import { hasCjk, normalizeText } from '../../../harness/core/text.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { stepMessages } from '../../../harness/scenarios/evidence.js';
import { generateWorkload, type GeneratedScenario } from '../../../harness/scenarios/generator.js';
import { goldProblems } from '../../../harness/scenarios/generator-gold.js';
import { loadSpecFile, type GeneratorSpec } from '../../../harness/scenarios/generator-spec.js';
import { checkScenarioText } from '../../../harness/scenarios/load.js';
import type { ProbeStep, Scenario, Step } from '../../../harness/scenarios/format.js';

const LABELS = [
  'abstention',
  'distractor/mention',
  'distractor/remember',
  'fact/mention',
  'fact/remember',
  'multi-hop/mention',
  'multi-hop/remember',
  'temporal',
  'update/chain-1',
  'update/chain-2',
  'update/chain-3',
  'update/revert',
];

let spec: GeneratorSpec;
let suite: GeneratedScenario[];
beforeAll(async () => {
  spec = await loadSpecFile('scenarios/suites/generated.yaml');
  suite = generateWorkload(spec);
});

const isExchange = (step: Step): boolean => step.kind === 'user' || step.kind === 'remember' || step.kind === 'forget';
const said = (step: Step): string[] => stepMessages(step).map(normalizeText);

const walked = new WeakMap<Scenario, ReturnType<typeof walkOnce>>();
const walk = (scenario: Scenario): ReturnType<typeof walkOnce> =>
  walked.get(scenario) ?? walked.set(scenario, walkOnce(scenario)).get(scenario)!;

/** What a conversation says, step by step, and where its probes are. */
function walkOnce(scenario: Scenario) {
  let exchanges = 0;
  const steps = scenario.steps.map((step) => {
    if (isExchange(step)) exchanges++;
    return { step, exchanges, texts: said(step) };
  });
  const byId = new Map(
    steps.flatMap((entry) => (entry.step.id === undefined ? [] : [[entry.step.id, entry] as const])),
  );
  const probes = steps.filter((entry): entry is typeof entry & { step: ProbeStep } => entry.step.kind === 'probe');
  /** The plant of a probe: `en-u03-d16` → the steps `en-u03`, `en-u03-1`, `en-u03-2`… (never a probe). */
  const plantOf = (probe: ProbeStep): Set<string> => {
    const plant = probe.id!.replace(/-d\d+$/u, '');
    return new Set(
      steps.flatMap((entry) =>
        entry.step.kind !== 'probe' &&
        entry.step.id !== undefined &&
        (entry.step.id === plant || entry.step.id.startsWith(`${plant}-`))
          ? [entry.step.id]
          : [],
      ),
    );
  };
  const holders = (gold: string) =>
    steps.filter((entry) => entry.texts.some((text) => text.includes(normalizeText(gold))));
  return { steps, byId, probes, plantOf, holders, exchanges };
}

describe('generateWorkload', () => {
  test('the same spec and seed give byte-identical YAML; another seed, another conversation; a zh-only spec, the same Chinese one', () => {
    const again = generateWorkload(spec);
    expect(again.map((item) => item.yaml)).toEqual(suite.map((item) => item.yaml));
    const reseeded = generateWorkload({ ...spec, seed: 43 });
    for (const [index, item] of reseeded.entries()) expect(item.yaml).not.toBe(suite[index]!.yaml);
    const zhOnly = generateWorkload({ ...spec, languages: ['zh'] });
    expect(zhOnly.map((item) => item.yaml)).toEqual([suite[1]!.yaml]);
  });

  test('each scenario, validated as data, is the one its YAML loads as (source and all)', () => {
    for (const item of suite) {
      const source = `generator:${spec.name}#${item.document.name}`;
      const loaded = checkScenarioText(item.yaml, source);
      expect(loaded.problems).toEqual([]);
      expect(item.scenario).toStrictEqual(loaded.scenario);
      expect(item.scenario.source).toBe(source);
    }
  });

  test('the built-in suite: one English and one Chinese conversation of 280 exchanges, over 500 probes in all, every kind present', () => {
    expect(suite.map((item) => [item.document.name, item.document.language, item.document.group])).toEqual([
      ['generated-en', 'en', 'generated'],
      ['generated-zh', 'zh', 'generated'],
    ]);
    for (const item of suite) {
      expect(walk(item.scenario).exchanges).toBe(280);
      const labels = new Set(item.scenario.steps.flatMap((step) => (step.kind === 'probe' ? [step.label] : [])));
      expect([...labels].sort()).toEqual(LABELS);
    }
    const probes = suite.reduce(
      (total, item) => total + item.scenario.steps.filter((step) => step.kind === 'probe').length,
      0,
    );
    expect(probes).toBeGreaterThanOrEqual(500);
    expect(suite.reduce((total, item) => total + item.exchanges, 0)).toBeLessThanOrEqual(700);
  });

  test('expect strings occur verbatim in an evidence step and in no message outside their plant', () => {
    for (const item of suite) {
      const { probes, byId, plantOf, holders } = walk(item.scenario);
      for (const { step } of probes.filter((entry) => entry.step.category !== 'abstention')) {
        const plant = plantOf(step);
        expect(step.evidence.length).toBeGreaterThan(0);
        for (const gold of step.expect!) {
          expect(
            step.evidence.some((id) => byId.get(id)!.texts.some((text) => text.includes(normalizeText(gold)))),
            `${step.id}: ${gold}`,
          ).toBe(true);
          expect(
            holders(gold).every((entry) => entry.step.id !== undefined && plant.has(entry.step.id)),
            `${step.id}: ${gold} outside its plant`,
          ).toBe(true);
        }
      }
    }
  });

  test('forbid values were said earlier in the plant and nowhere else: the distractor, the outdated values of a chain', () => {
    for (const item of suite) {
      const { probes, plantOf, holders } = walk(item.scenario);
      for (const { step, exchanges } of probes.filter((entry) => entry.step.forbid.length > 0)) {
        expect([
          'distractor/mention',
          'distractor/remember',
          'update/chain-1',
          'update/chain-2',
          'update/chain-3',
          'update/revert',
        ]).toContain(step.label);
        const plant = plantOf(step);
        for (const gold of step.forbid) {
          expect(step.expect).not.toContain(gold);
          const where = holders(gold);
          expect(where.length).toBeGreaterThan(0);
          expect(
            where.every((entry) => plant.has(entry.step.id ?? '') && entry.exchanges <= exchanges),
            `${step.id}: ${gold}`,
          ).toBe(true);
        }
      }
    }
  });

  test('no question shows its own gold, and an abstention subject occurs in no message', () => {
    for (const item of suite) {
      const { probes, steps } = walk(item.scenario);
      for (const { step } of probes) {
        const question = normalizeText(step.probe);
        for (const gold of [...(step.expect ?? []), ...step.forbid])
          expect(question.includes(normalizeText(gold)), `${step.id}: "${gold}" in "${step.probe}"`).toBe(false);
      }
      const abstentions = item.probes.filter((probe) => probe.kind === 'abstention');
      expect(abstentions).toHaveLength(spec.facts.abstention);
      for (const probe of abstentions) {
        const step = probes.find((entry) => entry.step.id === probe.id)!.step;
        expect(step.expect).toBeUndefined();
        expect(step.evidence).toEqual([]);
        expect(
          probe.subjects.some((subject) => normalizeText(step.probe).includes(normalizeText(subject))),
          step.probe,
        ).toBe(true);
        for (const subject of probe.subjects)
          expect(
            steps.some((entry) => entry.texts.some((text) => text.includes(normalizeText(subject)))),
            subject,
          ).toBe(false);
      }
    }
  });

  test('each probe is asked at the distance its id names, counted from its furthest evidence step; every listed distance from 1 to 256 covered', () => {
    for (const item of suite) {
      const { probes, byId } = walk(item.scenario);
      const distances = new Map<number, number>();
      for (const { step, exchanges } of probes.filter((entry) => entry.step.category !== 'abstention')) {
        const distance = exchanges - Math.min(...step.evidence.map((id) => byId.get(id)!.exchanges)) + 1;
        expect(exchanges).toBeGreaterThanOrEqual(Math.max(...step.evidence.map((id) => byId.get(id)!.exchanges)));
        expect(step.id).toBe(`${step.id!.replace(/-d\d+$/u, '')}-d${distance}`);
        distances.set(distance, (distances.get(distance) ?? 0) + 1);
      }
      // Spread: every listed distance asked, each fact once per doubling (1, 2, 3–4, …, 129–256).
      expect([...distances.keys()].sort((a, b) => a - b)).toEqual(spec.distances);
      expect(distances.get(1)).toBeGreaterThanOrEqual(25);
      const farthest = [...distances].filter(([distance]) => distance > 128).reduce((sum, [, count]) => sum + count, 0);
      expect(farthest).toBeGreaterThanOrEqual(14);
      const asked = probes.filter((entry) => entry.step.category !== 'abstention');
      const facts = new Set(asked.map((entry) => entry.step.id!.replace(/-d\d+$/u, '')));
      expect(asked.length).toBeLessThanOrEqual(facts.size * 9);
    }
  });

  test("summary-buffer's 1000-token limit and window's k = 2 are crossed long before the farthest probes", () => {
    const tokens = new TokenCounter('gpt-4o-mini');
    for (const item of suite) {
      const { probes, byId, steps } = walk(item.scenario);
      const far = probes.find((entry) => entry.step.id!.endsWith('-d256'))!;
      const from = steps.indexOf(byId.get(far.step.evidence.at(-1)!)!);
      const between = steps.slice(from, steps.indexOf(far)).flatMap((entry) => stepMessages(entry.step));
      expect(tokens.countText(between.join('\n'))).toBeGreaterThan(5_000);
    }
  });

  test('remember versus mention, as labelled; every user step has a scripted reply and a date, every session a date', () => {
    for (const item of suite) {
      const { probes, byId } = walk(item.scenario);
      for (const { step } of probes) {
        const evidence = step.evidence.map((id) => byId.get(id)!.step);
        if (step.label!.endsWith('/remember')) expect(evidence.every((item) => item.kind === 'remember')).toBe(true);
        if (step.label!.endsWith('/mention') || step.label === 'temporal')
          expect(evidence.every((item) => item.kind === 'user')).toBe(true);
      }
      const users = item.scenario.steps.filter((step) => step.kind === 'user');
      expect(
        users.every((step) => step.assistant !== undefined && step.at !== undefined && step.reply === undefined),
      ).toBe(true);
      const sessions = item.scenario.steps.filter((step) => step.kind === 'session');
      expect(sessions).toHaveLength(item.sessions - 1);
      expect(sessions.every((step) => step.at !== undefined)).toBe(true);
      expect(item.scenario.steps.some((step) => step.kind === 'remember' && step.name !== undefined)).toBe(true);
    }
  });

  test('correction chains: 1 to 3 corrections, the current value expected, reverts back to a value said before', () => {
    for (const item of suite) {
      const { probes, byId, plantOf } = walk(item.scenario);
      for (const { step } of probes.filter((entry) => entry.step.category === 'update')) {
        const chain = [...plantOf(step)].map((id) => byId.get(id)!);
        const corrections = chain.length - 1;
        expect(corrections).toBeGreaterThanOrEqual(step.label === 'update/revert' ? 2 : 1);
        if (step.label !== 'update/revert') expect(step.label).toBe(`update/chain-${corrections}`);
        expect(step.evidence).toEqual([chain.at(-1)!.step.id]);
        const earlier = chain
          .slice(0, -1)
          .some((entry) => entry.texts.some((text) => text.includes(normalizeText(step.expect![0]!))));
        expect(earlier, step.id).toBe(step.label === 'update/revert');
        expect(step.forbid.length).toBeGreaterThanOrEqual(step.label === 'update/revert' ? 1 : corrections);
      }
    }
  });

  test('distractors are the same kind of fact about someone else; multi-hop probes cite both facts', () => {
    for (const item of suite) {
      const { probes, byId, plantOf } = walk(item.scenario);
      for (const { step } of probes.filter((entry) => entry.step.label!.startsWith('distractor/'))) {
        const other = [...plantOf(step)].filter((id) => !step.evidence.includes(id));
        expect(other).toHaveLength(1);
        expect(byId.get(other[0]!)!.texts.some((text) => text.includes(normalizeText(step.forbid[0]!)))).toBe(true);
      }
      for (const { step } of probes.filter((entry) => entry.step.category === 'multi-hop')) {
        expect(step.evidence).toHaveLength(2);
        const holding = step.evidence.filter((id) =>
          byId.get(id)!.texts.some((text) => text.includes(normalizeText(step.expect![0]!))),
        );
        expect(holding).toHaveLength(1);
      }
    }
  });

  test('temporal probes carry the date of their session, LongMemEval-style, and name the day of the activity', () => {
    const [en, zh] = suite;
    for (const [item, pattern] of [
      [en!, /^\[Current date: (\d{4}-\d{2}-\d{2}) \((\w+)\)\] What did I do (.+)\?$/u],
      [zh!, /^\[当前日期：(\d{4}-\d{2}-\d{2})（(星期.)）\] 我(.+)做了什么？$/u],
    ] as const) {
      let today = '';
      let seen = 0;
      let activityDay = new Map<string, string>();
      activityDay = new Map(
        item.scenario.steps.flatMap((step) =>
          step.kind === 'user' && step.id?.includes('-t') ? [[step.id, step.at!.slice(0, 10)] as const] : [],
        ),
      );
      for (const step of item.scenario.steps) {
        if (step.kind === 'user') today = step.at!.slice(0, 10);
        if (step.kind !== 'probe' || step.category !== 'temporal') continue;
        seen++;
        const match = pattern.exec(step.probe);
        expect(match, step.probe).not.toBeNull();
        expect(match![1]).toBe(today);
        const weekday = new Date(`${today}T00:00:00Z`).getUTCDay();
        expect(match![2]).toBe(
          (item === en
            ? ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']
            : ['星期日', '星期一', '星期二', '星期三', '星期四', '星期五', '星期六'])[weekday],
        );
        const day = activityDay.get(step.evidence[0]!)!;
        const back = (Date.parse(today) - Date.parse(day)) / 86_400_000;
        if (back === 0) expect(match![3]).toBe(item === en ? 'earlier today' : '今天早些时候');
        else if (back === 1) expect(match![3]).toBe(item === en ? 'yesterday' : '昨天');
        else if (item === en && back <= 6) expect(match![3]).toMatch(/^(on|last) [A-Z][a-z]+day$/u);
        else if (item === en) expect(match![3]).toMatch(/^on [A-Z][a-z]+day, \d{1,2} [A-Z][a-z]+$/u);
        else expect(match![3]).toMatch(back <= 6 ? /^[这上]周[一二三四五六日]$/u : /^\d{1,2}月\d{1,2}日$/u);
      }
      expect(seen).toBeGreaterThanOrEqual(spec.facts.temporal * 5);
    }
  });

  test('the Chinese conversation is Chinese, with expect strings such as 花生 or 铸铁锅 verbatim in its facts', () => {
    const zh = suite[1]!;
    const users = zh.scenario.steps.filter((step) => step.kind === 'user' || step.kind === 'remember');
    expect(users.every((step) => hasCjk(stepMessages(step).join('')))).toBe(true);
    const expects = zh.scenario.steps.flatMap((step) => (step.kind === 'probe' ? (step.expect ?? []) : []));
    expect(expects.every((gold) => hasCjk(gold) || /^P-\d{3}$/u.test(gold))).toBe(true);
  });
});

describe('a spec past what the bank holds', () => {
  test('is refused with a MembenchError naming the spec (exit 2), not a crash', () => {
    const greedy: GeneratorSpec = {
      ...spec,
      languages: ['en'],
      facts: { ...spec.facts, fact: 13, distractor: 7, update: 12 },
      updates: { chain: { min: 3, max: 3 }, revertShare: 0 },
    };
    expect(() => generateWorkload(greedy, 'greedy.yaml')).toThrow(
      /^greedy\.yaml: the en fact bank has no topic left for another (fact|distractor pair): lower the counts in facts/u,
    );
    try {
      generateWorkload(greedy, 'greedy.yaml');
    } catch (error) {
      expect(isMembenchError(error) && error.exitCode).toBe(2);
    }
  });

  test('refuses a spec whose distances leave a planted fact no place to be asked (it generated no probe for it, exit 0)', () => {
    const cramped: GeneratorSpec = {
      ...spec,
      languages: ['en'],
      exchanges: 40,
      distances: [40],
      facts: { fact: 2, distractor: 1, update: 1, 'multi-hop': 1, temporal: 1, abstention: 1 },
      sessions: { ...spec.sessions, every: 10 },
    };
    expect(() => generateWorkload(cramped, 'cramped.yaml')).toThrow(
      /^cramped\.yaml: 6 of the 6 planted facts \(.*\) cannot be asked at any of the distances 40 in 40 exchanges: raise exchanges or list shorter distances$/u,
    );
  });
});

describe('goldProblems', () => {
  const tampered = (item: GeneratedScenario, change: (steps: Step[]) => void): string[] => {
    const steps = structuredClone(item.scenario.steps);
    change(steps);
    return goldProblems({ ...item.scenario, steps }, item.probes);
  };
  const firstProbe = (steps: Step[], label: string): ProbeStep =>
    steps.find((step): step is ProbeStep => step.kind === 'probe' && step.label === label)!;

  test('holds on the generated suite', () => {
    for (const item of suite) expect(goldProblems(item.scenario, item.probes)).toEqual([]);
  });

  test('catches a question that shows its gold, gold said outside its plant, a said never-stated subject and a wrong distance', () => {
    const [en] = suite;
    const shown = tampered(en!, (steps) => {
      const probe = firstProbe(steps, 'fact/mention');
      probe.probe = `${probe.probe} (${probe.expect![0]})`;
    });
    expect(shown.join('\n')).toMatch(/the question shows its gold/u);
    const leaked = tampered(en!, (steps) => {
      const probe = firstProbe(steps, 'update/chain-2');
      steps.unshift({ kind: 'user', user: `Random: ${probe.forbid[0]}.`, assistant: 'OK.' });
    });
    expect(leaked.join('\n')).toMatch(/forbid ".+" is also said in the exchange 1/u);
    const stated = tampered(en!, (steps) => {
      const abstention = en!.probes.find((probe) => probe.kind === 'abstention')!;
      steps.push({ kind: 'user', user: `About my ${abstention.subjects[0]}.`, assistant: 'OK.' });
    });
    expect(stated.join('\n')).toMatch(/never-stated ".+" is said in/u);
    const moved = tampered(en!, (steps) => {
      const index = steps.findIndex((step) => step.kind === 'probe' && step.id!.endsWith('-d256'));
      steps.splice(index, 0, { kind: 'user', user: 'One more.', assistant: 'Sure.' });
    });
    expect(moved.join('\n')).toMatch(/asked 257 exchanges after its fact, not 256/u);
  });
});
