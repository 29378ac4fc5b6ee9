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
import { runCell } from '../../../harness/run/cell.js';
import { importDataset } from '../../../harness/scenarios/importers/index.js';
import { loadScenarioFile } from '../../../harness/scenarios/load.js';
import type { Scenario } from '../../../harness/scenarios/format.js';
import { loadStrategyDefinition } from '../../../strategies/loader.js';
import { offlineProviders } from '../../helpers/offline-providers.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');

async function replay(scenario: Scenario): Promise<{ status: string; batches: number; sessions: number }> {
  const definition = await loadStrategyDefinition('bm25');
  const options = definition.options.parse({}) as Record<string, unknown>;
  const before = { ...batchStats };
  const result = await runCell(
    {
      id: `${scenario.name}/bm25`,
      scenario,
      strategy: { name: 'bm25', source: 'bm25', options, durability: 'sync', setting: 'bm25' },
      definition,
      idempotencyKeys: true,
      trial: 0,
      seed: 1,
    },
    offlineProviders(),
  );
  return {
    status: result.status,
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
    const { scenarios } = await importDataset(
      `longmemeval:${path.join(ROOT, 'fixtures/datasets/longmemeval-sample.json')}`,
      { limit: 1 },
    );
    const scenario = scenarios[0]!;
    const boundaries = scenario.steps.filter((step) => step.kind === 'session').length;
    expect(boundaries).toBeGreaterThan(1);
    const replayed = await replay(scenario);
    expect(replayed.status).toBe('ok');
    expect(replayed.batches).toBeGreaterThan(0);
    expect(replayed.sessions).toBe(boundaries);
  });

  it('are not used by a scripted scenario with the same kind of boundaries', async () => {
    const file = path.join(dir, 'scripted.yaml');
    await writeFile(
      file,
      'name: scripted\nsteps:\n  - user: My locker code is 4711.\n    assistant: Noted.\n  - session: new\n  - user: hello\n    assistant: hi\n  - probe: What is my locker code?\n    expect: ["4711"]\n',
    );
    const replayed = await replay(await loadScenarioFile(file));
    expect(replayed).toEqual({ status: 'ok', batches: 0, sessions: 0 });
  });
});
