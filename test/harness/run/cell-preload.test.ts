/**
 * What a process loads once for every cell after it (a strategy's `preload`: jieba's dictionary,
 * hnswlib) is loaded before the cell's clock starts: a cell's CPU and duration are its own work,
 * not a share of the process's setup that falls on whichever cell comes first.
 */
import { describe, expect, it } from 'vitest';
import { runCell } from '../../../harness/run/runner.js';
import type { PreloadHint } from '../../../strategies/types.js';
import { ok } from '../../helpers/cells.js';
import { offlineProviders } from '../../helpers/offline-providers.js';
import { plannedCells } from '../../helpers/planned.js';

/** Spends `ms` of this process's CPU (CPU time, not wall time: a loaded machine does not shorten it). */
function burnCpu(ms: number): void {
  const start = process.cpuUsage();
  for (;;) {
    const used = process.cpuUsage(start);
    if ((used.user + used.system) / 1000 >= ms) return;
  }
}

describe('a strategy preload', () => {
  it.each(['recipes-zh', 'recipes-en'])(
    'is called once per cell, with what %s holds, and its cost is outside the cell',
    async (scenario) => {
      const { plans } = await plannedCells({ strategies: ['bm25'], scenarios: [scenario] });
      const plan = plans[0]!;
      const hints: PreloadHint[] = [];
      const slowPreload = {
        ...plan.definition,
        preload: (hint: PreloadHint) => {
          hints.push(hint);
          plan.definition.preload?.(hint);
          burnCpu(1_500);
        },
      };
      const cell = ok(await runCell({ ...plan, definition: slowPreload }, offlineProviders()));
      expect(hints).toEqual([{ cjk: scenario === 'recipes-zh' }]);
      // The cell alone takes a fraction of what its preload burnt (~0.3 s of CPU cold, on a loaded machine); counted in, it would be over 1.5 s.
      expect(cell.cpuMs).toBeLessThan(1_500);
    },
  );

  it('that throws is no failure of its own: the strategy loads on first use, where a failure is the cell error', async () => {
    const { plans } = await plannedCells({ strategies: ['bm25'], scenarios: ['recipes-zh'] });
    const plan = plans[0]!;
    const failing = {
      ...plan.definition,
      preload: () => {
        throw new Error('the addon is missing');
      },
    };
    const cell = await runCell({ ...plan, definition: failing }, offlineProviders());
    expect(cell.status).toBe('ok');
  });
});
