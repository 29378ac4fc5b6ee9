/** The bench's "hostile text" section: its texts, and its figures from timed cells (counted, not timed). */
import { describe, expect, it } from 'vitest';
import {
  HOSTILE_CHARS,
  hostileFigures,
  hostileTexts,
  PLAIN,
  type HostileCell,
} from '../../../harness/bench/hostile-text.js';
import { renderBenchReport } from '../../../harness/bench/render.js';
import { benchHeader } from '../../helpers/bench-header.js';

/** A question's four cells: the first one `first` ms (wall and CPU alike), the others `rest` ms each. */
function question(id: string, kind: string, first: number, rest: number): HostileCell[] {
  return [first, rest, rest, rest].map((ms) => ({ question: id, kind, wallMs: ms, cpuMs: ms }));
}

describe('bench: hostile text', () => {
  it('gives each variant other texts of the same kinds and length, never splitting a surrogate pair', () => {
    const [first, second] = [hostileTexts(7, 0), hostileTexts(7, 1)];
    expect(Object.keys(second)).toEqual(Object.keys(first));
    for (const [kind, text] of Object.entries(second)) {
      expect(text, kind).toHaveLength(HOSTILE_CHARS);
      expect(text, kind).not.toBe(first[kind]);
      // A lone surrogate at either end would be a character the kind does not hold.
      expect(/\p{Cs}/u.test(text), kind).toBe(false);
    }
    expect(hostileTexts(7, 1)).toEqual(second);
  });

  it("judges a kind by the median of its questions' summed cells against the median plain question", () => {
    const cells = [
      // Chinese: one question met a collection (its first cell 400 ms); the median of three is 60 + 3 × 10 = 90.
      ...question('zh-0', 'chinese unspaced', 60, 10),
      ...question('zh-1', 'chinese unspaced', 400, 10),
      ...question('zh-2', 'chinese unspaced', 50, 10),
      ...question('en-0', 'english', 20, 10),
      ...question('p-0', PLAIN, 20, 10),
      ...question('p-1', PLAIN, 15, 10),
      ...question('p-2', PLAIN, 30, 10),
    ];
    const figures = hostileFigures(cells);
    expect(figures.rows.map((row) => row.kind)).toEqual(['chinese unspaced', 'english', PLAIN]);
    expect(figures.rows[0]).toMatchObject({ questions: 3, questionMs: 90, cellMs: 60 });
    expect(figures.medianQuestionMs).toBe(50);
    expect(figures.worst.kind).toBe('chinese unspaced');
    expect(figures.ratio).toBeCloseTo(90 / 50, 9);
    expect(figures.cpuRatio).toBeCloseTo(90 / 50, 9);
    // Per cell: the median of the plain cells (nine of 10 ms, three first cells) is 10 ms.
    expect(figures.medianCellMs).toBe(10);
    expect(figures.cellRatio).toBeCloseTo(60 / 10, 9);

    const text = renderBenchReport({ header: benchHeader({ sections: ['hostile'] }), hostile: figures, targets: [] });
    expect(text).toContain('Worst question 90.00 ms (chinese unspaced)');
    expect(text).toContain('1.80× (target ≤ 3×)');
    expect(text).toContain('Per cell: the slowest 6.00× the median cell');
    // The question counts are the rows' own: a hostile kind's, and the plain questions' (two here, not the kinds' three).
    expect(
      renderBenchReport({
        header: benchHeader({ sections: ['hostile'] }),
        hostile: hostileFigures(cells.filter((cell) => cell.question !== 'p-2')),
        targets: [],
      }),
    ).toContain("median over a kind's 3 questions (each with a text of its own; 2 without a hostile message)");
  });
});
