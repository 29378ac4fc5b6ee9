import { describe, expect, it } from 'vitest';
import { distribution } from '../../harness/core/metrics.js';
import type { OkCell } from '../../harness/results/schema.js';
import {
  compareRuns,
  DEFAULT_THRESHOLDS,
  hasRegression,
  noiseChecks,
  renderComparison,
  ungatedChecks,
} from '../../reports/compare.js';
import { renderComparisonMarkdown } from '../../reports/github-summary.js';
import { cellOf, failCell, renameScenario, smallRun } from './fixture.js';
import { fewestSamples } from '../../harness/results/ratio-interval.js';
import type { MembenchError } from '../../harness/core/errors.js';

/** Sets a cell's per-turn load or save times (and the distribution reports show), the times given by turn index. */
function setTimes(cell: OkCell, operation: 'load' | 'save', time: (turn: number) => number): void {
  cell.turns.forEach((turn, index) => {
    if (operation === 'save') turn.saveMs = time(index);
    else if (turn.loadMs !== null) turn.loadMs = time(index);
  });
  const samples = cell.turns.flatMap((turn) =>
    operation === 'save' ? [turn.saveMs] : turn.loadMs === null ? [] : [turn.loadMs],
  );
  cell.latency[`${operation}Ms`] = distribution(samples);
}

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
    // Its prose fits the terminal tables' width (the thresholds line alone ran past 120 columns).
    const prose = text.split('\n').filter((line) => !/[│┌└├─]/u.test(line));
    expect(Math.max(...prose.map((line) => [...line].length))).toBeLessThanOrEqual(120);
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
    failCell(head, 'recipes-zh/window(k=4)', 'boom');
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

  it("judges a slowdown from the per-turn times: a whole interval above ×2 regresses, with both runs' p50/p95 and the interval", () => {
    const base = smallRun();
    const head = smallRun();
    // Same spread in both runs (a 1..2 ms jitter), head three times slower in one cell, 1.5 times in another.
    setTimes(cellOf(base, 'recipes-zh/window(k=4)'), 'save', (turn) => 4 + (turn % 5) * 0.5);
    setTimes(cellOf(head, 'recipes-zh/window(k=4)'), 'save', (turn) => 3 * (4 + ((turn + 2) % 5) * 0.5));
    setTimes(cellOf(base, 'recipes-zh/buffer'), 'save', (turn) => 4 + (turn % 5) * 0.5);
    setTimes(cellOf(head, 'recipes-zh/buffer'), 'save', (turn) => 1.5 * (4 + (turn % 5) * 0.5));
    const comparison = compareRuns(base, head);
    expect(comparison.regressions.map(({ cell, check }) => [cell, check.metric])).toEqual([
      ['recipes-zh/window(k=4)', 'save time'],
    ]);
    const flagged = comparison.regressions[0]!.check;
    expect(flagged.base).toBe('p50 5.00 ms, p95 6.00 ms');
    expect(flagged.head).toBe('p50 15.00 ms, p95 18.00 ms');
    expect(flagged.change).toMatch(/^×3\.00 \[×(\d+\.\d+), ×(\d+\.\d+)\]$/u);
    const [, lo, hi] = /\[×(\S+), ×(\S+)\]/u.exec(flagged.change)!.map(Number);
    expect(lo).toBeGreaterThan(2);
    expect(lo).toBeLessThan(3);
    expect(hi).toBeGreaterThan(3);
    const check = (id: string) => comparison.cells.find((cell) => cell.id === id)!.checks;
    expect(check('recipes-zh/buffer').find((item) => item.metric === 'save time')!.verdict).toBe('ok');
    expect(renderComparison(comparison)).toContain('recipes-zh/window(k=4) save time ×3.00 [×');
    expect(hasRegression(compareRuns(base, head, { latency: false }))).toBe(false);
    expect(hasRegression(compareRuns(base, head, { maxLatencyRatio: 4 }))).toBe(false);
  });

  it('flags a slowdown only when its interval clears the limit: ×2.4 with overlapping spreads is noise', () => {
    const base = smallRun();
    const head = smallRun();
    // A wide spread (1..20 ms) in both runs: a median ratio over 2 whose interval still reaches below 2.
    setTimes(cellOf(base, 'recipes-zh/window(k=4)'), 'save', (turn) => 1 + ((turn * 7) % 19));
    setTimes(cellOf(head, 'recipes-zh/window(k=4)'), 'save', (turn) => 2.4 * (1 + ((turn * 11) % 19)));
    const comparison = compareRuns(base, head);
    expect(noiseChecks(comparison).map(({ cell }) => cell)).toEqual(['recipes-zh/window(k=4)']);
    const check = comparison.cells
      .find((cell) => cell.id === 'recipes-zh/window(k=4)')!
      .checks.find((item) => item.metric === 'save time')!;
    expect(check.verdict).toBe('noise');
    expect(check.note).toMatch(/^within noise: the interval reaches ×[01]\./u);
  });

  it("divides each run's times by its own calibration: a head timed while the machine was 2× slower is not 2× slower code", () => {
    const base = smallRun();
    const head = smallRun();
    base.header.calibration = { cpuMs: 0.5, commitMs: 2, samples: 30 };
    head.header.calibration = { cpuMs: 1, commitMs: 4, samples: 30 };
    setTimes(cellOf(base, 'recipes-zh/window(k=4)'), 'save', (turn) => 4 + (turn % 5) * 0.5);
    setTimes(cellOf(head, 'recipes-zh/window(k=4)'), 'save', (turn) => 3 * (4 + (turn % 5) * 0.5));
    const comparison = compareRuns(base, head);
    expect(hasRegression(comparison)).toBe(false);
    const check = comparison.cells
      .find((cell) => cell.id === 'recipes-zh/window(k=4)')!
      .checks.find((item) => item.metric === 'save time')!;
    expect(check.change).toMatch(/^×1\.50 /u);
    expect(check.note).toBe("normalised by each run's CPU floor (0.500 → 1.00 ms; raw ×3.00)");
    // The commit floor is not divided by (fsync times swing too far between runs): only the CPU floor counts.
    head.header.calibration = { cpuMs: 1, commitMs: 0.1, samples: 30 };
    setTimes(cellOf(base, 'recipes-zh/window(k=2)'), 'load', (turn) => 4 + (turn % 5) * 0.5);
    setTimes(cellOf(head, 'recipes-zh/window(k=2)'), 'load', (turn) => 5 * (4 + (turn % 5) * 0.5));
    const load = compareRuns(base, head)
      .cells.find((cell) => cell.id === 'recipes-zh/window(k=2)')!
      .checks.find((item) => item.metric === 'load time')!;
    expect([load.verdict, load.change.split(' ')[0]]).toEqual(['regression', '×2.50']);
    // A head floor faster than base's never makes a slowdown out of the same times.
    head.header.calibration = { cpuMs: 0.1, commitMs: 4, samples: 30 };
    setTimes(cellOf(head, 'recipes-zh/window(k=4)'), 'save', (turn) => 1.5 * (4 + (turn % 5) * 0.5));
    const faster = compareRuns(base, head)
      .cells.find((cell) => cell.id === 'recipes-zh/window(k=4)')!
      .checks.find((item) => item.metric === 'save time')!;
    expect([faster.verdict, faster.change.split(' ')[0]]).toEqual(['ok', '×1.50']);
    expect(faster.note).toBe(
      "not normalised: head's CPU floor was no slower (0.500 → 0.100 ms); a floor only excuses a slowdown",
    );
  });

  it("says beside a flagged save time that head's commit floor was much slower, without dividing by it", () => {
    const base = smallRun();
    const head = smallRun();
    base.header.calibration = { cpuMs: 1, commitMs: 2, samples: 30 };
    head.header.calibration = { cpuMs: 1, commitMs: 6, samples: 30 };
    setTimes(cellOf(base, 'recipes-zh/window(k=4)'), 'save', (turn) => 4 + (turn % 5) * 0.5);
    setTimes(cellOf(head, 'recipes-zh/window(k=4)'), 'save', (turn) => 3 * (4 + (turn % 5) * 0.5));
    const flagged = compareRuns(base, head).regressions.map(({ check }) => check);
    expect(flagged.map((check) => [check.metric, check.change.split(' ')[0]])).toEqual([['save time', '×3.00']]);
    expect(flagged[0]!.note).toContain(
      "; head's commit floor was ×3.00 base's (2.00 → 6.00 ms): a busier disk slows durable saves as much",
    );
    // A commit floor within ×1.5 of base's says nothing more.
    head.header.calibration = { cpuMs: 1, commitMs: 2.9, samples: 30 };
    expect(compareRuns(base, head).regressions[0]!.check.note).not.toContain('commit floor');
  });

  it('says "not enough samples to judge" for a cell with few turns instead of failing it, and calls sub-millisecond changes noise', () => {
    const base = smallRun();
    const head = smallRun();
    for (const run of [base, head]) {
      const cell = cellOf(run, 'recipes-zh/window(k=4)');
      cell.turns = cell.turns.slice(0, 4);
    }
    setTimes(cellOf(base, 'recipes-zh/window(k=4)'), 'save', () => 1);
    setTimes(cellOf(head, 'recipes-zh/window(k=4)'), 'save', () => 100);
    setTimes(cellOf(base, 'recipes-zh/window(k=2)'), 'load', (turn) => 0.01 + turn * 0.0001);
    setTimes(cellOf(head, 'recipes-zh/window(k=2)'), 'load', (turn) => 0.5 + turn * 0.0001);
    const comparison = compareRuns(base, head);
    expect(hasRegression(comparison)).toBe(false);
    const check = (id: string, metric: string) =>
      comparison.cells.find((cell) => cell.id === id)!.checks.find((item) => item.metric === metric)!;
    expect(check('recipes-zh/window(k=4)', 'save time')).toMatchObject({
      verdict: 'n/a',
      // Bonferroni over the comparison's 12 latency figures (6 cells, load and save).
      note: `not enough samples to judge (4 and 4 turns; ${fewestSamples(DEFAULT_THRESHOLDS.latencyFalseAlarm / 12)} a side are needed at this level)`,
    });
    expect(check('recipes-zh/window(k=2)', 'load time')).toMatchObject({
      verdict: 'noise',
      note: expect.stringMatching(/^within noise: p50s differ by less than 1 ms/u),
    });
  });

  it('holds recall, evidence and retrieval drops to the limit exactly: 0.05 passes, 0.06 fails', () => {
    // Rates edited without their probes (outcomes unchanged): the fixed limit decides alone.
    const dropped = (drop: number) => {
      const head = smallRun();
      const recall = cellOf(head, 'recipes-zh/buffer').recall;
      recall.contextRecall = { n: 100, hits: 100 - drop * 100, value: 1 - drop };
      recall.evidenceRecall = { n: recall.evidenceRecall.n, mean: recall.evidenceRecall.mean! - drop };
      const base = smallRun();
      cellOf(base, 'recipes-zh/buffer').recall.contextRecall = { n: 100, hits: 100, value: 1 };
      return compareRuns(base, head).regressions.map(({ cell, check }) => [cell, check.metric]);
    };
    expect(dropped(0.05)).toEqual([]);
    expect(dropped(0.06)).toEqual([
      ['recipes-zh/buffer', 'context recall'],
      ['recipes-zh/buffer', 'evidence recall'],
    ]);
  });

  it('gates a cell that ran concurrent sessions only on errors, invariants and losses, and says so', () => {
    const base = smallRun();
    const head = smallRun();
    for (const run of [base, head]) cellOf(run, 'recipes-zh/buffer').interleaved = true;
    const cell = cellOf(head, 'recipes-zh/buffer');
    cell.tokens.contextTotal *= 2;
    cell.recall.contextRecall = { n: cell.recall.contextRecall.n, hits: 0, value: 0 };
    const comparison = compareRuns(base, head);
    expect(hasRegression(comparison)).toBe(false);
    expect(comparison.cells.find((item) => item.id === 'recipes-zh/buffer')!.nondeterministic).toBe(true);
    expect(ungatedChecks(comparison).map(({ check }) => [check.metric, check.verdict])).toEqual([
      ['context recall', 'ungated'],
      ['context tokens', 'ungated'],
    ]);
    const text = renderComparison(comparison);
    expect(text).toContain('Not gated (nondeterministic cells: only invariants, losses and errors are gated):');
    expect(text).toMatch(/recipes-zh\/buffer context tokens \+100\.0% .*: not gated: a nondeterministic cell/u);
    const markdown = renderComparisonMarkdown(comparison, { base: 'a', head: 'b' });
    expect(markdown).toContain('### Not gated (nondeterministic cells');
    // A loss or an invariant violation base did not have still fails it.
    const lossy = structuredClone(head);
    Object.assign(cellOf(lossy, 'recipes-zh/buffer'), {
      durabilityOutcome: { crashes: [], recoveries: [], invariants: {}, counts: { lostUpdates: 1 } },
    });
    expect(compareRuns(base, lossy).regressions.map(({ cell: id, check }) => [id, check.metric])).toEqual([
      ['recipes-zh/buffer', 'durability losses'],
    ]);
  });

  it('fails a head that measured nothing where base measured something: 0 probes in a cell, 0 cells compared', () => {
    const head = smallRun();
    const cell = cellOf(head, 'recipes-zh/buffer');
    cell.probes = [];
    cell.recall.contextRecall = { n: 0, hits: 0, value: null };
    cell.recall.evidenceRecall = { n: 0, mean: null };
    const regressions = compareRuns(smallRun(), head).regressions;
    expect(
      regressions
        .filter(({ cell: id }) => id !== 'overall')
        .map(({ cell: id, check }) => [id, check.metric, check.note]),
    ).toEqual([
      ['recipes-zh/buffer', 'context recall', 'head measured nothing where base did (no probe scored)'],
      ['recipes-zh/buffer', 'evidence recall', 'head measured nothing where base did (no probe scored)'],
    ]);
    const failed = smallRun();
    for (const { id } of smallRun().cells) failCell(failed, id, 'boom');
    const nothing = compareRuns(failed, failed, { allowMissing: true });
    expect(nothing.regressions.map(({ cell: id, check }) => [id, check.metric])).toEqual([
      ['overall', 'cells measured in both runs'],
    ]);
    expect(renderComparison(nothing)).toMatch(/REGRESSION: 1 regressed metric/u);
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
    });
    failCell(head, 'recipes-zh/hybrid', 'boom');
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
    failCell(base, 'recipes-zh/buffer', 'boom');
    failCell(head, 'recipes-zh/buffer', 'boom');
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
    failCell(head, 'preference-corrections/buffer', 'boom');
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
    const one = { ...disjoint, cells: disjoint.cells.slice(0, 1) };
    expect(() => compareRuns({ ...smallRun(), cells: smallRun().cells.slice(0, 1) }, one)).toThrow(
      /^head \(1 cell, e\.g\. other-a\/buffer\) has no cell in common with base \(1 cell, e\.g\. recipes-zh\/buffer\)/u,
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
    setTimes(cellOf(head, 'recipes-zh/window(k=4)'), 'save', (turn) => 1000 + turn);
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
