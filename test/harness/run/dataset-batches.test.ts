/**
 * A replayed dataset question runs its history in durable batches (harness/run/cell.ts): each of
 * its session boundaries ends a session's commit, so a store commits once per replayed session.
 * A scripted scenario with the same boundaries is not batched: a commit per write, as sync promises.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchStats } from '../../../harness/core/durable-batch.js';
import { runCell, type RunOptions } from '../../../harness/run/runner.js';
import { offlineProviders } from '../../helpers/offline-providers.js';
import { plannedCells } from '../../helpers/planned.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

/** Plans a bm25 run as `membench run` does, runs its one cell in this process, and counts the batches it used. */
async function replay(
  options: RunOptions,
): Promise<{ status: string; boundaries: number; batches: number; sessions: number }> {
  const { plans } = await plannedCells({ ...options, strategies: ['bm25'] });
  expect(plans).toHaveLength(1);
  const plan = plans[0]!;
  const before = { ...batchStats };
  const result = await runCell(plan, offlineProviders());
  return {
    status: result.status,
    boundaries: plan.scenario.steps.filter((step) => step.kind === 'session').length,
    batches: batchStats.batches - before.batches,
    sessions: batchStats.sessions - before.sessions,
  };
}

describe('durable batches of a dataset replay', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-dataset-batches-'));
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  it('end a session commit at each replayed session boundary', async () => {
    const replayed = await replay({
      datasets: [`longmemeval:${path.join(ROOT, 'fixtures/datasets/longmemeval-sample.json')}`],
      datasetLimit: 1,
    });
    expect(replayed.status).toBe('ok');
    expect(replayed.boundaries).toBeGreaterThan(1);
    expect(replayed.batches).toBeGreaterThan(0);
    expect(replayed.sessions).toBe(replayed.boundaries);
  });

  it('are not used by a scripted scenario with the same kind of boundaries', async () => {
    const file = path.join(dir, 'scripted.yaml');
    await writeFile(
      file,
      'name: scripted\nsteps:\n  - user: My locker code is 4711.\n    assistant: Noted.\n  - session: new\n  - user: hello\n    assistant: hi\n  - probe: What is my locker code?\n    expect: ["4711"]\n',
    );
    const replayed = await replay({ scenarios: [file], priceDurability: [] });
    expect(replayed).toEqual({ status: 'ok', boundaries: 1, batches: 0, sessions: 0 });
  });
});
