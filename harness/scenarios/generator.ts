/**
 * The workload generator (docs/design.md §7): one long conversation per language in which facts from the
 * bank are planted among filler exchanges (filler.ts), each probed several times at the spec's
 * distances, so the gold of every probe is known by construction. It writes ordinary scenario
 * documents: every exchange has a scripted reply (no model call per turn), sessions and user
 * steps are dated, planted steps carry ids, probes carry `evidence` and a `label` naming their
 * kind (`fact/remember`, `update/revert`, …), and every scenario carries the spec's `group`.
 *
 * Distance: a probe at distance d follows the d-th exchange counted from its fact's own exchange
 * (the furthest evidence step: the older fact of a multi-hop pair), so d = 1 asks right after the
 * fact and a window of the last k exchanges still holds every evidence step for d <= k. Probes do
 * not count as exchanges; a multi-hop pair is first asked about once both facts are said.
 *
 * Deterministic: the same spec gives byte-identical YAML. Each language draws from its own
 * stream (the spec's seed mixed with the language), so an en+zh spec and a zh-only spec give the
 * same Chinese conversation.
 */
import { isMembenchError, MembenchError } from '../core/errors.js';
import { normalizeText } from '../core/text.js';
import { BANKS, GENERATED_LANGUAGES, type GeneratedLanguage, type LanguageBank } from './generator-bank.js';
import { goldProblems, type GeneratedProbe } from './generator-gold.js';
import { BankUse, Draw, fill, plantFacts, type Plant, type Statement } from './generator-plants.js';
import { checkedSpec, factDistances, type GeneratorSpec } from './generator-spec.js';
import { generateFiller, mixSeed, type FillerExchange } from './filler.js';
import type { Scenario } from './format.js';
import { toYaml, type ScenarioDocument } from './importers/index.js';
import { checkScenarioValue, formatProblem } from './load.js';

export type { GeneratedProbe } from './generator-gold.js';

/** One generated conversation: the document a file holds, its YAML, the validated scenario, and what each probe asks. */
export interface GeneratedScenario {
  document: ScenarioDocument;
  /** Written at the first read (`membench generate`): a run needs only the scenario. */
  readonly yaml: string;
  scenario: Scenario;
  exchanges: number;
  sessions: number;
  probes: GeneratedProbe[];
}

const DAY_MS = 86_400_000;

/** Dated sessions: a day of its own each, starting at a seeded time, exchanges a few minutes apart. */
class Calendar {
  private readonly days: number[] = [];
  private readonly starts: number[] = [];

  constructor(
    private readonly spec: GeneratorSpec,
    draw: Draw,
  ) {
    const first = Date.parse(`${spec.sessions.start}T00:00:00Z`) / DAY_MS;
    const count = Math.ceil(spec.exchanges / spec.sessions.every);
    for (let session = 0; session < count; session++) {
      this.days.push(
        session === 0
          ? first
          : this.days[session - 1]! + draw.int(spec.sessions.daysApart.min, spec.sessions.daysApart.max),
      );
      this.starts.push(draw.int(8 * 12, 18 * 12) * 300);
    }
  }

  get sessions(): number {
    return this.days.length;
  }

  /** The session of the exchange at `position` (1-based). */
  session(position: number): number {
    return Math.floor((position - 1) / this.spec.sessions.every);
  }

  /** Days since the epoch of the exchange at `position`. */
  day(position: number): number {
    return this.days[this.session(position)]!;
  }

  /** The ISO date-time of the exchange at `position`: the session's start plus up to 3 minutes per exchange, before 23:00. */
  at(position: number): string {
    const session = this.session(position);
    const start = this.starts[session]!;
    const spacing = Math.min(180, Math.floor((23 * 3600 - start) / this.spec.sessions.every));
    const seconds = start + ((position - 1) % this.spec.sessions.every) * spacing;
    return new Date(this.days[session]! * DAY_MS + seconds * 1000).toISOString().replace('.000Z', 'Z');
  }
}

const weekdayOf = (bank: LanguageBank, day: number): string => bank.dates.weekdays[new Date(day * DAY_MS).getUTCDay()]!;

/** How a temporal probe asked on `today` names `day`: earlier today, yesterday, on / last Tuesday, on Tuesday, 11 March. */
function whenPhrase(bank: LanguageBank, day: number, today: number): string {
  const date = new Date(day * DAY_MS);
  const weekday = weekdayOf(bank, day);
  const back = today - day;
  if (back === 0) return bank.dates.sameDay;
  if (back === 1) return bank.dates.yesterday;
  const monday = (of: number): number => of - ((new Date(of * DAY_MS).getUTCDay() + 6) % 7);
  if (back <= 6) return bank.dates.thisWeek(weekday, monday(day) === monday(today));
  return bank.dates.onDate(date, weekday);
}

