/** An error cell has no figures: results.json holds none, reports show its error, and no average takes it in. */
import { describe, expect, it } from 'vitest';
import { okCells } from '../../harness/results/cells.js';
import { leaderboard } from '../../harness/results/leaderboard.js';
import { parseResults } from '../../harness/results/read.js';
import { renderJson, renderJunit, renderMarkdown } from '../../reports/index.js';
import { failCell, smallRun } from './fixture.js';

describe('an error cell', () => {
  it('is written without figures, rendered as an error, and left out of every average', () => {
    const run = smallRun();
    failCell(run, 'recipes-zh/buffer', 'disk on fire', 'step 3 (user)');
    const written = parseResults(renderJson(run), 'x.json').cells.find((cell) => cell.id === 'recipes-zh/buffer')!;
    expect(Object.keys(written)).not.toContain('recall');
    expect(written).toMatchObject({ status: 'error', error: 'disk on fire', phase: 'step 3 (user)' });
    expect(renderMarkdown(run)).toContain('error: disk on fire (in step 3 (user))');
    expect(renderJunit(run)).toContain('<error message="disk on fire (in step 3 (user))"');
    const alone = smallRun().cells.filter((cell) => cell.id === 'preference-corrections/buffer');
    const row = leaderboard(okCells(run.cells), 1).rows.find((item) => item.setting === 'buffer')!;
    expect(row.cells).toBe(1);
    expect(row.contextRecall.n).toBe(alone[0]!.recall.contextRecall.n);
  });
});
