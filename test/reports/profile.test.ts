/** `--profile`'s sums: every phase of the schema, summed over the cells that timed theirs. */
import { describe, expect, it } from 'vitest';
import { cellPhasesSchema, emptyPhases } from '../../harness/results/schema.js';
import { phaseTotals, renderProfile } from '../../reports/profile.js';
import { smallRun } from './fixture.js';

describe('phaseTotals', () => {
  it('starts every phase of the schema at 0 and sums each over the cells that have phases', () => {
    const run = smallRun();
    const keys = Object.keys(cellPhasesSchema.shape);
    expect(Object.keys(emptyPhases()).sort()).toEqual([...keys].sort());
    const [first, second] = run.cells;
    first!.phases = { ...emptyPhases(), processes: 2, replayMs: 5, closeMs: 1 };
    second!.phases = { ...emptyPhases(), replayMs: 7, moduleLoadMs: 3 };
    for (const cell of run.cells.slice(2)) delete cell.phases;
    const totals = phaseTotals(run);
    for (const key of keys) expect(Number.isFinite(totals[key as keyof typeof totals]), key).toBe(true);
    expect(totals).toMatchObject({
      cells: 2,
      processCells: 1,
      processes: 2,
      replayMs: 12,
      moduleLoadMs: 3,
      closeMs: 1,
    });
    expect(renderProfile(run)).not.toContain('NaN');
  });

  it("gives a process start's figures per process started, not per open (a reused process started once)", () => {
    const run = smallRun();
    const [first] = run.cells;
    first!.phases = { ...emptyPhases(), processes: 4, snapshotStarts: 1, otherStarts: 1, processCpuMs: 300 };
    for (const cell of run.cells.slice(1)) delete cell.phases;
    const profile = renderProfile(run);
    expect(profile).toContain('150 ms per process'); // 300 ms over 2 starts, not over 4 opens
    expect(profile).toContain('2 processes started (1 from the startup snapshot)');
  });
});
