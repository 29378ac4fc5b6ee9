/**
 * What the workload generator plants, in English and Chinese: facts about owners (my son's
 * allergy, my sister's flight day), two-hop links (my brother-in-law → Karim → locksmith), dated
 * activities, never-stated subjects for abstention, and the passing-mention frames a fact hides in.
 *
 * Every value is a gold string somewhere, so the bank keeps them apart: no value, name or
 * abstention subject occurs inside any other text of its language's bank, and none occurs in the
 * filler vocabulary (filler.ts) — test/harness/scenarios/generator.test.ts checks both. A value is
 * used once per conversation, so each one stays the answer to exactly one question.
 */
import { EN_BANK } from './generator-bank-en.js';
import { ZH_BANK } from './generator-bank-zh.js';

/** Languages the generator writes conversations in. */
export const GENERATED_LANGUAGES = ['en', 'zh'] as const;
export type GeneratedLanguage = (typeof GENERATED_LANGUAGES)[number];

/**
 * A fact about an owner that holds one value at a time. Templates fill `{owner}` and `{value}`;
 * topics with `change` and `revert` can be corrected (an update chain), the others are not.
 */
export interface Topic {
  key: string;
  owners: readonly string[];
  values: readonly string[];
  state: string;
  ask: string;
  change?: string;
  revert?: string;
}

/** Two facts joined by a name: `link` ties the relation to the name, `fact` gives the name's value. */
export interface HopTemplate {
  link: string;
  fact: string;
  ask: string;
  values: readonly string[];
}

/** A dated activity: `text` goes into the statement, `expect` is the word a probe looks for. */
export interface Activity {
  text: string;
  expect: string;
}

/** A question about something never said; none of `subjects` occurs in any message of the conversation. */
export interface NeverStated {
  question: string;
  subjects: readonly string[];
}

/** A user message a fact is mentioned in passing (`{fact}`), with its scripted reply. */
export interface MentionFrame {
  user: string;
  assistant: string;
}

/** How a temporal question names the day of the activity, relative to the current date. */
export interface DatePhrases {
  weekdays: readonly string[];
  sameDay: string;
  yesterday: string;
  /** 2 to 6 days back; `sameWeek` when the day is in the current Monday-to-Sunday week. */
  thisWeek: (weekday: string, sameWeek: boolean) => string;
  onDate: (date: Date, weekday: string) => string;
  currentDate: (iso: string, weekday: string) => string;
}

/** Everything the generator writes in one language. */
export interface LanguageBank {
  topics: readonly Topic[];
  relations: readonly string[];
  names: readonly string[];
  hops: readonly HopTemplate[];
  activities: readonly Activity[];
  /** The statement of a dated activity (`{activity}`), its reply, and the question (`{when}`). */
  activityStatement: MentionFrame;
  activityAsk: string;
  neverStated: readonly NeverStated[];
  mentions: readonly MentionFrame[];
  dates: DatePhrases;
}

/** The bank of each language. */
export const BANKS: Record<GeneratedLanguage, LanguageBank> = { en: EN_BANK, zh: ZH_BANK };

/** How many plants of each kind a language's bank can hold in one conversation (the spec is checked against it). */
export interface BankCapacity {
  /** (topic, owner) pairs: each fact and update takes one, a distractor pair two. */
  owners: number;
  /** Correction chains of the longest length asked for: each takes an owner and up to longest + 1 values of a topic that can be corrected. */
  chains: number;
  /** Values of all topics: a fact takes one, a distractor pair two, a chain up to longest + 1. */
  values: number;
  multiHop: number;
  temporal: number;
  abstention: number;
}

/** The capacity of a language's bank, for chains of up to `longestChain` corrections. */
export function bankCapacity(language: GeneratedLanguage, longestChain: number): BankCapacity {
  const bank = BANKS[language];
  const updatable = bank.topics.filter((topic) => topic.change !== undefined);
  return {
    owners: bank.topics.reduce((total, topic) => total + Math.min(topic.owners.length, topic.values.length), 0),
    chains: updatable.reduce(
      (total, topic) => total + Math.min(topic.owners.length, Math.floor(topic.values.length / (longestChain + 1))),
      0,
    ),
    values: bank.topics.reduce((total, topic) => total + topic.values.length, 0),
    multiHop: Math.min(
      bank.relations.length,
      bank.names.length,
      bank.hops.reduce((total, hop) => total + hop.values.length, 0),
    ),
    temporal: bank.activities.length,
    abstention: bank.neverStated.length,
  };
}
