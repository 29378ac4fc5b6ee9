import { describe, expect, it } from 'vitest';
import type { Distribution } from '../../harness/core/metrics.js';
import { compareRuns, hasRegression, noiseChecks, renderComparison } from '../../reports/compare.js';
import { renderComparisonMarkdown } from '../../reports/github-summary.js';
import { cellOf, renameScenario, smallRun } from './fixture.js';
import type { MembenchError } from '../../harness/core/errors.js';

const latency = (p50: number, p95: number): Distribution => ({ n: 20, mean: p50, p50, p95, p99: p95, max: p95 });

describe('compareRuns', () => {
  it('passes an identical run', () => {
    const comparison = compareRuns(smallRun(), smallRun());
    expect(hasRegression(comparison)).toBe(false);
    expect(comparison.cells).toHaveLength(6);
    expect(comparison.added).toEqual([]);
    expect(comparison.removed).toEqual([]);
    expect(comparison.notes).toEqual([]);
    expect(renderComparison(comparison)).toMatch(
      /OK: no regression \(6 cells compared, 0 missing, 0 new, 0 in error\)$/u,
    );
  });

  it('fails a recall drop and a token increase, naming the cell and the metric', () => {
    const head = smallRun();
    const recall = cellOf(head, 'recipes-zh/buffer').recall.contextRecall;
    Object.assign(recall, { hits: recall.hits - 1, value: (recall.hits - 1) / recall.n });
    cellOf(head, 'preference-corrections/window(k=4)').tokens.contextTotal = Math.round(
      cellOf(smallRun(), 'preference-corrections/window(k=4)').tokens.contextTotal * 1.2,
    );
    const comparison = compareRuns(smallRun(), head);
    expect(hasRegression(comparison)).toBe(true);
    expect(comparison.regressions.map(({ cell, check }) => [cell, check.metric])).toEqual([
      ['recipes-zh/buffer', 'context recall'],
      ['preference-corrections/window(k=4)', 'context tokens'],
    ]);
    expect(comparison.overall.map((check) => [check.metric, check.verdict])).toEqual([
      ['context recall', 'ok'],
      ['evidence recall', 'ok'],
      ...Object.keys(cellOf(head, 'recipes-zh/buffer').recallByCategory)
        .filter((category) => category !== 'abstention')
        .flatMap((category) => [
          [`context recall [${category}]`, 'ok'],
          [`evidence recall [${category}]`, 'ok'],
        ]),
      ['context tokens', 'ok'],
      ['maintenance tokens', 'ok'],
    ]);
    const text = renderComparison(comparison);
    expect(text).toContain('recipes-zh/buffer');
    expect(text).toMatch(/preference-corrections\/window\(k=4\) +│ context tokens .*\+20\.0%/u);
    expect(text).toMatch(/REGRESSION: 2 regressed metric\(s\) in 2 cell\(s\)/u);
  });

  it('calls a recall drop the paired test cannot tell from chance within noise, and a consistent one a regression', () => {
    const flip = (cell: ReturnType<typeof cellOf>, count: number) => {
      const recalled = cell.probes.filter((probe) => probe.contextRecall === true).slice(0, count);
      for (const probe of recalled) probe.contextRecall = false;
      const hits = cell.probes.filter((probe) => probe.contextRecall === true).length;
      Object.assign(cell.recall.contextRecall, { hits, value: hits / cell.recall.contextRecall.n });
    };
    const one = smallRun();
    flip(cellOf(one, 'recipes-zh/buffer'), 1);
    const check = compareRuns(smallRun(), one)
      .cells.find((cell) => cell.id === 'recipes-zh/buffer')!
      .checks.find((item) => item.metric === 'context recall')!;
    expect(check.verdict).toBe('noise');
    expect(check.note).toMatch(/^within noise: paired on \d+ probes, McNemar p=1\.000/u);
    const many = smallRun();
    for (const id of ['recipes-zh/buffer', 'preference-corrections/buffer']) flip(cellOf(many, id), 4);
    const regressions = compareRuns(smallRun(), many).regressions.map(({ cell, check: item }) => [cell, item.metric]);
    expect(regressions).toContainEqual(['overall', 'context recall']);
  });

  it('compares a scenario group as one unit per setting, recall paired by question', () => {
    const grouped = () => {
      const result = smallRun();
      for (const cell of result.cells) Object.assign(cell, { group: 'locomo:locomo10.json' });
      return result;
    };
    const head = grouped();
    for (const id of ['recipes-zh/buffer', 'preference-corrections/buffer']) {
      const cell = cellOf(head, id);
      for (const probe of cell.probes.filter((item) => item.contextRecall === true).slice(0, 5))
        probe.contextRecall = false;
      const hits = cell.probes.filter((probe) => probe.contextRecall === true).length;
      Object.assign(cell.recall.contextRecall, { hits, value: hits / cell.recall.contextRecall.n });
    }
    Object.assign(cellOf(head, 'recipes-zh/window(k=4)'), { status: 'error', error: 'boom' });
    const comparison = compareRuns(grouped(), head);
    expect(comparison.cells.map((cell) => cell.id)).toEqual([
      'group locomo:locomo10.json · buffer',
      'group locomo:locomo10.json · window(k=2)',
      'group locomo:locomo10.json · window(k=4)',
    ]);
    const regressions = comparison.regressions.map(({ cell, check }) => [cell, check.metric]);
    expect(regressions).toContainEqual(['group locomo:locomo10.json · buffer', 'context recall']);
    expect(regressions).toContainEqual(['group locomo:locomo10.json · window(k=4)', 'errored questions']);
    expect(regressions.filter(([cell]) => cell === 'group locomo:locomo10.json · window(k=2)')).toEqual([]);
  });

  it('fails an evidence recall drop and a conflict exposure rise, per cell and per category', () => {
    const head = smallRun();
    const cell = cellOf(head, 'recipes-zh/buffer');
    cell.recall.evidenceRecall = { n: cell.recall.evidenceRecall.n, mean: cell.recall.evidenceRecall.mean! - 0.2 };
    cell.recallByCategory.extraction!.evidenceRecall = {
      n: cell.recallByCategory.extraction!.evidenceRecall.n,
      mean: 0,
    };
    const conflict = cellOf(head, 'preference-corrections/buffer').recall.conflictExposure;
    Object.assign(conflict, { hits: conflict.n, value: 1 });
    const regressions = compareRuns(smallRun(), head).regressions.map(({ cell: id, check }) => [id, check.metric]);
    expect(regressions).toContainEqual(['recipes-zh/buffer', 'evidence recall']);
    expect(regressions).toContainEqual(['overall', 'evidence recall [extraction]']);
    expect(regressions).toContainEqual(['preference-corrections/buffer', 'conflict exposure']);
  });

  it('lets changes within the thresholds pass, and improvements too', () => {
    const head = smallRun();
    const cell = cellOf(head, 'recipes-zh/window(k=2)');
    cell.tokens.contextTotal = Math.round(cell.tokens.contextTotal * 1.05);
    cellOf(head, 'recipes-zh/buffer').tokens.contextTotal = 1;
    expect(hasRegression(compareRuns(smallRun(), head))).toBe(false);
    expect(hasRegression(compareRuns(smallRun(), head, { maxTokenIncrease: 0.01 }))).toBe(true);
  });

  it('calls a slowdown inside the base spread or under the floor noise, and a clear one a regression', () => {
    const base = smallRun();
    const head = smallRun();
    cellOf(base, 'recipes-zh/buffer').latency.saveMs = latency(4, 20);
    cellOf(head, 'recipes-zh/buffer').latency.saveMs = latency(12, 30);
    cellOf(base, 'recipes-zh/window(k=2)').latency.loadMs = latency(0.01, 0.02);
    cellOf(head, 'recipes-zh/window(k=2)').latency.loadMs = latency(0.5, 0.6);
    cellOf(base, 'recipes-zh/window(k=4)').latency.saveMs = latency(4, 5);
    cellOf(head, 'recipes-zh/window(k=4)').latency.saveMs = latency(12, 14);
    const comparison = compareRuns(base, head);
    expect(noiseChecks(comparison).map(({ cell, check }) => [cell, check.metric, check.note])).toEqual([
      ['recipes-zh/buffer', 'save p50', "within noise: head's p50 is inside base's p50..p95 band"],
      ['recipes-zh/window(k=2)', 'load p50', 'within noise: p50s differ by less than 1 ms'],
    ]);
    expect(comparison.regressions.map(({ cell, check }) => [cell, check.metric, check.change])).toEqual([
      ['recipes-zh/window(k=4)', 'save p50', '×3.00'],
    ]);
    expect(hasRegression(compareRuns(base, head, { latency: false }))).toBe(false);
    expect(hasRegression(compareRuns(base, head, { maxLatencyRatio: 4 }))).toBe(false);
  });

  it('fails a head that lost cells or holds new ones in error, naming each; --allow-missing lists them without failing', () => {
    const head = smallRun();
    head.cells = head.cells.filter((cell) => cell.setting !== 'window(k=4)');
    head.cells.push({
      ...structuredClone(cellOf(smallRun(), 'recipes-zh/buffer')),
      id: 'recipes-zh/vector',
      setting: 'vector',
      strategy: 'vector',
    });
    head.cells.push({
      ...structuredClone(cellOf(smallRun(), 'recipes-zh/buffer')),
      id: 'recipes-zh/hybrid',
      setting: 'hybrid',
      strategy: 'hybrid',
      status: 'error',
      error: 'boom',
    });
    const comparison = compareRuns(smallRun(), head);
    expect(comparison.added).toEqual(['recipes-zh/vector', 'recipes-zh/hybrid']);
    expect(comparison.removed).toEqual(['recipes-zh/window(k=4)', 'preference-corrections/window(k=4)']);
    expect(comparison.regressions.map(({ cell, check }) => [cell, check.metric])).toEqual([
      ['recipes-zh/window(k=4)', 'missing from head'],
      ['preference-corrections/window(k=4)', 'missing from head'],
      ['recipes-zh/hybrid', 'status'],
    ]);
    expect(renderComparison(comparison)).toMatch(
      /REGRESSION: 3 regressed metric\(s\) in 3 cell\(s\) \(4 cells compared, 2 missing, 2 new, 1 in error\)$/u,
    );
    const allowed = compareRuns(smallRun(), head, { allowMissing: true });
    expect(hasRegression(allowed)).toBe(false);
    expect(renderComparison(allowed)).toContain(
      'Missing (only in base) (allowed by --allow-missing): recipes-zh/window(k=4), preference-corrections/window(k=4)',
    );
  });

  it('fails a cell in error in both runs unless --allow-missing', () => {
    const base = smallRun();
    const head = smallRun();
    Object.assign(cellOf(base, 'recipes-zh/buffer'), { status: 'error', error: 'boom' });
    Object.assign(cellOf(head, 'recipes-zh/buffer'), { status: 'error', error: 'boom' });
    expect(compareRuns(base, head).regressions.map(({ cell, check }) => [cell, check.metric, check.note])).toEqual([
      ['recipes-zh/buffer', 'status', 'errored in both runs'],
    ]);
    expect(hasRegression(compareRuns(base, head, { allowMissing: true }))).toBe(false);
  });

  it('fails a new invariant violation and a new error, not one base already had', () => {
    const base = smallRun();
    const head = smallRun();
    const faults = (violations: number) => ({
      crashes: [],
      invariants: { '1': { held: violations === 0, checked: 3, violations, details: [] } },
    });
    Object.assign(cellOf(head, 'recipes-zh/buffer'), { durabilityOutcome: faults(1) });
    Object.assign(cellOf(base, 'recipes-zh/window(k=2)'), { durabilityOutcome: faults(2) });
    Object.assign(cellOf(head, 'recipes-zh/window(k=2)'), { durabilityOutcome: faults(2) });
    Object.assign(cellOf(head, 'preference-corrections/buffer'), { status: 'error', error: 'boom' });
    const comparison = compareRuns(base, head);
    expect(comparison.regressions.map(({ cell, check }) => [cell, check.metric])).toEqual([
      ['recipes-zh/buffer', 'invariant 1 acknowledged memories survive crashes'],
      ['preference-corrections/buffer', 'status'],
    ]);
  });

  it('refuses an empty head, a head with no cell in common and a run holding one id twice (nothing compared is never "OK")', () => {
    const empty = { ...smallRun(), cells: [] };
    expect(() => compareRuns(smallRun(), empty, {}, { base: 'base.json', head: 'head.json' })).toThrow(
      'head.json has no cells: nothing to compare with base.json (6 cells); was the run stopped before any cell finished?',
    );
    const disjoint = renameScenario(
      renameScenario(smallRun(), 'recipes-zh', 'other-a'),
      'preference-corrections',
      'other-b',
    );
    expect(() => compareRuns(smallRun(), disjoint)).toThrow(
      /^head \(6 cells, e\.g\. other-a\/buffer\) has no cell in common with base \(6 cells, e\.g\. recipes-zh\/buffer\): they ran different matrices/u,
    );
    const twice = smallRun();
    twice.cells.push(structuredClone(twice.cells[0]!));
    expect(() => compareRuns(twice, smallRun())).toThrow(
      'base holds two cells with id "recipes-zh/buffer": they cannot be matched',
    );
    for (const head of [empty, disjoint]) {
      const error = (() => {
        try {
          compareRuns(smallRun(), head);
        } catch (caught) {
          return caught;
        }
      })();
      expect((error as MembenchError).exitCode).toBe(2);
    }
  });

  it('compares latency only between runs timed on one machine, unless asked', () => {
    const base = smallRun();
    const head = smallRun();
    cellOf(head, 'recipes-zh/window(k=4)').latency.saveMs = {
      ...cellOf(base, 'recipes-zh/window(k=4)').latency.saveMs,
      p50: 1000,
      p95: 1000,
    };
    expect(compareRuns(base, head).thresholds.latency).toBe(true);
    expect(hasRegression(compareRuns(base, head))).toBe(true);
    const elsewhere = { ...head, header: { ...head.header, machine: 'another' } };
    const skipped = compareRuns(base, elsewhere);
    expect(skipped.thresholds.latency).toBe(false);
    expect(hasRegression(skipped)).toBe(false);
    expect(skipped.notes).toContain(
      `latency not compared: base and head were timed on different machines (${base.header.machine} → another); pass --latency to compare it anyway`,
    );
    const { machine: _machine, ...older } = base.header;
    expect(compareRuns({ ...base, header: older }, head).notes.at(-1)).toMatch(
      /^latency not compared: base does not record the machine it was timed on/u,
    );
    expect(hasRegression(compareRuns(base, elsewhere, { latency: true }))).toBe(true);
  });

  it('notes header differences that make numbers less comparable', () => {
    const head = smallRun();
    head.header.tokenizer.encoding = 'o200k_base';
    expect(compareRuns(smallRun(), head).notes).toEqual([
      'tokenizer differs (cl100k_base → o200k_base): token counts are not comparable',
    ]);
  });

  it('renders the comparison as Markdown for the GitHub step summary', () => {
    const head = smallRun();
    cellOf(head, 'recipes-zh/buffer').tokens.contextTotal *= 2;
    const markdown = renderComparisonMarkdown(compareRuns(smallRun(), head), {
      base: 'base.json',
      head: 'head/results.json',
    });
    expect(markdown).toMatch(/^## membench compare: REGRESSION/u);
    expect(markdown).toContain('| recipes-zh/buffer | context tokens |');
    expect(markdown).toContain('### Overall');
  });
});
