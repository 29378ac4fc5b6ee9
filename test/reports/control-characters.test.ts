/**
 * Names that come from the user's files and flags (a scenario's group, a scenario, a setting, a
 * probe's dataset label, a dataset's question id in the import record) keep their control characters
 * only as `\uXXXX` escapes in every rendering of a run: report.md, report.html, the console summary,
 * a comparison, the GitHub step summaries. An ESC would recolour or retitle the terminal that prints
 * them, a carriage return overwrite its line or end a Markdown one. Tab and line feed stay.
 */
import { describe, expect, it } from 'vitest';
import type { RunResult } from '../../harness/results/schema.js';
import { chartSpecs } from '../../reports/chart-specs.js';
import { compareRuns, renderComparison } from '../../reports/compare.js';
import { renderComparisonMarkdown, renderRunStepSummary } from '../../reports/github-summary.js';
import { renderConsoleSummary, renderHtml, renderMarkdown } from '../../reports/index.js';
import { cellOf, renameScenario, smallRun } from './fixture.js';

/** Every control character a terminal acts on: C0 but tab and line feed, DEL, C1. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;
/** A colour, a window title, a bell, a carriage return, a C1 CSI: what a hostile or broken file may hold. */
const HOSTILE = '\u001b[31mRED\u001b]0;title\u0007\r\u009b2J';
/** How each rendering shows it (Markdown writes the carriage return as a space: it ends a Markdown line). */
const SHOWN = '\\u001b[31mRED\\u001b]0;title\\u0007';

/** The small fixture with HOSTILE in a scenario's name, its group, a setting, a probe's label and an import's question id. */
function hostileRun(): RunResult {
  const result = renameScenario(smallRun(), 'recipes-zh', `zh${HOSTILE}`);
  for (const cell of result.cells) {
    if (cell.scenario.startsWith('zh')) cell.group = `grp${HOSTILE}`;
    if (cell.setting === 'window(k=4)') {
      cell.setting = `window(k=4,note=${HOSTILE})`;
      cell.id = `${cell.scenario}/${cell.setting}`;
    }
  }
  const labelled = cellOf(result, `zh${HOSTILE}/buffer`);
  labelled.recallByLabel = { [`lab${HOSTILE}`]: labelled.recall };
  labelled.probes[0]!.label = `lab${HOSTILE}`;
  result.header.imports = [
    {
      source: 'longmemeval:data.json',
      unitsName: 'questions',
      units: 2,
      scenarios: 1,
      itemsName: 'questions',
      items: 2,
      repairedItems: 0,
      skippedItems: 1,
      repaired: [],
      skipped: [{ code: 'question-type-unknown', count: 1, examples: [{ where: `q${HOSTILE}`, message: 'x' }] }],
    },
  ];
  return result;
}

describe('control characters in names from user input', () => {
  const everyName = [`grp${SHOWN}`, `lab${SHOWN}`, `q${SHOWN}`, `note=${SHOWN}`];
  it.each([
    ['report.md', renderMarkdown, everyName],
    ['report.html', renderHtml, everyName],
    // The imports on one line each, without examples (the import's own summary has them: test/cli/control-characters.test.ts).
    [
      'the console summary',
      (result: RunResult) => renderConsoleSummary(result, { detail: true }),
      [`grp${SHOWN}`, `lab${SHOWN}`, `note=${SHOWN}`],
    ],
    // It shows the leaderboards, not the groups' label tables nor the imports.
    ['the GitHub step summary', renderRunStepSummary, [`grp${SHOWN}`, `note=${SHOWN}`]],
  ])('are escapes in %s, never the characters themselves', (_, render, names) => {
    const text = render(hostileRun());
    expect(text).not.toMatch(CONTROL);
    for (const name of names) expect(text).toContain(name);
  });

  it('are escapes in a coloured console summary, whose only escape sequences are its own colours', () => {
    const text = renderConsoleSummary(hostileRun(), { color: true, detail: true });
    expect(text).toContain(`grp${SHOWN}`);
    // cli-table3's cyan head, grey border and their reset.
    expect(text.replace(/\u001b\[(?:36|90|39)m/gu, '')).not.toMatch(CONTROL);
  });

  it('are escapes in a comparison, on the console and in its GitHub step summary', () => {
    const base = hostileRun();
    const head = hostileRun();
    head.cells = head.cells.filter((cell) => !cell.setting.startsWith('window(k=4,'));
    const comparison = compareRuns(base, head, { allowMissing: true });
    for (const text of [renderComparison(comparison), renderComparisonMarkdown(comparison, { base: 'a', head: 'b' })]) {
      expect(text).not.toMatch(CONTROL);
      expect(text).toContain(`note=${SHOWN}`);
    }
  });

  it('are escapes in every text a chart draws (titles, subtitles, axis labels, legends, point names), a line break a space', () => {
    const result = hostileRun();
    for (const cell of result.cells) if (cell.setting === 'buffer') cell.setting = 'buffer(tag=two\nlines)';
    const texts = chartSpecs(result).flatMap((spec) => {
      const plugins = spec.config.options?.plugins;
      return [
        plugins?.title?.text,
        plugins?.subtitle?.text,
        ...(spec.config.data.labels ?? []),
        ...(spec.config.data.datasets as { label?: string; pointLabel?: string }[]).flatMap((set) => [
          set.label,
          set.pointLabel,
        ]),
      ]
        .flat()
        .filter((text) => text !== undefined)
        .map(String);
    });
    expect(texts.filter((text) => CONTROL.test(text) || text.includes('\n'))).toEqual([]);
    for (const name of [`grp${SHOWN}`, `lab${SHOWN}`, `note=${SHOWN}`, 'buffer(tag=two lines)'])
      expect(texts.some((text) => text.includes(name))).toBe(true);
  });

  it('keep tab and line feed', () => {
    const result = smallRun();
    for (const cell of result.cells) if (cell.scenario === 'recipes-zh') cell.group = 'tab\there';
    expect(renderConsoleSummary(result)).toContain('leaderboard — group tab\there');
  });
});
