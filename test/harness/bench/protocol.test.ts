/** The bench's "protocol" section: the protocol run of a small LongMemEval_S-shaped file against its floor, counted, not timed. */
import { describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { benchProtocol, cellSpread, threadSpread } from '../../../harness/bench/protocol.js';
import type { CellSchedule } from '../../../harness/run/cell-sched.js';
import type { CellResult } from '../../../harness/results/schema.js';
import { renderBenchReport } from '../../../harness/bench/render.js';
import { evaluateTargets } from '../../../harness/bench/targets.js';
import { benchHeader } from '../../helpers/bench-header.js';

describe('bench: protocol section', () => {
  it('runs four ranking-only cells a question, measures a floor, and judges the ratio only from 50 questions', async () => {
    const protocol = await benchProtocol({ questions: 2 });
    expect(protocol).toMatchObject({ questions: 2, cells: 8, rankingOnly: 8, errors: 0 });
    expect(protocol.floor.cpuMsPerQuestion).toBeGreaterThan(0);
    // Measured warm, as the floor is: a one-question run before it, whose cells are not among the run's.
    expect(protocol.run.warmUpCpuMs).toBeGreaterThan(0);
    // Through the pool: a question goes to a worker once for its four cells (at most once more per worker at the end).
    expect(protocol.pooled).toMatchObject({ workers: 2, cells: 8 });
    expect(protocol.pooled.scenariosSent).toBeGreaterThanOrEqual(2);
    expect(protocol.pooled.scenariosSent).toBeLessThanOrEqual(2 + 2);
    expect(protocol.ratio).toBeCloseTo(protocol.run.cpuMsPerQuestion / protocol.floor.cpuMsPerQuestion, 6);
    const [target] = evaluateTargets({ protocol });
    expect(target).toMatchObject({ id: 'protocol:floor', limit: 3, pass: null });
    expect(evaluateTargets({ protocol: { ...protocol, questions: 50, ratio: 2.5 } })[0]!.pass).toBe(true);
    expect(evaluateTargets({ protocol: { ...protocol, questions: 50, ratio: 3.5 } })[0]!.pass).toBe(false);
    const text = renderBenchReport({
      header: benchHeader({ sections: ['protocol'] }),
      protocol,
      targets: [target!],
    });
    expect(text).toContain('## Protocol run (2 LongMemEval_S-shaped questions)');
    expect(text).toContain('8 cells, 8 ranking only, 0 errors');
    expect(text).toContain('the run after a one-question run (not counted;');
    expect(text).toContain(`8 cells, ${protocol.pooled.scenariosSent} copies of a question sent to the workers`);
    // Each pooled cell's own thread time, where the kernel gives it (MEMBENCH_CELL_SCHED in the workers).
    if (existsSync('/proc/thread-self/schedstat')) {
      expect(protocol.pooled.thread!.medianMs).toBeGreaterThan(0);
      expect(protocol.pooled.thread!.waitedAbove5x).toBeLessThanOrEqual(protocol.pooled.wall.above5x);
      expect(text).toContain("each cell's own thread on a CPU: median");
    } else expect(protocol.pooled.thread).toBeNull();
    expect(process.env.MEMBENCH_CELL_SCHED).toBeUndefined();
  });

  it('counts the cells above 5x in wall time that were not above it in thread time: they waited for a CPU', () => {
    const line = (wallMs: number, threadMs: number): CellSchedule => ({
      id: 'c',
      wallMs,
      cpuMs: threadMs,
      threadMs,
      waitMs: wallMs - threadMs,
      gc: {},
      gcMs: 0,
    });
    // Medians: wall 10, thread 6. Above 5x in wall: 60 (thread 7, waited) and 80 (thread 70, slow itself).
    const lines = [line(10, 6), line(10, 6), line(9, 5), line(60, 7), line(80, 70)];
    expect(threadSpread(lines)).toEqual({ medianMs: 6, maxMs: 70, above5x: 1, waitedAbove5x: 1 });
    expect(threadSpread([])).toBeNull();
  });

  it('spreads cells by one timing: median, slowest, and cells strictly above 5x the median', () => {
    const cells = [4, 10, 10, 50, 51, 2].map((durationMs) => ({ durationMs }) as CellResult);
    expect(cellSpread(cells, 'durationMs')).toEqual({ medianMs: 10, maxMs: 51, above5x: 1 });
    expect(cellSpread(cells, 'cpuMs')).toEqual({ medianMs: 0, maxMs: 0, above5x: 0 });
  });
});
