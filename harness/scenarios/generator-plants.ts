/**
 * The plants of a generated conversation: facts drawn from the bank (generator-bank.ts) — single
 * facts, distractor pairs, correction chains, two-fact links, dated activities — each with the
 * statements that plant it and the gold its probes carry. Placement in the conversation and the
 * probes themselves are generator.ts's.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';
import { MembenchError } from '../core/errors.js';
import { BANKS, type GeneratedLanguage, type LanguageBank, type Topic } from './generator-bank.js';
import type { GeneratorSpec } from './generator-spec.js';
import type { ProbeCategory } from './format.js';

/** What a plant is: the first part of every probe label. */
export type PlantKind = 'fact' | 'distractor' | 'update' | 'multi-hop' | 'temporal';

/** A seeded stream of draws (pure-rand, as the filler uses). */
export class Draw {
  private readonly rng: RandomGenerator;
  constructor(seed: number) {
    this.rng = xoroshiro128plus(seed);
  }
  int(min: number, max: number): number {
    return uniformInt(this.rng, min, max);
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
  shuffle<T>(items: readonly T[]): T[] {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }
}

/** A planted user message or `remember`, at `offset` exchanges from its plant's first statement. */
export interface Statement {
  id: string;
  offset: number;
  remember: boolean;
  text: string;
  reply: string;
  memoryName?: string;
}

/** A planted fact (or pair, chain, link) and what its probes ask. */
export interface Plant {
  id: string;
  kind: PlantKind;
  label: string;
  category: ProbeCategory;
  statements: Statement[];
  evidence: string[];
  expect: string[];
  forbid: string[];
  /** The question; a temporal plant's question is built per probe from the dates. */
  ask: string;
  /** Anchored early enough to be probed at the largest distance. */
  far: boolean;
  anchor: number;
}

const slotPattern = /\{(\w+)\}/gu;

/** Fills `{slot}`s; an English sentence starts with a capital. */
export function fill(template: string, slots: Record<string, string>, language: GeneratedLanguage): string {
  const text = template.replace(slotPattern, (_match, slot: string) => slots[slot] ?? `{${slot}}`);
  return language === 'en' ? text.charAt(0).toUpperCase() + text.slice(1) : text;
}

/** Which owners, values, names and subjects a conversation has used: each is used once. */
export class BankUse {
  private readonly owners = new Set<string>();
  private readonly taken = new Set<string>();

  constructor(
    private readonly bank: LanguageBank,
    private readonly draw: Draw,
    private readonly language: GeneratedLanguage,
  ) {}

  private free<T>(items: readonly T[], key: (item: T) => string): T[] {
    return items.filter((item) => !this.taken.has(key(item)));
  }

  /** Takes `owners` owners and `values` values of one topic (an updatable one if asked; with `roomiest`, one with the most values left). */
  topic(
    owners: number,
    values: number,
    updatable: boolean,
    kind: string,
    roomiest = false,
  ): { topic: Topic; owners: string[]; values: string[] } {
    const room = (topic: Topic): number => this.free(topic.values, (value) => value).length;
    let fits = this.bank.topics.filter(
      (topic) =>
        (!updatable || topic.change !== undefined) && this.freeOwners(topic).length >= owners && room(topic) >= values,
    );
    if (fits.length === 0)
      throw new MembenchError(
        'INVALID_SCENARIO',
        `the ${this.language} fact bank has no topic left for another ${kind}: lower the counts in facts (or updates.chain)`,
      );
    if (roomiest) fits = fits.filter((topic) => room(topic) === Math.max(...fits.map(room)));
    const topic = this.draw.pick(fits);
    const chosenOwners = this.draw.shuffle(this.freeOwners(topic)).slice(0, owners);
    for (const owner of chosenOwners) this.owners.add(`${topic.key}:${owner}`);
    return { topic, owners: chosenOwners, values: this.take(topic.values, values) };
  }

  private freeOwners(topic: Topic): string[] {
    return topic.owners.filter((owner) => !this.owners.has(`${topic.key}:${owner}`));
  }

