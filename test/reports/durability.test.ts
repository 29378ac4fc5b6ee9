/** The durability tables: losses beside compressed-away memories, and errored cells never shown as invariants held. */
import { describe, expect, it } from 'vitest';
import { durabilityMatrix, invariantGrid, modePrices } from '../../harness/results/durability-matrix.js';
import { type CellResult, emptyDurabilityCounts, type RunResult } from '../../harness/results/schema.js';
import { renderConsoleSummary, renderHtml, renderMarkdown } from '../../reports/index.js';
import { modeRows, priceRows } from '../../reports/durability.js';
import { formatMs } from '../../reports/summary.js';
import { cellOf, durability, smallRun } from './fixture.js';

const COUNTS = emptyDurabilityCounts();

/** The small fixture with fault outcomes on two cells: one finished (invariant 1 checked and held, 4 never checked), one errored mid-run. */
function withFaults(): RunResult {
  const result = smallRun();
  const finished = cellOf(result, 'recipes-zh/window(k=2)');
  finished.durabilityOutcome = {
    ...(durability(1, { '1': [2, 0], '4': [0, 0] }) as NonNullable<CellResult['durabilityOutcome']>),
    counts: { ...COUNTS, compressedAway: 3 },
  };
  const errored = cellOf(result, 'preference-corrections/window(k=2)');
  Object.assign(errored, { status: 'error', error: 'step 4 failed in the agent process' });
  errored.durabilityOutcome = {
    ...(durability(1, { '1': [0, 0], '2': [1, 0] }) as NonNullable<CellResult['durabilityOutcome']>),
    counts: COUNTS,
  };
  return { ...result, durabilityMatrix: durabilityMatrix(result.cells), durabilityPrices: modePrices(result.cells) };
}

describe('durability tables', () => {
  it('show only the invariants a finished cell checked, and errored cells as not checked', () => {
    const result = withFaults();
    const [price] = result.durabilityPrices;
    expect(price).toMatchObject({ strategy: 'window', cells: 2, errored: 1, violations: { '1': 0 } });
    expect(priceRows(result)[0]!.at(-1)).toBe('1✓ 1 of 2 cell(s) errored: not checked');
    const grid = invariantGrid(result.cells)!;
    expect(grid.columns).toEqual(['1']);
    expect(grid.errored).toEqual([1]);
    expect(renderHtml(result)).toContain('errored cells stopped before their checks');
  });

  it('show compressed-away memories beside the losses in the console, report.md and report.html', () => {
    const result = withFaults();
    expect(result.durabilityPrices[0]!.losses.compressedAway).toBe(3);
    expect(renderConsoleSummary(result)).toMatch(/│ acks lost │ compressed away │/u);
    expect(renderConsoleSummary(result)).toMatch(/│ window +│ sync +│ on +│ [\d.]+ +│ [\d.]+ +│ 2 +│ 0 +│ 3 +│/u);
    expect(renderMarkdown(result)).toMatch(
      /\| acks lost \| compressed away \|[^\n]*\n[^\n]*\n\| window \| sync \| on \| [\d.]+ \| [\d.]+ \| 2 \| 0 \| 3 \|/u,
    );
    expect(renderHtml(result)).toMatch(/<th[^>]*>compressed away<\/th>/u);
  });

  it("price each mode at the median of its strategies' save times (the mean of the middle two for an even count)", () => {
    const result = withFaults();
    const [price] = result.durabilityPrices;
    const priced = (strategy: string, saveP50: number, saveP95: number) => ({ ...price!, strategy, saveP50, saveP95 });
    const prices = [priced('a', 10, 100), priced('b', 30, 300), priced('c', 50, 500), priced('d', 1000, 9000)];
    const [row] = modeRows({ ...result, durabilityPrices: prices });
    expect(row!.slice(0, 4)).toEqual(['sync', '4', formatMs(40), formatMs(400)]);
    expect(modeRows({ ...result, durabilityPrices: prices.slice(0, 3) })[0]!.slice(2, 4)).toEqual([
      formatMs(30),
      formatMs(300),
    ]);
  });
});
