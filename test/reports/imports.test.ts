/**
 * What reports say of a run's dataset imports (the header's `imports`) and of a `--protocol` that
 * scored no question; `merge` keeps both.
 */
import { describe, expect, it } from 'vitest';
import type { ImportSummary, RunResult } from '../../harness/results/schema.js';
import { renderConsoleSummary, renderHtml, renderMarkdown } from '../../reports/index.js';
import { firstDifference, mergeShards } from '../../reports/merge.js';
import { cellOf, smallRun } from './fixture.js';

const SKIPS: ImportSummary = {
  source: 'longmemeval:data/sample.json',
  unitsName: 'questions',
  units: 13,
  scenarios: 10,
  itemsName: 'questions',
  items: 13,
  repairedItems: 4,
  skippedItems: 3,
  repaired: [
    { code: 'answer-number', count: 1, examples: [{ where: 'b46e15ed', message: 'answer 9 is a number' }] },
    {
      code: 'turn-empty',
      count: 5,
      examples: [
        { where: 'd1', message: 'an assistant turn without content: dropped' },
        { where: 'd2', message: 'an assistant turn without content: dropped' },
        { where: 'd3', message: 'an assistant turn <without> content: dropped' },
      ],
    },
  ],
  skipped: [
    { code: 'question-type-unknown', count: 1, examples: [{ where: 'f9e8d7c6', message: 'question_type "x"' }] },
    { code: 'answer-missing', count: 1, examples: [{ where: 'a1b2c3d4', message: 'no answer' }] },
    { code: 'question-duplicate', count: 1, examples: [{ where: '7f3a91c2', message: 'used by an earlier question' }] },
  ],
};

const LOCOMO: ImportSummary = {
  source: 'locomo:locomo10.json',
  unitsName: 'conversations',
  units: 1,
  scenarios: 1,
  itemsName: 'QA items',
  items: 7,
  repairedItems: 0,
  skippedItems: 1,
  repaired: [],
  skipped: [{ code: 'question-missing', count: 1, examples: [{ where: 'c qa[5]', message: 'no question' }] }],
};

const LINE =
  'longmemeval:data/sample.json — 13 questions read, 10 imported; skipped 3 (question-type-unknown 1, answer-missing 1, question-duplicate 1); repaired 6 (answer-number 1, turn-empty 5)';

function imported(...imports: ImportSummary[]): RunResult {
  const result = smallRun();
  result.header = { ...result.header, imports };
  return result;
}