  /** `count` unused items of `items`, marked used. */
  take<T extends string>(items: readonly T[], count: number): T[] {
    const chosen = this.draw.shuffle(this.free(items, (item) => item)).slice(0, count);
    if (chosen.length < count)
      throw new MembenchError('INVALID_SCENARIO', `the ${this.language} bank ran out: lower the counts in facts`);
    for (const item of chosen) this.taken.add(item);
    return chosen;
  }

  isTaken(item: string): boolean {
    return this.taken.has(item);
  }

  /** One unused item of objects keyed by `key`. */
  takeOne<T>(items: readonly T[], key: (item: T) => string): T {
    const free = this.free(items, key);
    if (free.length === 0)
      throw new MembenchError('INVALID_SCENARIO', `the ${this.language} bank ran out: lower the counts in facts`);
    const item = this.draw.pick(free);
    this.taken.add(key(item));
    return item;
  }
}

/** Exactly round(share × n) of n flags set, in seeded order. */
function spread(draw: Draw, n: number, share: number): boolean[] {
  const set = Math.round(share * n);
  return draw.shuffle(Array.from({ length: n }, (_, index) => index < set));
}

/** Builds every plant of one conversation, drawing topics, owners and values from the bank. */
export function plantFacts(spec: GeneratorSpec, language: GeneratedLanguage, draw: Draw, use: BankUse): Plant[] {
  const bank = BANKS[language];
  const { facts, updates } = spec;
  const plants: Plant[] = [];
  const mention = (text: string): { text: string; reply: string } => {
    const frame = draw.pick(bank.mentions);
    return { text: fill(frame.user, { fact: text }, language), reply: frame.assistant };
  };
  const statement = (id: string, offset: number, remember: boolean, text: string, memoryName?: string): Statement =>
    remember
      ? { id, offset, remember, text, reply: '', memoryName: memoryName ?? id }
      : { id, offset, remember, ...mention(text) };
  const plant = (kind: PlantKind, id: string, rest: Omit<Plant, 'id' | 'kind' | 'far' | 'anchor'>): void => {
    plants.push({ id, kind, far: false, anchor: 0, ...rest });
  };
  const mode = (remember: boolean): string => (remember ? 'remember' : 'mention');
  // Plant ids: en-f01 (fact), en-d01 (distractor), en-u01 (update), en-m01 (multi-hop), en-t01 (temporal).
  const pid = (prefix: string, index: number): string => `${language}-${prefix}${String(index + 1).padStart(2, '0')}`;

  // Chains first (they take the most values of a topic), then pairs, then single facts.
  const lengths = draw.shuffle(
    Array.from(
      { length: facts.update },
      (_, index) => updates.chain.min + (index % (updates.chain.max - updates.chain.min + 1)),
    ),
  );
  const revertible = lengths.map((length, index) => [length, index] as const).filter(([length]) => length >= 2);
  const reverts = new Set(
    draw
      .shuffle(revertible)
      .slice(0, Math.round(updates.revertShare * revertible.length))
      .map(([, index]) => index),
  );
  const rememberUpdates = spread(draw, facts.update, spec.rememberShare);
  // Longest chains draw first, so shorter ones fill the topics' leftover values.
  const longestFirst = lengths.map((_, index) => index).sort((a, b) => lengths[b]! - lengths[a]! || a - b);
  longestFirst.forEach((index) => {
    const corrections = lengths[index]!;
    const revert = reverts.has(index);
    const { topic, owners, values } = use.topic(
      1,
      revert ? corrections : corrections + 1,
      true,
      'correction chain',
      true,
    );
    // A revert returns to a value said before, other than the one it replaces.
    const chain = revert ? [...values, draw.pick(values.slice(0, -1))] : values;
    const id = pid('u', index);
    let offset = 0;
    const statements = chain.map((value, step) => {
      if (step > 0) offset += draw.int(2, 8);
      const template = step === 0 ? topic.state : revert && step === chain.length - 1 ? topic.revert! : topic.change!;
      return statement(
        `${id}-${step + 1}`,
        offset,
        rememberUpdates[index]!,
        fill(template, { owner: owners[0]!, value }, language),
        id,
      );
    });
    const current = chain.at(-1)!;
    plant('update', id, {
      label: revert ? 'update/revert' : `update/chain-${corrections}`,
      category: 'update',
      statements,
      evidence: [statements.at(-1)!.id],
      expect: [current],
      forbid: [...new Set(chain.filter((value) => value !== current))],
      ask: fill(topic.ask, { owner: owners[0]! }, language),
    });
  });

  spread(draw, facts.distractor, spec.rememberShare).forEach((remember, index) => {
    const { topic, owners, values } = use.topic(2, 2, false, 'distractor pair');
    const id = pid('d', index);
    const [target, other] = [0, 1].map((which) =>
      fill(topic.state, { owner: owners[which]!, value: values[which]! }, language),
    );
    const statements = [
      statement(`${id}-1`, 0, remember, other!),
      statement(`${id}-2`, draw.int(1, 4), remember, target!),
    ];
    plant('distractor', id, {
      label: `distractor/${mode(remember)}`,
      category: 'extraction',
      statements,
      evidence: [`${id}-2`],
      expect: [values[0]!],
      forbid: [values[1]!],
      ask: fill(topic.ask, { owner: owners[0]! }, language),
    });
  });

  spread(draw, facts.fact, spec.rememberShare).forEach((remember, index) => {
    const { topic, owners, values } = use.topic(1, 1, false, 'fact');
    const id = pid('f', index);
    const text = fill(topic.state, { owner: owners[0]!, value: values[0]! }, language);
    plant('fact', id, {
      label: `fact/${mode(remember)}`,
      category: 'extraction',
      statements: [statement(id, 0, remember, text)],
      evidence: [id],
      expect: values,
      forbid: [],
      ask: fill(topic.ask, { owner: owners[0]! }, language),
    });
  });

  spread(draw, facts['multi-hop'], spec.rememberShare).forEach((remember, index) => {
    const hop = draw.pick(bank.hops.filter((candidate) => candidate.values.some((value) => !use.isTaken(value))));
    const relation = use.take(bank.relations, 1)[0]!;
    const name = use.take(bank.names, 1)[0]!;
    const value = use.take(hop.values, 1)[0]!;
    const id = pid('m', index);
    const link = fill(hop.link, { relation, name }, language);
    const fact = fill(hop.fact, { name, value }, language);
    const [first, second] = draw.int(0, 1) === 0 ? [link, fact] : [fact, link];
    const statements = [
      statement(`${id}-1`, 0, remember, first!),
      statement(`${id}-2`, draw.int(1, 3), remember, second!),
    ];
    plant('multi-hop', id, {
      label: `multi-hop/${mode(remember)}`,
      category: 'multi-hop',
      statements,
      evidence: statements.map((item) => item.id),
      expect: [value],
      forbid: [],
      ask: fill(hop.ask, { relation }, language),
    });
  });

  for (let index = 0; index < facts.temporal; index++) {
    const activity = use.takeOne(bank.activities, (item) => item.expect);
    const id = pid('t', index);
    const statements: Statement[] = [
      {
        id,
        offset: 0,
        remember: false,
        text: fill(bank.activityStatement.user, { activity: activity.text }, language),
        reply: bank.activityStatement.assistant,
      },
    ];
    plant('temporal', id, {
      label: 'temporal',
      category: 'temporal',
      statements,
      evidence: [id],
      expect: [activity.expect],
      forbid: [],
      ask: bank.activityAsk,
    });
  }

  // Half of each kind is anchored early enough for the largest distance.
  const byKind = new Map<PlantKind, Plant[]>();
  for (const item of plants) byKind.set(item.kind, [...(byKind.get(item.kind) ?? []), item]);
  for (const group of byKind.values()) draw.shuffle(group).forEach((item, index) => (item.far = index % 2 === 0));
  return plants;
}
