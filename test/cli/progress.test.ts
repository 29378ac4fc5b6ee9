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

  it('counts scenarios, not questions, where a scenario is a conversation of many (LoCoMo, a generated suite)', () => {
    const plan = ['locomo:l.json', 'generated'].flatMap((group) =>
      Array.from({ length: 2 }, () => ({ setting: 'bm25', group, done: false })),
    );
    const progress = new GroupProgress(plan);
    expect(progress.finished({ setting: 'bm25', group: 'locomo:l.json', durationMs: 1000 })).toBe(
      'locomo:l.json · bm25 1/2 scenarios, ETA 1s',
    );
    expect(progress.finished({ setting: 'bm25', group: 'generated', durationMs: 1000 })).toBe(
      'generated · bm25 1/2 scenarios, ETA 1s',
    );
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

  it("names a grouped cell's setting once: the line starts with the cell's id, the group's count follows without it", () => {
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    const setting = 'summary-buffer(maxTokenLimit=1000)';
    try {
      const { onProgress } = progressReporter(false, false, 2);
      const units = [1, 2].map(() => ({ setting, group: 'generated', done: false }));
      onProgress({ type: 'start', cells: 2, finished: 0, units });
      const result = {
        id: `generated-zh/${setting}`,
        setting,
        group: 'generated',
        status: 'ok',
        durationMs: 2068,
        recall: { contextRecall: { value: 0.53 } },
      } as unknown as CellResult;
      onProgress({ type: 'cell', index: 0, cells: 2, result });
    } finally {
      write.mockRestore();
    }
    expect(lines[1]).toBe(`[1/2] generated-zh/${setting}  recall 0.53  2068 ms  (generated 1/2 scenarios, ETA 1s)\n`);
  });
});

describe('an import in progress', () => {
  const event = (read: number) => ({ type: 'import' as const, dataset: 'longmemeval:m.json', read, total: 200e6 });

  it('in a log: a line every 10 s and none before, then the cells as ever', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    try {
      const { onProgress } = progressReporter(false, false, 2);
      onProgress(event(1e6));
      vi.advanceTimersByTime(9_999);
      onProgress(event(2e6));
      expect(lines).toEqual([]);
      vi.advanceTimersByTime(1);
      onProgress(event(50e6));
      onProgress(event(51e6));
      vi.advanceTimersByTime(10_000);
      onProgress(event(200e6));
      onProgress({ type: 'start', cells: 4, finished: 0, units: [] });
      onProgress({ type: 'start', cells: 1, finished: 0, units: [] });
    } finally {
      write.mockRestore();
      vi.useRealTimers();
    }
    expect(lines).toEqual([
      'membench: importing longmemeval:m.json: 50 of 200 MB read (25 %)\n',
      'membench: importing longmemeval:m.json: 200 of 200 MB read (100 %)\n',
      'membench: running 4 cells\n',
      'membench: running 1 cell\n',
    ]);
  });

  it('on a terminal: one line redrawn in place, cleared when the cells start', () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const lines: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => lines.push(String(chunk)) > 0);
    try {
      const { onProgress, stop } = progressReporter(false, true, 2);
      vi.advanceTimersByTime(250);
      onProgress(event(20e6));
      onProgress(event(21e6));
      vi.advanceTimersByTime(250);
      onProgress(event(40e6));
      stop();
    } finally {
      write.mockRestore();
      vi.useRealTimers();
    }
    expect(lines).toEqual([
      '\rmembench: importing longmemeval:m.json: 20 of 200 MB read (10 %)\x1b[K',
      '\rmembench: importing longmemeval:m.json: 40 of 200 MB read (20 %)\x1b[K',
      '\r\x1b[K',
    ]);
  });
});
