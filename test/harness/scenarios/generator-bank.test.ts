/**
 * The generator's bank keeps its gold strings apart, so a planted value answers one question only:
 * no value, name, activity or never-stated subject occurs inside any other text a message can
 * hold, and none occurs in thousands of filler exchanges of either language.
 */
import { describe, expect, test } from 'vitest';
import { normalizeText } from '../../../harness/core/text.js';
import { generateFiller } from '../../../harness/scenarios/filler.js';
import { BANKS, bankCapacity, GENERATED_LANGUAGES } from '../../../harness/scenarios/generator-bank.js';

describe.each(GENERATED_LANGUAGES)('the %s bank', (language) => {
  const bank = BANKS[language];
  const values = [
    ...bank.topics.flatMap((topic) => topic.values),
    ...bank.hops.flatMap((hop) => hop.values),
    ...bank.activities.map((activity) => activity.expect),
  ];
  const subjects = bank.neverStated.flatMap((item) => item.subjects);
  const needles = [...values, ...bank.names, ...subjects];
  /** Every string that can end up in a message (questions are never saved). */
  const texts = [
    ...bank.topics.flatMap((topic) => [
      topic.state,
      topic.change ?? '',
      topic.revert ?? '',
      ...topic.owners,
      ...topic.values,
    ]),
    ...bank.hops.flatMap((hop) => [hop.link, hop.fact, ...hop.values]),
    ...bank.relations,
    ...bank.names,
    ...bank.activities.map((activity) => activity.text),
    bank.activityStatement.user,
    bank.activityStatement.assistant,
    ...bank.mentions.flatMap((frame) => [frame.user, frame.assistant]),
  ].filter((text) => text.length > 0);

  test('every gold string is unique and inside no other text of the bank', () => {
    expect(new Set(needles.map(normalizeText)).size).toBe(needles.length);
    for (const needle of needles) {
      const own = (text: string): boolean =>
        text === needle || bank.activities.some((activity) => activity.expect === needle && activity.text === text);
      const inside = texts.filter((text) => !own(text) && normalizeText(text).includes(normalizeText(needle)));
      expect(inside, `"${needle}"`).toEqual([]);
    }
  });

  test('no gold string or never-stated subject occurs in 3,000 filler exchanges of en, zh or mixed', () => {
    for (const filler of ['en', 'zh', 'mixed'] as const) {
      const text = normalizeText(
        generateFiller(3000, { seed: 5, language: filler })
          .map((turn) => `${turn.user}\n${turn.assistant}`)
          .join('\n'),
      );
      for (const needle of needles)
        expect(text.includes(normalizeText(needle)), `"${needle}" in ${filler} filler`).toBe(false);
    }
  });

  test('its capacity covers the built-in suite with room to spare', () => {
    const capacity = bankCapacity(language, 3);
    expect(capacity.owners).toBeGreaterThanOrEqual(40);
    expect(capacity.chains).toBeGreaterThanOrEqual(12);
    expect(capacity.values).toBeGreaterThanOrEqual(70);
    expect(Math.min(capacity.multiHop, capacity.temporal)).toBeGreaterThanOrEqual(8);
    expect(capacity.abstention).toBeGreaterThanOrEqual(20);
  });
});
