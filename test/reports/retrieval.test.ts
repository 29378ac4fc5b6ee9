/** Retrieval figures in every report: console, report.md, report.html, results.json and compare (by category). */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseResults } from '../../harness/results/read.js';
import { runBenchmark } from '../../harness/run/runner.js';
import { compareRuns, renderComparison } from '../../reports/compare.js';
import { renderConsoleSummary, renderHtml, renderJson, renderMarkdown } from '../../reports/index.js';
import { allOk } from '../helpers/cells.js';
import type { OkRun } from './fixture.js';

let result: OkRun;
beforeAll(async () => {
  result = allOk(await runBenchmark({ scenarios: ['recipes-zh'], strategies: ['bm25', 'buffer'], retrievalK: [2, 4] }));
});

const bm25Cell = () => result.cells.find((cell) => cell.strategy === 'bm25')!;

describe('retrieval in reports', () => {
  it('is recorded for the strategy that retrieves, at the run k, and read back through the schema', () => {
    const cell = bm25Cell();
    expect(cell.retrieval!.turn.atK.map((at) => at.k)).toEqual([2, 4]);
    expect(cell.retrieval!.turn.n).toBe(7); // the seven answerable probes with evidence; p-oven (abstention) is left out
    expect(Object.keys(cell.retrievalByCategory!)).toEqual(['extraction', 'multi-hop', 'temporal', 'update']);
    expect(result.cells.find((item) => item.strategy === 'buffer')!.retrieval).toBeUndefined();
    expect(parseResults(renderJson(result), 'results.json')).toEqual(result);
  });

  it('shows in the console, report.md and report.html', () => {
    const at4 = bm25Cell().retrieval!.turn.atK[1]!;
    const figures = [at4.recallAny, at4.recallAll, at4.ndcg].map((value) => value.toFixed(2)).join('/');
    const console = renderConsoleSummary(result);
    expect(console).toMatch(new RegExp(`recipes-zh +│ bm25 +│ turn +│ 7 .*${figures.replace(/\./gu, '\\.')}`, 'u'));
    const markdown = renderMarkdown(result);
    expect(markdown).toContain('## Retrieval');
    expect(markdown).toContain(
      '| scenario | strategy | level | n | recall_any@2 | recall_all@2 | NDCG@2 | recall_any@4 | recall_all@4 | NDCG@4 |',
    );
    expect(markdown).toMatch(/\| recipes-zh \| bm25 \| extraction \| turn \| \d \|/u);
    expect(markdown).not.toMatch(/\| recipes-zh \| buffer \| turn \|/u);
    const html = renderHtml(result);
    expect(html).toContain('id="retrieval-table"');
    expect(html).toContain('id="retrieval-category-table"');
  });

  it('compare checks each figure by category and names a drop', () => {
    const head = structuredClone(result);
    const cell = head.cells.find((item) => item.strategy === 'bm25')!;
    cell.retrievalByCategory!.extraction!.turn.atK[1]!.recallAny -= 0.5;
    const comparison = compareRuns(result, head, { latency: false });
    expect(comparison.regressions.map(({ check }) => check.metric)).toEqual([
      'retrieval recall_any@4 (turn, extraction)',
    ]);
    const text = renderComparison(comparison);
    expect(text).toMatch(/Retrieval by level and probe category: \d+ figures compared, 1 changed/u);
    expect(renderComparison(compareRuns(result, result, { latency: false }))).toMatch(/figures compared, 0 changed/u);
  });
});