describe('imports in reports', () => {
  it('report.md has an Import section: a line per file, then the examples of each kind', () => {
    const markdown = renderMarkdown(imported(SKIPS, LOCOMO));
    const section = markdown.slice(markdown.indexOf('## Import'), markdown.indexOf('## Summary'));
    expect(section.split('\n').filter((line) => line.startsWith('-') || line.startsWith('  -'))).toEqual([
      `- ${LINE}`,
      '  - skipped question-type-unknown: f9e8d7c6: question_type "x"',
      '  - skipped answer-missing: a1b2c3d4: no answer',
      '  - skipped question-duplicate: 7f3a91c2: used by an earlier question',
      '  - repaired answer-number: b46e15ed: answer 9 is a number',
      '  - repaired turn-empty: d1: an assistant turn without content: dropped',
      '  - repaired turn-empty: d2: an assistant turn without content: dropped',
      // A tag-like word shows as text, not as a (hidden) HTML tag.
      '  - repaired turn-empty: d3: an assistant turn &lt;without> content: dropped',
      '  - repaired turn-empty: … and 2 more',
      '- locomo:locomo10.json — 1 conversation read, 1 scenario imported; 7 QA items read, 6 imported; skipped 1 (question-missing 1)',
      '  - skipped question-missing: c qa[5]: no question',
    ]);
  });

  it('report.html has the section, escaped, and the console one line per file', () => {
    const html = renderHtml(imported(SKIPS));
    const section = html.slice(
      html.indexOf('<section id="import">'),
      html.indexOf('</section>', html.indexOf('<section id="import">')),
    );
    expect(section).toContain(`<li>${LINE}<details><summary>examples</summary>`);
    expect(section).toContain('d3: an assistant turn &lt;without&gt; content: dropped');
    const console = renderConsoleSummary(imported(SKIPS), { width: 1000 });
    expect(console.split('\n').filter((line) => line.startsWith('import: '))).toEqual([`import: ${LINE}`]);
  });

  it('a run without imports has no section', () => {
    const result = smallRun();
    expect(renderMarkdown(result)).not.toContain('## Import');
    expect(renderHtml(result)).not.toContain('<section id="import">');
    expect(renderConsoleSummary(result)).not.toContain('import: ');
  });

  it('merge keeps the imports and the protocol of the shards, and refuses shards that differ in them', () => {
    const whole = imported(SKIPS);
    whole.header.protocol = 'longmemeval';
    const shard = (index: number): RunResult => ({
      ...whole,
      header: { ...whole.header, shard: { index, count: 2, planned: whole.cells.length, digest: 'd' } },
      cells: whole.cells.filter((_, position) => position % 2 === index - 1),
    });
    const merged = mergeShards([
      { result: shard(1), file: 'a/results.json' },
      { result: shard(2), file: 'b/results.json' },
    ]);
    expect(merged.header.imports).toEqual([SKIPS]);
    expect(merged.header.protocol).toBe('longmemeval');
    // Shards of runs that imported another file (or another version of it), or ran another protocol, are no shards of one run.
    const other = shard(2);
    other.header = { ...other.header, imports: [{ ...SKIPS, scenarios: SKIPS.scenarios - 1 }] };
    expect(() =>
      mergeShards([
        { result: shard(1), file: 'a/results.json' },
        { result: other, file: 'b/results.json' },
      ]),
    ).toThrow(
      `merge: b/results.json and a/results.json differ in dataset imports at [0].scenarios (${SKIPS.scenarios - 1} vs ${SKIPS.scenarios}): they are not shards of one run`,
    );
    const unscored = shard(2);
    unscored.header = { ...unscored.header, protocol: undefined };
    expect(() =>
      mergeShards([
        { result: shard(1), file: 'a/results.json' },
        { result: unscored, file: 'b/results.json' },
      ]),
    ).toThrow(/^merge: b\/results\.json and a\/results\.json differ in protocol \(absent vs "longmemeval"\)/u);
  });
});

describe('a --protocol that scored no question', () => {
  /** The fixture as a LongMemEval protocol run whose every question is an abstention question. */
  function abstentionOnly(): RunResult {
    const result = smallRun();
    result.header = { ...result.header, protocol: 'longmemeval' };
    for (const cell of result.cells) for (const probe of cellOf(result, cell.id).probes) probe.category = 'abstention';
    return result;
  }
  const NOTE =
    'no question was scored under the LongMemEval protocol: all 16 are abstention questions, which it leaves out';

  it('is said where its tables would be, in the console and report.md', () => {
    const result = abstentionOnly();
    expect(renderConsoleSummary(result, { width: 1000 })).toContain(`--protocol longmemeval: ${NOTE}`);
    expect(renderMarkdown(result)).toContain(`## Retrieval by the longmemeval protocol\n\n${NOTE}.\n`);
  });

  it('names strategies that rank nothing when the questions are not all abstention', () => {
    const result = smallRun();
    result.header = { ...result.header, protocol: 'locomo' };
    expect(renderMarkdown(result)).toContain(
      'no question was scored under the LoCoMo protocol: no strategy of the run ranked what it stored',
    );
  });

  it('is not said without --protocol', () => {
    const result = abstentionOnly();
    delete result.header.protocol;
    expect(renderMarkdown(result)).not.toContain('no question was scored');
    expect(renderConsoleSummary(result)).not.toContain('no question was scored');
  });
});

describe('firstDifference', () => {
  it('finds where two header values first differ, past what an 80-character cut shows', () => {
    const strategies = (k: number) => [
      { name: 'buffer', setting: 'buffer', options: {}, durability: 'sync', traits: ['a long list of traits'] },
      { name: 'window', setting: `window(k=${k})`, options: { k }, durability: 'sync' },
    ];
    expect(firstDifference(strategies(3), strategies(2))).toEqual({
      at: '[1].setting',
      a: 'window(k=3)',
      b: 'window(k=2)',
    });
    expect(firstDifference([1], [1, 2])).toEqual({ at: '[1]', a: undefined, b: 2 });
    expect(firstDifference({ a: 1 }, { a: 1 })).toBeUndefined();
    expect(firstDifference('x', 5)).toEqual({ at: '', a: 'x', b: 5 });
  });
});
