/** --judge-prompts: a user's templates replace membench's per type (the rest keep membench's), placeholders filled, problems located. */
import { describe, expect, it } from 'vitest';
import { fillPrompt, judgeType, MEMBENCH_PROMPTS, parsePromptsText } from '../../../harness/results/judge-prompts.js';

describe('judge prompts', () => {
  it('replaces the types a file gives and says which kept membench wording; fills every placeholder', () => {
    const set = parsePromptsText('temporal: |\n  Q={{question}} G={{ gold }} R={{response}}\n', 'mine.yaml');
    expect(set.source).toBe('mine.yaml + membench (default, knowledge-update, preference, abstention)');
    expect(set.templates.default).toBe(MEMBENCH_PROMPTS.default);
    expect(
      fillPrompt(set.templates.temporal, {
        type: 'temporal',
        question: 'When?',
        expect: ['7 May', 'May 7'],
        forbid: [],
        response: 'On 7 May.',
      }),
    ).toBe('Q=When? G=7 May / May 7 R=On 7 May.\n');
  });

  it('locates a file without {{response}}, a non-string template and an empty file', () => {
    expect(() => parsePromptsText('default: "Is {{gold}} right?"\npreference: [1]\n', 'p.yaml')).toThrow(
      expect.objectContaining({
        details: [
          'p.yaml:1:10: default: the template never shows the answer: put {{response}} where the judge should read it',
          'p.yaml:2:13: preference: expected a non-empty template (a string, e.g. a YAML block with |)',
        ],
      }),
    );
    expect(() => parsePromptsText('', 'e.yaml')).toThrow(
      expect.objectContaining({ details: [expect.stringContaining('e.yaml:1:1: (document): file is empty')] }),
    );
  });

  it('picks the prompt by category, then the dataset label', () => {
    expect(judgeType({ category: 'abstention', label: 'temporal-reasoning' })).toBe('abstention');
    expect(judgeType({ category: 'extraction', label: 'single-session-preference' })).toBe('preference');
    expect(judgeType({ category: 'update', label: 'knowledge-update' })).toBe('knowledge-update');
    expect(judgeType({ category: 'temporal', label: 'temporal' })).toBe('temporal');
    expect(judgeType({ category: 'multi-hop' })).toBe('default');
  });
});
