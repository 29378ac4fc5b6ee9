import { describe, expect, it } from 'vitest';
import { renderAa, type AaResult } from '../../../harness/bench/aa.js';
import { evaluateTargets } from '../../../harness/bench/targets.js';

const result = (flagged: AaResult['flagged'], caught: AaResult['flagged']): AaResult => ({
  matrix: [],
  cellsCompared: 100,
  figuresJudged: 2400,
  latencyJudged: 90,
  latencyTooFew: 110,
  ungated: 2,
  flagged,
  planted: { caught },
});

const slow = { cell: 'recipes-en~60/planted', metric: 'save time', change: '×5.2 [×4.1, ×6.6]' };

describe('the bench A/A section', () => {
  it('prints the false alarms of two runs of the same code beside the planted regression, and judges both targets', () => {
    const clean = result([], [slow]);
    const text = renderAa(clean);
    expect(text).toContain('membench run (the default run), twice, then compare: 100 cells, 2400 figures judged');
    expect(text).toContain('- flagged between identical runs: **0** (target 0)');
    expect(text).toContain('caught, 1 figure(s)');
    expect(text).toContain('`recipes-en~60/planted` save time ×5.2 [×4.1, ×6.6]');
    const verdicts = (aa: AaResult) =>
      evaluateTargets({ aa }).map((target) => [target.id, target.value, target.pass] as const);
    expect(verdicts(clean)).toEqual([
      ['aa:false-alarms', 0, true],
      ['aa:planted', 1, true],
    ]);
    const noisy = result([{ cell: 'recipes-zh/bm25', metric: 'save time', change: '×2.3 [×2.1, ×2.6]' }], []);
    expect(verdicts(noisy)).toEqual([
      ['aa:false-alarms', 1, false],
      ['aa:planted', 0, false],
    ]);
    expect(renderAa(noisy)).toContain('**NOT caught**');
    expect(renderAa({ ...clean, planted: { skipped: 'no fixtures here' } })).toContain(
      '- planted regression: not run: no fixtures here',
    );
  });
});
