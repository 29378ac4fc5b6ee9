/** Progress for long dataset runs: questions done of planned per strategy setting of a group, with an ETA from the setting's own pace. */
import { describe, expect, it, vi } from 'vitest';
import { formatDuration, GroupProgress, progressReporter } from '../../harness/cli/common.js';
import type { CellResult } from '../../harness/results/schema.js';

describe('GroupProgress', () => {
  it('counts a group’s questions per setting, including those finished before a resume, with an ETA', () => {
    const plan = [
      ...Array.from({ length: 4 }, (_, i) => ({ setting: 'buffer', group: 'longmemeval:s.json', done: i === 0 })),
      ...Array.from({ length: 4 }, () => ({ setting: 'bm25', group: 'longmemeval:s.json', done: false })),
      { setting: 'buffer', done: false },
    ];
    const progress = new GroupProgress(plan, 2);
    expect(progress.finished({ setting: 'buffer', group: 'longmemeval:s.json', durationMs: 10_000 })).toBe(
      'longmemeval:s.json · buffer 2/4 questions, ETA 10s',
    );
    expect(progress.finished({ setting: 'bm25', group: 'longmemeval:s.json', durationMs: 60_000 })).toBe(
      'longmemeval:s.json · bm25 1/4 questions, ETA 1m30s',
    );
    expect(progress.finished({ setting: 'buffer', durationMs: 5 })).toBeUndefined();
    progress.finished({ setting: 'buffer', group: 'longmemeval:s.json', durationMs: 10_000 });
    expect(progress.finished({ setting: 'buffer', group: 'longmemeval:s.json', durationMs: 10_000 })).toBe(
      'longmemeval:s.json · buffer 4/4 questions, done',
    );
    expect(formatDuration(75_000)).toBe('1m15s');
  });
});

describe('progressReporter without a terminal', () => {
  it('numbers each line by cells done (earlier attempts included), not by the cell’s plan position', () => {
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    try {
      const { onProgress } = progressReporter(false, false, 2);
      onProgress({ type: 'start', cells: 5, finished: 1, units: [] });
      const cell = (id: string) =>
        ({
          id,
          label: 'bm25',
          status: 'ok',
          durationMs: 10,
          recall: { contextRecall: { value: 1 } },
        }) as unknown as CellResult;
      // Cells run costliest first: the plan's last cell may finish first.
      onProgress({ type: 'cell', index: 4, cells: 5, result: cell('q5/bm25') });
      onProgress({ type: 'cell', index: 1, cells: 5, result: cell('q2/bm25') });
    } finally {
      write.mockRestore();
    }
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['membench:', '[2/5]', '[3/5]']);
  });
});