/** `[Current date: 2025-03-17 (Monday)] What did I do last Thursday?`, asked after the exchange at `after`. */
function temporalQuestion(
  bank: LanguageBank,
  language: GeneratedLanguage,
  plant: Plant,
  calendar: Calendar,
  after: number,
): string {
  const today = calendar.day(after);
  const current = bank.dates.currentDate(calendar.at(after).slice(0, 10), weekdayOf(bank, today));
  return `${current} ${fill(plant.ask, { when: whenPhrase(bank, calendar.day(plant.anchor), today) }, language)}`;
}

/** Anchors every plant at a free exchange: half of each kind early enough for the largest distance, the rest later. */
function place(plants: readonly Plant[], spec: GeneratorSpec, calendar: Calendar, draw: Draw): void {
  const total = spec.exchanges;
  const farEnd = Math.max(1, total - spec.distances.at(-1)! + 1);
  const desired = new Map<Plant, number>();
  const spreadOver = (group: readonly Plant[], lo: number, hi: number): void => {
    draw
      .shuffle(group)
      .forEach((plant, index) => desired.set(plant, lo + Math.floor(((index + 0.5) * (hi - lo + 1)) / group.length)));
  };
  const near = plants.filter((plant) => !plant.far);
  if (farEnd < total) {
    spreadOver(
      plants.filter((plant) => plant.far),
      1,
      farEnd,
    );
    spreadOver(near, farEnd + 1, total);
  } else spreadOver(plants, 1, total);

  const taken = new Set<number>();
  const datedDays = new Set<number>();
  const fits = (plant: Plant, anchor: number): boolean => {
    const span = plant.statements.at(-1)!.offset;
    if (anchor - span < 1 || anchor > total) return false;
    if (plant.kind === 'temporal' && datedDays.has(calendar.session(anchor))) return false;
    return plant.statements.every((statement) => !taken.has(anchor - span + statement.offset));
  };
  for (const plant of [...plants].sort((a, b) => desired.get(a)! - desired.get(b)!)) {
    const want = desired.get(plant)!;
    let anchor = want;
    while (anchor <= total && !fits(plant, anchor)) anchor++;
    if (anchor > total) for (anchor = want - 1; anchor >= 1 && !fits(plant, anchor); anchor--);
    if (anchor < 1)
      throw new MembenchError(
        'INVALID_SCENARIO',
        `no room left for ${plant.id} in ${total} exchanges: raise exchanges`,
      );
    plant.anchor = anchor;
    const span = plant.statements.at(-1)!.offset;
    for (const statement of plant.statements) taken.add(anchor - span + statement.offset);
    if (plant.kind === 'temporal') datedDays.add(calendar.session(anchor));
  }
}

/** Filler exchanges in seeded chunks, leaving out any that contains a gold string or a never-stated subject. */
function* fillerStream(
  seed: number,
  spec: GeneratorSpec,
  language: GeneratedLanguage,
  needles: readonly string[],
): Generator<FillerExchange> {
  const fillerLanguage = spec.filler.language === 'same' ? language : spec.filler.language;
  for (let chunk = 0; chunk < 100_000; chunk++) {
    for (const exchange of generateFiller(64, { seed: mixSeed(seed, chunk), language: fillerLanguage })) {
      const text = normalizeText(`${exchange.user}\n${exchange.assistant}`);
      if (!needles.some((needle) => text.includes(needle))) yield exchange;
    }
  }
  throw new Error('the filler keeps mentioning gold strings');
}

