import { describe, expect, it } from 'vitest';
import { renderAa, type AaResult } from '../../../harness/bench/aa.js';
import { evaluateTargets } from '../../../harness/bench/targets.js';

const result = (
  flagged: AaResult['flagged'],
  forgetful: AaResult['flagged'],
  slower: AaResult['flagged'],
): AaResult => ({
  matrix: [],
  cellsCompared: 100,
  figuresJudged: 2400,
  latencyJudged: 90,
  latencyTooFew: 110,
  ungated: 2,
  flagged,
  planted: {
    forgetful: { flagged: forgetful, expected: forgetful.filter((figure) => figure.metric.includes('recall')).length },
    slower: { flagged: slower, expected: slower.filter((figure) => figure.metric === 'save time').length },
  },
});

const slow = { cell: 'recipes-en~60/planted', metric: 'save time', change: '×5.2 [×4.1, ×6.6]' };
const forgot = { cell: 'recipes-en/planted', metric: 'evidence recall', change: '-0.14' };

describe('the bench A/A section', () => {
  it('prints the false alarms of two runs of the same code beside each planted regression, and judges each target', () => {
    const clean = result([], [forgot], [slow]);
    const text = renderAa(clean);
    expect(text).toContain('membench run (the default run), twice, then compare: 100 cells, 2400 figures judged');
    expect(text).toContain('- flagged between identical runs: **0** (target 0)');
    expect(text).toContain(
      '- planted regression k=1 where base had k=2 (one setting name): **caught (a recall figure failed)**, 1 figure(s) flagged',
    );
    expect(text).toContain('- planted regression save ×5 (one setting name): **caught (a save time figure failed)**');
    expect(text).toContain('`recipes-en~60/planted` save time ×5.2 [×4.1, ×6.6]');
    const verdicts = (aa: AaResult) =>
      evaluateTargets({ aa }).map((target) => [target.id, target.value, target.pass] as const);
    expect(verdicts(clean)).toEqual([
      ['aa:false-alarms', 0, true],
      ['aa:planted-forgetful', 1, true],
      ['aa:planted-slower', 1, true],
    ]);
    // A plant caught only by another plant's figure is not caught: the slow save flagged on the
    // forgetful pair says nothing of the recall the forgetful window lost.
    const noisy = result([{ cell: 'recipes-zh/bm25', metric: 'save time', change: '×2.3 [×2.1, ×2.6]' }], [slow], []);
    expect(verdicts(noisy)).toEqual([
      ['aa:false-alarms', 1, false],
      ['aa:planted-forgetful', 0, false],
      ['aa:planted-slower', 0, false],
    ]);
    expect(renderAa(noisy)).toContain('**NOT caught (no recall figure failed)**, 1 figure(s) flagged');
    expect(renderAa(noisy)).toContain('**NOT caught (no save time figure failed)**, 0 figure(s) flagged');
    expect(renderAa({ ...clean, planted: { skipped: 'no fixtures here' } })).toContain(
      '- planted regressions: not run: no fixtures here',
    );
  });
});
