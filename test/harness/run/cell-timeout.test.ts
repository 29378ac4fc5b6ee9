/** What a cell over its limit is told, by phase, and which phases run under the loading limit. */
import { describe, expect, it } from 'vitest';
import { LOADING, loadLimitMs, timeoutMessage, UNTIMED_PHASES, WARMING } from '../../../harness/run/cell-timeout.js';

describe('cell time limits', () => {
  it("names a worker's warm-up as the suspect when a fresh worker hangs before its first cell", () => {
    expect(timeoutMessage(60_000, WARMING)).toBe(
      `timed out after 60 s in ${WARMING}: the cell was stopped (a strategy that never finishes one of the worker's warm-up cells?); raise --cell-timeout if it needs longer`,
    );
    expect(timeoutMessage(60_000, LOADING)).toContain('a strategy module that is slow to load');
  });

  it('runs loading and warming up under the loading limit (at least a minute), and nothing else', () => {
    expect([...UNTIMED_PHASES].sort()).toEqual([LOADING, WARMING].sort());
    expect(UNTIMED_PHASES.has('open')).toBe(false);
    expect(loadLimitMs(2_000)).toBe(60_000);
    expect(loadLimitMs(90_000)).toBe(90_000);
  });
});
