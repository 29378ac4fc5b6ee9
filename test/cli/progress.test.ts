/** Progress for long dataset runs: questions done of planned per strategy setting of a group, with an ETA from the setting's own pace. */
import { describe, expect, it } from 'vitest';
import { formatDuration, GroupProgress } from '../../harness/cli/common.js';

describe('GroupProgress', () => {
  it('counts a group’s questions per setting, including those finished before a resume, with an ETA', () => {
    const plan = [
      ...Array.from({ length: 4 }, (_, i) => ({ setting: 'buffer', group: 'longmemeval:s.json', done: i === 0 })),
      ...Array.from({ length: 4 }, () => ({ setting: 'bm25', group: 'longmemeval:s.json', done: false })),
      { setting: 'buffer', done: false },
    ];
    const progress = new GroupProgress(plan, 2);
    expect(progress.finished({ setting: 'buffer', group: 'longmemeval:s.json', durationMs: 10_000 })).toBe('longmemeval:s.json · buffer 2/4 questions, ETA 10s');
    expect(progress.finished({ setting: 'bm25', group: 'longmemeval:s.json', durationMs: 60_000 })).toBe('longmemeval:s.json · bm25 1/4 questions, ETA 1m30s');
    expect(progress.finished({ setting: 'buffer', durationMs: 5 })).toBeUndefined();
    progress.finished({ setting: 'buffer', group: 'longmemeval:s.json', durationMs: 10_000 });
    expect(progress.finished({ setting: 'buffer', group: 'longmemeval:s.json', durationMs: 10_000 })).toBe('longmemeval:s.json · buffer 4/4 questions, done');
    expect(formatDuration(75_000)).toBe('1m15s');
  });
});
