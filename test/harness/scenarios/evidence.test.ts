/** Evidence coverage on hand-made contexts: full, partial, none, Chinese, and the id lookup. */
import { describe, expect, test } from 'vitest';
import {
  evidenceCoverage,
  evidenceIndex,
  evidenceTerms,
  probeEvidenceCoverage,
  stepContent,
} from '../../../harness/scenarios/evidence.js';
import type { Step } from '../../../harness/scenarios/format.js';
import { normalizeText } from '../../../harness/core/text.js';

const context = (...lines: string[]): string => normalizeText(lines.join('\n'));

describe('evidenceCoverage', () => {
  const step = 'My son is allergic to peanuts, so skip peanut oil.';

  test('the whole step in the context covers it fully', () => {
    expect(evidenceCoverage([step], context('Hello.', step, 'Bye.'))).toEqual({ value: 1, perStep: [1] });
  });

  test('a context holding some of the content words covers that share of them', () => {
    // Content words: son, allergic, peanuts, skip, peanut, oil (stop words "my", "is", "to", "so" dropped).
    expect([...evidenceTerms(step)].sort()).toEqual(['allergic', 'oil', 'peanut', 'peanuts', 'skip', 'son']);
    const coverage = evidenceCoverage([step], context('Fry it in peanut oil for your son.'));
    expect(coverage.value).toBeCloseTo(3 / 6);
  });

  test('a context without the step covers none of it; words inside other words do not count', () => {
    expect(evidenceCoverage([step], context('Braise the pork belly for an hour.')).value).toBe(0);
    expect(evidenceCoverage(['the pot'], context('potatoes and teapots')).value).toBe(0);
  });

  test('case, width and spacing do not matter (NFKC + case fold on both sides)', () => {
    expect(evidenceCoverage(['Cast-Iron   POT'], context('a ｃａｓｔ-iron pot')).value).toBe(1);
  });

  test('Chinese: bigrams and words are found as substrings, so segmentation differences do not matter', () => {
    const zh = '我儿子对花生过敏。';
    expect(evidenceCoverage([zh], context('用户说：我儿子对花生过敏。')).value).toBe(1);
    const partial = evidenceCoverage([zh], context('花生油不要用了'));
    expect(partial.value).toBeGreaterThan(0);
    expect(partial.value).toBeLessThan(0.5);
    expect(evidenceCoverage([zh], context('今天天气很好')).value).toBe(0);
  });

  test('several steps are averaged; a step without content words is left out of the mean', () => {
    const coverage = evidenceCoverage(['peanut allergy', 'cast-iron pot', 'Yes!'], context('peanut allergy noted'));
    expect(coverage.perStep).toEqual([1, 0, null]);
    expect(coverage.value).toBe(0.5);
    expect(evidenceCoverage(['Yes!'], context('anything')).value).toBeNull();
  });
});

describe('evidence lookup by step id', () => {
  const steps: Step[] = [
    { kind: 'user', id: 'u1', user: 'Which tofu?', assistant: 'Firm tofu holds its shape.' },
    {
      kind: 'tool',
      id: 't1',
      tool: 'add_to_shopping_list',
      args: { items: ['rock sugar'] },
      result: { ok: true },
      effect: true,
    },
    { kind: 'remember', id: 'r1', remember: '我住在上海。' },
    { kind: 'concurrent', id: 'c1', concurrent: [[{ kind: 'forget', id: 'f1', forget: 'home-city' }], []] },
    { kind: 'probe', id: 'p1', probe: 'q?', forbid: [], category: 'extraction', evidence: ['u1'] },
  ];

  test('a step content is what it put into the conversation (reply and tool call included)', () => {
    expect(stepContent(steps[0]!)).toBe('Which tofu?\nFirm tofu holds its shape.');
    expect(stepContent(steps[1]!)).toBe('add_to_shopping_list\n{"items":["rock sugar"]}\n{"ok":true}');
    expect([...evidenceIndex(steps).keys()]).toEqual(['u1', 't1', 'r1', 'c1', 'f1', 'p1']);
  });

  test('probeEvidenceCoverage: null without evidence, scores the cited steps otherwise', () => {
    const index = evidenceIndex(steps);
    expect(probeEvidenceCoverage([], index, context('x'))).toBeNull();
    expect(probeEvidenceCoverage(['u1'], index, context('which tofu? firm tofu holds its shape.'))?.value).toBe(1);
    expect(
      probeEvidenceCoverage(['t1'], index, context('add_to_shopping_list {"items":["rock sugar"]}'))?.value,
    ).toBeCloseTo(4 / 6);
    expect(probeEvidenceCoverage(['r1'], index, context('我住在上海'))?.value).toBe(1);
  });
});
