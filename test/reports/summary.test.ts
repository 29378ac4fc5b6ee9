/** Shared report rows: the recall columns every breakdown shows, and the notes under the tables. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendStepSummary, renderRunStepSummary } from '../../reports/github-summary.js';
import { tempDir } from '../helpers/temp-dir.js';
import {
  interleavingNote,
  markdownCode,
  markdownTable,
  modelDependenceNote,
  recallColumns,
  summaryRow,
} from '../../reports/summary.js';
import { renderConsoleSummary } from '../../reports/console.js';
import { renderMarkdown } from '../../reports/markdown.js';
import { PROBE_COLUMNS } from '../../reports/probe-columns.js';
import { cellOf, failCell, smallRun } from './fixture.js';

describe('report summaries', () => {
  it('shows evidence recall, answer recall and conflict exposure beside context recall', () => {
    const cell = cellOf(smallRun(), 'preference-corrections/buffer');
    const titles = recallColumns(cell.recall).map((column) => column.title);
    expect(titles.slice(0, 7)).toEqual([
      'context recall',
      'answer recall',
      'evidence recall',
      'stale exposure',
      'conflict exposure',
      'answer acc',
      'abstained',
    ]);
    const row = summaryRow(cell);
    expect(row.conflict).toBe(
      `${cell.recall.conflictExposure.value!.toFixed(2)} (${cell.recall.conflictExposure.hits}/${cell.recall.conflictExposure.n})`,
    );
    expect(row.evidence).toMatch(/^\d\.\d\d \(n=\d+\)$/u);
  });

  it("shows a probe's context tokens, or – when they were not measured (a ranking-only cell), never a number", () => {
    const cell = cellOf(smallRun(), 'preference-corrections/buffer');
    const column = PROBE_COLUMNS.find((each) => each.title === 'ctx tokens')!;
    const [measured] = cell.probes;
    expect(column.text(cell, measured!)).toBe(String(measured!.contextTokens));
    const { contextTokens, ...unmeasured } = measured!;
    expect(contextTokens).toBeGreaterThan(0);
    expect(column.text(cell, unmeasured)).toBe('–');
    expect(column.sort?.(unmeasured)).toBeNull();
  });

  it('says which figures depend on the model, in every text report', () => {
    const result = smallRun();
    // The console cuts prose at spaces to its width: joined back, the note is whole.
    const note = modelDependenceNote(result);
    expect(renderConsoleSummary(result).replace(/\n/gu, ' ')).toContain(note);
    expect(renderMarkdown(result)).toContain(note);
  });

  it("names the run's own strategies by whether they declared keeping messages verbatim", () => {
    const result = smallRun();
    expect(modelDependenceNote(result)).toContain('evidence recall of buffer, window (they keep messages verbatim)');
    expect(modelDependenceNote(result)).toMatch(/Model-dependent: answers \(accuracy, F1, abstention\)\.$/u);
    const transformed = structuredClone(result);
    for (const strategy of transformed.header.strategies)
      if (strategy.name === 'window') strategy.traits = { ...strategy.traits!, keepsVerbatim: false };
    expect(modelDependenceNote(transformed)).toContain('and what window keeps, hence its recall');
    expect(modelDependenceNote(transformed)).toContain('evidence recall of buffer (it keeps messages verbatim)');
    for (const strategy of transformed.header.strategies)
      strategy.traits = { ...strategy.traits!, keepsVerbatim: false };
    expect(modelDependenceNote(transformed)).toContain('and what buffer, window keep, hence their recall');
  });

  it('says of a run whose every cell ranked only that its figures are the rankings, not tokens or answers', () => {
    const ranked = structuredClone(smallRun());
    for (const cell of ranked.cells) if (cell.status === 'ok') cell.skipped = ['answers', 'turns'];
    expect(modelDependenceNote(ranked)).toBe(
      'Model-independent: every figure of this run, the rankings and the retrieval figures computed from them (no language model was asked anything; a vector ranking depends on its embedder).',
    );
    // One cell run whole: answers were asked for, and the note says what depends on the model.
    const mixed = structuredClone(ranked);
    const whole = mixed.cells.find((cell) => cell.status === 'ok')!;
    if (whole.status === 'ok') delete whole.skipped;
    expect(modelDependenceNote(mixed)).toMatch(/^Model-independent: tokens, latency, durability/u);
  });

  it('flags interleaved cells and gives their spread over trials', () => {
    const result = smallRun();
    expect(interleavingNote(result)).toBeUndefined();
    const [a, b] = [cellOf(result, 'recipes-zh/buffer'), cellOf(result, 'recipes-zh/window(k=2)')];
    const twin = {
      ...structuredClone(a),
      id: `${a.id}/t1`,
      trial: 1,
      tokens: { ...a.tokens, contextTotal: a.tokens.contextTotal + 40 },
    };
    Object.assign(a, { interleaved: true });
    Object.assign(twin, { interleaved: true });
    result.cells.push(twin);
    result.header.trials = 2;
    const note = interleavingNote(result)!;
    expect(note).toContain(`recipes-zh/buffer: ctx tokens ${a.tokens.contextTotal}–${a.tokens.contextTotal + 40}`);
    expect(summaryRow(a).strategy).toBe('buffer ≈');
    expect(summaryRow(b).strategy).toBe('window(k=2)');
    expect(renderMarkdown(result)).toContain(note);
  });
});

describe('appendStepSummary', () => {
  it('appends to the file $GITHUB_STEP_SUMMARY names, and names the variable when it points at a directory', async () => {
    const dir = await tempDir('membench-step-summary-');
    const file = path.join(dir, 'summary.md');
    expect(await appendStepSummary('# one', file)).toBe(true);
    expect(await appendStepSummary('# two\n', file)).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe('# one\n# two\n');
    expect(await appendStepSummary('# three', '')).toBe(false);
    await expect(appendStepSummary('# four', dir)).rejects.toThrow(
      `${dir} is a directory, not a file: --github-summary appends to $GITHUB_STEP_SUMMARY (${dir}): point it at a file`,
    );
  });
});

describe('markdownTable', () => {
  it('keeps a cell on one line, its | escaped, and an HTML tag in a name as text; p<0.001 as it is', () => {
    expect(
      markdownTable(
        ['setting', 'p'],
        [
          ['<img src=x onerror=alert(1)>', 'p<0.001'],
          ['a|b', 'two\nlines'],
        ],
      ),
    ).toBe(
      [
        '| setting | p |',
        '| --- | --- |',
        '| &lt;img src=x onerror=alert(1)> | p<0.001 |',
        '| a\\|b | two lines |',
      ].join('\n'),
    );
  });

  it('keeps a cell with a lone carriage return (a Markdown line end too) on one line', () => {
    expect(markdownTable(['setting', 'p'], [['a\rb', 'c\r\nd']]).split('\n')).toEqual([
      '| setting | p |',
      '| --- | --- |',
      '| a b | c d |',
    ]);
  });
});

describe('report.md outside its tables', () => {
  const hostile = 'g<img src=x onerror=alert(1)>\r# not a heading\n- nor an item';
  const rendered = () => {
    const result = smallRun();
    for (const cell of result.cells) if (cell.scenario === 'recipes-zh') cell.group = hostile;
    const refusing = cellOf(result, 'recipes-zh/buffer');
    refusing.turns[0]!.refused = 'over budget\n# <b>yes</b>';
    return renderMarkdown(result).split('\n');
  };

  it('keeps a group name and a note on their own line, an HTML tag in them as text', () => {
    const lines = rendered();
    const flat = 'g&lt;img src=x onerror=alert(1)> # not a heading - nor an item';
    expect(lines).toContain(`### Leaderboard — group ${flat}`);
    expect(lines.filter((line) => /^#+ not a heading|^- nor an item|^# &lt;b>/u.test(line))).toEqual([]);
    expect(
      lines.some(
        (line) => line.startsWith('- refused: recipes-zh/buffer') && line.includes('over budget # &lt;b>yes&lt;/b>'),
      ),
    ).toBe(true);
    expect(lines.filter((line) => /<(img|b)\b/u.test(line))).toEqual([]);
  });

  it("keeps a failed cell's error on its line of the GitHub step summary", () => {
    const result = smallRun();
    failCell(result, 'recipes-zh/buffer', 'boom <img src=x>\n## not a heading');
    const lines = renderRunStepSummary(result).split('\n');
    expect(lines).toContain('- `recipes-zh/buffer`: error: boom &lt;img src=x> ## not a heading');
    expect(lines.filter((line) => line.startsWith('## not'))).toEqual([]);
  });

  it('writes a name as a code span that a backtick inside it cannot close', () => {
    expect(markdownCode('window(k=2)')).toBe('`window(k=2)`');
    expect(markdownCode('a`b<script>')).toBe('``a`b<script>``');
    expect(markdownCode('`x``')).toBe('``` `x`` ```');
    expect(markdownCode('two\nlines')).toBe('`two lines`');
  });
});
