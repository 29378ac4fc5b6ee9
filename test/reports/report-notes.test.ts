/** What every report shows beside the summary table: cache hits, refused steps, unique labels, the verdict as status. */
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../harness/results/schema.js';
import { renderConsoleSummary, renderHtml, renderJunit, renderMarkdown } from '../../reports/index.js';
import { renderRunStepSummary } from '../../reports/github-summary.js';
import { idempotencyNote } from '../../reports/durability.js';
import { cellOf, durability, smallRun } from './fixture.js';

/** The fixture with a live model's cache hits on one cell and two refused memories on another. */
function liveRun(): RunResult {
  const result = smallRun();
  result.header = { ...result.header, model: 'openai:gpt-4o-mini', offlineModel: false };
  cellOf(result, 'recipes-zh/buffer').usage.cachedCalls = 5;
  const refusing = cellOf(result, 'preference-corrections/window(k=2)');
  refusing.turns.push(
    {
      step: 90,
      turn: 30,
      kind: 'remember',
      contextTokens: null,
      loadMs: null,
      saveMs: 0,
      refused: 'memory "home" refused: 5000 bytes over the 4096-byte limit',
    },
    {
      step: 91,
      turn: 31,
      kind: 'remember',
      contextTokens: null,
      loadMs: null,
      saveMs: 0,
      refused: 'memory "x" refused: too large',
    },
  );
  refusing.refusedSteps = 2;
  return result;
}

describe('summary notes and columns', () => {
  it('show cache hits and refused steps in the console, report.md, report.html and the step summary', () => {
    const result = liveRun();
    const cached = 'cache hits: 5 model call(s) answered from the response cache';
    const refused =
      'refused: preference-corrections/window(k=2): the strategy refused 2 step(s), never acknowledged (first: memory "home" refused: 5000 bytes over the 4096-byte limit)';
    // The console cuts prose at spaces to its width: joined back, the notes are whole.
    for (const report of [
      renderConsoleSummary(result).replace(/\n/gu, ' '),
      renderMarkdown(result),
      renderRunStepSummary(result),
    ]) {
      expect(report).toContain(cached);
      expect(report).toContain(refused);
    }
    expect(renderMarkdown(result)).toMatch(/\| cache hits \| refused steps \| status \|/u);
    expect(renderMarkdown(result)).toMatch(/\| recipes-zh \| buffer \|[^\n]*\| 5 \| 0 \| ok \|/u);
    expect(renderMarkdown(result)).toMatch(/\| preference-corrections \| window\(k=2\) \|[^\n]*\| 0 \| 2 \| ok \|/u);
    const html = renderHtml(result);
    expect(html).toContain('>cache hits</th>');
    expect(html).toContain('>refused steps</th>');
    expect(html).toContain('the strategy refused 2 step(s)');
    expect(renderJunit(result)).toContain('cache hits 5; refused steps 0');
  });

  it('leave both out of an offline run that had neither', () => {
    const markdown = renderMarkdown(smallRun());
    expect(markdown).not.toContain('cache hits');
    expect(markdown).not.toContain('refused');
  });
});

describe('cells of one scenario and label', () => {
  it('get unique junit testcase names and labels when one ran without idempotency keys', () => {
    const result = smallRun();
    const twin = structuredClone(cellOf(result, 'recipes-zh/buffer'));
    result.cells.splice(1, 0, { ...twin, id: 'recipes-zh/buffer/no-keys' });
    const names = [...renderJunit(result).matchAll(/<testcase name="([^"]+)" classname="recipes-zh"/gu)].map(
      (match) => match[1],
    );
    expect(names).toEqual(['buffer', 'buffer no-keys', 'window(k=2)', 'window(k=4)']);
    expect(renderRunStepSummary(result)).toContain('| recipes-zh | buffer no-keys |');
  });
});

describe('the idempotency keys note', () => {
  it('names the strategies that ran without keys, or says every strategy did', () => {
    const result = smallRun();
    const withFaults = (id: string, keys: boolean) =>
      Object.assign(cellOf(result, id), {
        durabilityOutcome: { ...(durability(1, { '3': [1, 0] }) as object), idempotencyKeys: keys },
      });
    expect(idempotencyNote(result)).toBeUndefined();
    withFaults('recipes-zh/buffer', true);
    withFaults('recipes-zh/window(k=2)', true);
    result.cells.push({
      ...structuredClone(cellOf(result, 'recipes-zh/buffer')),
      id: 'recipes-zh/buffer/no-keys',
      durabilityOutcome: { ...(durability(1, { '3': [1, 1] }) as object), idempotencyKeys: false } as never,
    });
    expect(idempotencyNote(result)).toMatch(
      /^keys: the crash cells with side effects ran without idempotency keys \(off\) for buffer only, with keys for all 2 strategies: .*--idempotency both/u,
    );
    result.cells.push({
      ...structuredClone(cellOf(result, 'recipes-zh/window(k=2)')),
      id: 'recipes-zh/window(k=2)/no-keys',
      durabilityOutcome: { ...(durability(1, { '3': [1, 1] }) as object), idempotencyKeys: false } as never,
    });
    expect(idempotencyNote(result)).toMatch(/^keys: every strategy ran/u);
  });
});

describe('the GitHub step summary', () => {
  it('says "failed" for a finished cell that fails its verdict, as junit.xml and the exit code do', () => {
    const markdown = renderRunStepSummary(smallRun(), { recallThreshold: 0.5 });
    expect(markdown).toMatch(/\| recipes-zh \| window\(k=2\) \|[^\n]*\| failed \|/u);
    expect(markdown).toMatch(/\| recipes-zh \| buffer \|[^\n]*\| ok \|/u);
    expect(markdown).toMatch(/- `recipes-zh\/window\(k=2\)`: context recall/u);
  });
});

describe('answers cut at the size bound', () => {
  it('are counted in the console, report.md, report.html and the step summary; none, no line', () => {
    const run = smallRun();
    expect(renderMarkdown(run)).not.toContain('truncated:');
    cellOf(run, 'recipes-zh/buffer').usage.truncatedAnswers = 2;
    cellOf(run, 'recipes-zh/window(k=2)').usage.truncatedAnswers = 1;
    const line = 'truncated: 3 model answer(s) longer than 100000 characters were cut there';
    for (const text of [
      renderConsoleSummary(run, { color: false }),
      renderMarkdown(run),
      renderHtml(run),
      renderRunStepSummary(run),
    ])
      expect(text).toContain(line);
  });
});