/** One conversation in one language. */
function generateConversation(spec: GeneratorSpec, language: GeneratedLanguage, source: string): GeneratedScenario {
  const bank = BANKS[language];
  const stream = mixSeed(spec.seed, GENERATED_LANGUAGES.indexOf(language));
  const draw = new Draw(stream);
  const use = new BankUse(bank, draw, language);
  const plants = plantFacts(spec, language, draw, use);
  const calendar = new Calendar(spec, draw);
  place(plants, spec, calendar, draw);
  const total = spec.exchanges;

  const planted = new Map<number, Statement>();
  for (const plant of plants) {
    const span = plant.statements.at(-1)!.offset;
    for (const statement of plant.statements) planted.set(plant.anchor - span + statement.offset, statement);
  }
  const probesAfter = new Map<number, Record<string, unknown>[]>();
  const probes: GeneratedProbe[] = [];
  const ask = (after: number, step: Record<string, unknown>, info: GeneratedProbe): void => {
    probesAfter.set(after, [...(probesAfter.get(after) ?? []), step]);
    probes.push(info);
  };
  const unasked: string[] = [];
  for (const [index, plant] of plants.entries()) {
    const before = probes.length;
    // Distances count from the furthest evidence step (the older fact of a multi-hop pair), and a probe comes after every statement of its plant.
    const span = plant.statements.at(-1)!.offset;
    const origin =
      plant.anchor -
      span +
      Math.min(
        ...plant.statements
          .filter((statement) => plant.evidence.includes(statement.id))
          .map((statement) => statement.offset),
      );
    for (const distance of factDistances(spec, index)) {
      const after = origin + distance - 1;
      if (after < plant.anchor) continue;
      if (after > total) break;
      const question = plant.kind === 'temporal' ? temporalQuestion(bank, language, plant, calendar, after) : plant.ask;
      const id = `${plant.id}-d${distance}`;
      ask(
        after,
        {
          id,
          probe: question,
          expect: plant.expect,
          ...(plant.forbid.length > 0 ? { forbid: plant.forbid } : {}),
          category: plant.category,
          label: plant.label,
          evidence: plant.evidence,
        },
        {
          id,
          kind: plant.kind,
          label: plant.label,
          distance,
          plantSteps: plant.statements.map((statement) => statement.id),
          subjects: [],
        },
      );
    }
    if (probes.length === before) unasked.push(plant.label);
  }
  // A fact no distance lets the conversation ask about is planted for nothing: the spec asks for what it cannot get.
  if (unasked.length > 0)
    throw new MembenchError(
      'INVALID_SCENARIO',
      `${unasked.length} of the ${plants.length} planted facts (${[...new Set(unasked)].join(', ')}) cannot be asked at any of the distances ${spec.distances.join(', ')} in ${total} exchanges: raise exchanges or list shorter distances`,
    );
  for (let index = 0; index < spec.facts.abstention; index++) {
    const never = use.takeOne(bank.neverStated, (item) => item.question);
    const id = `${language}-a${String(index + 1).padStart(2, '0')}`;
    const after = Math.max(1, Math.round((total * (index + 1)) / (spec.facts.abstention + 1)));
    ask(
      after,
      { id, probe: never.question, category: 'abstention', label: 'abstention' },
      { id, kind: 'abstention', label: 'abstention', distance: null, plantSteps: [], subjects: [...never.subjects] },
    );
  }

  const needles = [
    ...new Set(
      [
        ...plants.flatMap((plant) => [...plant.expect, ...plant.forbid]),
        ...probes.flatMap((probe) => probe.subjects),
      ].map(normalizeText),
    ),
  ];
  const filler = fillerStream(mixSeed(stream, 0x5eed), spec, language, needles);
  const steps: Record<string, unknown>[] = [];
  for (let position = 1; position <= total; position++) {
    const at = calendar.at(position);
    if (position > 1 && calendar.session(position) !== calendar.session(position - 1))
      steps.push({ session: 'new', at });
    const statement = planted.get(position);
    if (statement?.remember)
      steps.push({ id: statement.id, remember: statement.text, name: statement.memoryName, type: 'user' });
    else if (statement) steps.push({ id: statement.id, user: statement.text, assistant: statement.reply, at });
    else {
      const exchange = filler.next().value as FillerExchange;
      steps.push({ user: exchange.user, assistant: exchange.assistant, at });
    }
    steps.push(...(probesAfter.get(position) ?? []));
  }

  const languageName = language === 'en' ? 'English' : 'Chinese';
  const distances = `${spec.distances[0]}–${spec.distances.at(-1)}`;
  const summary = `Generated (seed ${spec.seed}), ${languageName}: ${total} exchanges in ${calendar.sessions} dated sessions, ${plants.length} planted facts probed at distances ${distances} exchanges, ${spec.facts.abstention} abstention questions; ${probes.length} probes.`;
  const document: ScenarioDocument = {
    name: generatedScenarioName(spec.name, language),
    description: spec.description ? `${spec.description} ${summary}` : summary,
    language,
    tags: ['generated', ...(language === 'zh' ? ['cjk'] : [])],
    group: spec.group ?? spec.name,
    steps,
  };
  // Validated as data, with no YAML round trip (~1 s a run for the default suite): the same Scenario
  // its YAML loads as (test/harness/scenarios/generator.test.ts). The YAML is written only when asked for.
  const check = checkScenarioValue(document as unknown as Record<string, unknown>, source);
  if (!check.scenario)
    throw new Error(
      `the generator wrote an invalid scenario (please report it): ${check.problems.map(formatProblem).join('; ')}`,
    );
  const problems = goldProblems(check.scenario, probes);
  if (problems.length > 0)
    throw new Error(`the generator broke its gold (please report it): ${problems.slice(0, 5).join('; ')}`);
  let yaml: string | undefined;
  return {
    document,
    get yaml() {
      return (yaml ??= toYaml(document));
    },
    scenario: check.scenario,
    exchanges: total,
    sessions: calendar.sessions,
    probes,
  };
}

/** Every conversation of a spec, in the order of its languages; `source` prefixes each scenario's source (`SOURCE#NAME`). */
/** The name of a spec's scenario in one language (`generated-en`): what reports, `-c` and the written file call it. */
export function generatedScenarioName(specName: string, language: string): string {
  return `${specName}-${language}`;
}

export function generateWorkload(given: GeneratorSpec, source?: string): GeneratedScenario[] {
  const spec = checkedSpec(given);
  source ??= `generator:${spec.name}`;
  try {
    return spec.languages.map((language) =>
      generateConversation(spec, language, `${source}#${generatedScenarioName(spec.name, language)}`),
    );
  } catch (error) {
    // The spec asks for more than the bank holds, in a way its checks could not tell in advance.
    if (isMembenchError(error)) throw new MembenchError(error.code, `${source}: ${error.message}`, error.details);
    throw error;
  }
}
