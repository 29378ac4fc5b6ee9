/**
 * A cell's session is built in one place (harness/process/cell-session.ts) for a cell run in the
 * test process and for one run in agent processes (`isolate`): the same cell gives the same records
 * either way — the strategy reads the same injected clock, the same scripted turns measure their
 * context, and a replayed dataset's saved turns go in durable batches in the agent process too.
 * Both ways are the built ones (test/helpers/built.ts): agent processes start from the bundle, as a user's do.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type * as Models from '../../../harness/models/index.js';
import type * as Spares from '../../../harness/process/spares.js';
import type { CellResult } from '../../../harness/results/schema.js';
import type * as Runner from '../../../harness/run/runner.js';
import type { CellPlan } from '../../../harness/run/runner.js';
import { builtModule } from '../../helpers/built.js';
import { ok } from '../../helpers/cells.js';
import { offlineProviders } from '../../helpers/offline-providers.js';
import { plannedCells } from '../../helpers/planned.js';

const { killSpares } = await builtModule<typeof Spares>('harness/process/spares.js');
const runner = await builtModule<typeof Runner>('harness/run/runner.js');
const { runCell } = runner;
const { HashedEmbedder, OfflineModel } = await builtModule<typeof Models>('harness/models/index.js');

/** The offline providers of the built models. */
const builtProviders = () => offlineProviders({ HashedEmbedder, OfflineModel });

const ROOT = path.resolve(import.meta.dirname, '../../..');
/** Real agent processes on a loaded 2-core machine. */
const TIMEOUT = { timeout: 180_000 };

/** Runs the cell in this process and in agent processes, with the phases each announced. */
async function bothWays(
  plan: CellPlan,
): Promise<Record<'inline' | 'isolated', { result: CellResult; phases: string[] }>> {
  const run = async (isolate: boolean) => {
    const phases: string[] = [];
    const result = await runCell(plan, { ...builtProviders(), isolate, profile: true }, (phase) => phases.push(phase));
    return { result, phases };
  };
  return { inline: await run(false), isolated: await run(true) };
}

/** A cell's records without what a clock or a process measures. */
function records(cell: CellResult) {
  const result = ok(cell);
  return {
    status: result.status,
    turns: result.turns.map(({ loadMs: _load, saveMs: _save, ...turn }) => turn),
    probes: result.probes.map(({ loadMs: _load, ...probe }) => probe),
  };
}

describe('one cell session for both ways a cell runs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-cell-session-'));
  });
  afterAll(async () => {
    await killSpares();
    await rm(dir, { recursive: true, force: true });
  });

  it('gives the strategy the injected clock in an agent process too', TIMEOUT, async () => {
    const file = path.join(dir, 'clock.yaml');
    await writeFile(
      file,
      'name: clock\nsteps:\n  - user: hello\n    assistant: hi\n  - probe: what does the clock read?\n    expect: ["1970-01-01T00:00:00.000Z"]\n',
    );
    const { plans } = await plannedCells(
      {
        scenarios: [file],
        strategies: [path.join(ROOT, 'fixtures/strategies/clock-reader.mjs')],
      },
      runner,
    );
    const { inline, isolated } = await bothWays(plans[0]!);
    expect(ok(inline.result).probes[0]?.contextRecall).toBe(true);
    expect(records(isolated.result)).toEqual(records(inline.result));
  });

  it(
    'replays a dataset question in one agent process, in the same batches and with the same sampled contexts',
    TIMEOUT,
    async () => {
      const { plans } = await plannedCells(
        {
          datasets: [`longmemeval:${path.join(ROOT, 'fixtures/datasets/longmemeval-sample.json')}`],
          datasetLimit: 1,
          strategies: ['bm25'],
        },
        runner,
      );
      const plan = plans[0]!;
      const { inline, isolated } = await bothWays(plan);
      expect(inline.result.status).toBe('ok');
      expect(records(isolated.result)).toEqual(records(inline.result));
      const batches = inline.phases.filter((phase) => phase.includes('(saved turns)'));
      expect(batches.length).toBeGreaterThan(0);
      expect(isolated.phases.filter((phase) => phase.includes('(saved turns)'))).toEqual(
        batches.map((phase) => `${phase} in an agent process`),
      );
      // The session boundaries stay inside the batches: one process opens the cell, none is restarted.
      expect(plan.scenario.steps.filter((step) => step.kind === 'session').length).toBeGreaterThan(1);
      expect(isolated.result.phases?.processes).toBe(1);
    },
  );
});
