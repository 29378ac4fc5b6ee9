// The pool takes the costliest cells first (a crash costs as much as many plain steps), so a long
// cell never starts last while the other workers sit idle; results keep the plan's order.
import { describe, expect, it } from 'vitest';
import { loadScenarios } from '../../../harness/scenarios/builtins.js';
import { estimatedCost, runBenchmark } from '../../../harness/run/runner.js';
import { killSpares } from '../../../harness/process/spares.js';

describe('cell order', () => {
  it('a crash scenario costs more than a longer plain one', async () => {
    const { scenarios } = await loadScenarios(['recipes-en', 'remember-then-crash']);
    const [plain, crashes] = scenarios;
    expect(plain!.steps.length).toBeGreaterThan(crashes!.steps.length);
    expect(estimatedCost(crashes!)).toBeGreaterThan(estimatedCost(plain!));
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
