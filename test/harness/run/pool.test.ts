import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planRun, runBenchmark, RunInterrupted } from '../../../harness/run/runner.js';
import { ROOT } from '../../cli/helpers.js';
import { withoutTiming } from '../../../harness/results/schema.js';

const TINY_CRASH = `name: tiny-crash
steps:
  - id: r1
    remember: My locker code is 4711.
  - crash: after_ack
  - remember: My bike is blue.
  - probe: What is my locker code?
    expect: ["4711"]
    evidence: [r1]
`;
const EXITS_ON_SAVE = path.join(ROOT, 'fixtures/strategies/exits-on-save.ts');

describe('runBenchmark with worker processes', () => {
  it('gives the results of an in-process run, in plan order, also for cells that fork agent processes', { timeout: 180_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-pool-'));
    const crash = path.join(dir, 'tiny-crash.yaml');
    await writeFile(crash, TINY_CRASH);
    // The slow crash cell comes first: the quick ones finish before it, out of plan order.
    const options = { scenarios: [crash, 'recipes-en', 'recipes-zh'], strategies: ['buffer'], seed: 5 };
    const inline = await runBenchmark({ ...options, workers: 1 });
    const pooled = await runBenchmark({ ...options, workers: 3 });
    const { plans } = await planRun(options);
    expect(pooled.cells.map((cell) => cell.id)).toEqual(plans.map((plan) => plan.id));
    expect(pooled.cells.some((cell) => cell.faults?.crashes.some((crash) => crash.reached))).toBe(true);
    expect(withoutTiming(pooled)).toEqual(withoutTiming(inline));
  });

  it('records a cell whose worker dies as an error with its exit code, and runs the rest', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-pool-'));
    const scenario = path.join(dir, 'exit.yaml');
    await writeFile(scenario, 'name: exit\nsteps:\n  - user: please EXIT now\n    assistant: ok\n  - probe: what did I say?\n    expect: ["EXIT"]\n');
    const result = await runBenchmark({ scenarios: [scenario, 'recipes-en'], strategies: [EXITS_ON_SAVE, 'buffer'], workers: 2 });
    expect(result.cells.map((cell) => [cell.id, cell.status])).toEqual([
      ['exit/exits-on-save', 'error'],
      ['exit/buffer', 'ok'],
      ['recipes-en/exits-on-save', 'ok'],
      ['recipes-en/buffer', 'ok'],
    ]);
    expect(result.cells[0]!.error).toMatch(/pool worker running this cell exited unexpectedly \(exit code 3, signal null\)/u);
    expect(result.cells[3]!.recall.contextRecall.value).toBe(1);
  });

  it('stops when the signal fires and rejects with RunInterrupted', async () => {
    const controller = new AbortController();
    const run = runBenchmark({
      scenarios: ['recipes-en', 'recipes-zh'],
      strategies: ['buffer', 'window'],
      workers: 2,
      signal: controller.signal,
      onProgress: (event) => {
        if (event.type === 'cell') controller.abort();
      },
    });
    await expect(run).rejects.toBeInstanceOf(RunInterrupted);
  });
});

describe('--shard', () => {
  it('splits the plan by position, records the shard, and the shards together cover every cell once', async () => {
    const options = { scenarios: ['recipes-en', 'recipes-zh'], strategies: ['buffer', 'window'], params: ['window.k=2,4'] };
    const { plans } = await planRun(options);
    const shards = await Promise.all([1, 2, 3].map((index) => runBenchmark({ ...options, shard: { index, count: 3 } })));
    expect(shards.map((shard) => shard.cells.map((cell) => cell.id))).toEqual([1, 2, 3].map((index) => plans.filter((_, position) => position % 3 === index - 1).map((plan) => plan.id)));
    const headers = shards.map((shard) => (shard.header as { shard?: unknown }).shard);
    expect(headers[1]).toEqual({ index: 2, count: 3, planned: 6, digest: expect.stringMatching(/^[0-9a-f]{16}$/u) });
    expect(new Set(headers.map((header) => (header as { digest: string }).digest)).size).toBe(1);
  });
});
