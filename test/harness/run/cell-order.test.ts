// The pool takes the costliest cells first (a crash costs as much as many plain steps), so a long
// cell never starts last while the other workers sit idle; results keep the plan's order. The run is
// the built one (test/helpers/built.ts): its worker and agent processes start from the bundles.
import { describe, expect, it } from 'vitest';
import type * as Spares from '../../../harness/process/spares.js';
import type * as Runner from '../../../harness/run/runner.js';
import type * as Builtins from '../../../harness/scenarios/builtins.js';
import { builtModule } from '../../helpers/built.js';

const { costliestFirst, estimatedCost, runBenchmark } = await builtModule<typeof Runner>('harness/run/runner.js');
const { killSpares } = await builtModule<typeof Spares>('harness/process/spares.js');
const { loadScenarios } = await builtModule<typeof Builtins>('harness/scenarios/builtins.js');

describe('cell order', () => {
  it('a crash scenario costs more than a longer plain one', async () => {
    const { scenarios } = await loadScenarios(['recipes-en', 'remember-then-crash']);
    const [plain, crashes] = scenarios;
    expect(plain!.steps.length).toBeGreaterThan(crashes!.steps.length);
    expect(estimatedCost(crashes!)).toBeGreaterThan(estimatedCost(plain!));
  });

  it('orders by cost, then position, counting each scenario once however many cells share it', async () => {
    const { scenarios } = await loadScenarios(['recipes-en', 'remember-then-crash']);
    let reads = 0;
    // Each scenario is read through a counting view of its steps: one read is one cost counted.
    const counted = scenarios.map((scenario) => {
      const view = { ...scenario };
      Object.defineProperty(view, 'steps', { get: () => (reads++, scenario.steps) });
      return view;
    });
    const plans = Array.from({ length: 40 }, (_, position) => ({ scenario: counted[position % 2]! }));
    const order = costliestFirst(
      plans.map((_, position) => position),
      plans,
    );
    expect(order).toEqual([
      ...plans.flatMap((_, position) => (position % 2 === 1 ? [position] : [])),
      ...plans.flatMap((_, position) => (position % 2 === 0 ? [position] : [])),
    ]);
    expect(reads).toBe(2);
  });

  it('the pool runs the costliest first; results.json keeps the plan order', async () => {
    const finished: string[] = [];
    try {
      const result = await runBenchmark({
        scenarios: ['recipes-en', 'remember-then-crash'],
        strategies: ['buffer'],
        workers: 1,
        workerProcesses: true,
        onProgress: (event) => void (event.type === 'cell' && finished.push(event.result.scenario)),
      });
      expect(finished).toEqual(['remember-then-crash', 'recipes-en']);
      expect(result.cells.map((cell) => cell.scenario)).toEqual(['recipes-en', 'remember-then-crash']);
    } finally {
      await killSpares();
    }
  });
});
