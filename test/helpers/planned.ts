/**
 * A run's plan with every cell's scenario at hand, as a test replays cells itself (runCell): the
 * plan's dataset questions are loaded from its shelf, then the shelf is closed (its temp dir
 * removed). `runner` is the module to plan with (the built one, for tests that fork agent processes).
 */
import * as Source from '../../harness/run/runner.js';
import type { CellPlan, RunOptions } from '../../harness/run/runner.js';
import type { Scenario } from '../../harness/scenarios/format.js';

type Runner = Pick<typeof Source, 'planRun' | 'loadedCell'>;

export async function plannedCells(
  options: RunOptions,
  runner: Runner = Source,
): Promise<
  Omit<Awaited<ReturnType<typeof Source.planRun>>, 'plans' | 'scenarios' | 'shelf'> & {
    plans: CellPlan[];
    scenarios: Scenario[];
  }
> {
  const { plans, scenarios, shelf, ...rest } = await runner.planRun(options);
  try {
    const cells = plans.map((plan) => runner.loadedCell(plan));
    return {
      ...rest,
      plans: cells,
      scenarios: scenarios.map((scenario) => cells.find((cell) => cell.scenario.name === scenario.name)!.scenario),
    };
  } finally {
    await shelf?.close();
  }
}
