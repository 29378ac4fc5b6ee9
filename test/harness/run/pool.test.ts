/**
 * The pool of worker processes, run as built (test/helpers/built.ts): its workers start from the
 * bundled pool entry and their agent processes from the agent bundle, as a user's do.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type * as Cells from '../../../harness/results/cells.js';
import type * as CellTimeout from '../../../harness/run/cell-timeout.js';
import type * as Pool from '../../../harness/run/pool.js';
import type * as PoolWorkers from '../../../harness/run/pool-workers.js';
import type * as Runner from '../../../harness/run/runner.js';
import type * as TempDirs from '../../../harness/run/temp-dirs.js';
import type { Scenario } from '../../../harness/scenarios/format.js';
import { ROOT } from '../../cli/helpers.js';
import { builtModule } from '../../helpers/built.js';
import { heapAfterGc } from '../../helpers/heap.js';
import { ok } from '../../helpers/cells.js';
import { withoutTiming } from '../../helpers/same-seed.js';

const { planRun, runBenchmark, RunInterrupted } = await builtModule<typeof Runner>('harness/run/runner.js');
const { loadLimitMs, timeoutMessage } = await builtModule<typeof CellTimeout>('harness/run/cell-timeout.js');
const { errorCells } = await builtModule<typeof Cells>('harness/results/cells.js');
const { WARM_UP_CELLS, nextTask, poolStats, warmUpTasks } = await builtModule<typeof Pool>('harness/run/pool.js');
const { prestartPoolWorker, prestartStats, releasePrestarted } =
  await builtModule<typeof PoolWorkers>('harness/run/pool-workers.js');
const { cellDirPrefix } = await builtModule<typeof TempDirs>('harness/run/temp-dirs.js');

/** The temp dirs of the scenario files written, removed after the tests. */
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

async function scenarioFile(name: string, yaml: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-pool-'));
  made.push(dir);
  const file = path.join(dir, name);
  await writeFile(file, yaml);
  return file;
}

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
const EXITS_ON_SAVE = path.join(ROOT, 'fixtures/strategies/exits-on-save.mjs');
const HANGS = path.join(ROOT, 'fixtures/strategies/hangs.mjs');
const SLOW_TO_LOAD = path.join(ROOT, 'fixtures/strategies/slow-to-load.mjs');
const LOGS_OPENS = path.join(ROOT, 'fixtures/strategies/logs-opens.mjs');

const TINY = `name: tiny
steps:
  - id: u1
    user: My locker code is 4711.
    assistant: Noted.
  - probe: What is my locker code?
    expect: ["4711"]
    evidence: [u1]
`;

describe('runBenchmark with worker processes', () => {
  it('gives the results of an in-process run, in plan order, also for cells that fork agent processes', {
    timeout: 180_000,
  }, async () => {
    const crash = await scenarioFile('tiny-crash.yaml', TINY_CRASH);
    // The slow crash cell comes first: the quick ones finish before it, out of plan order.
    const options = { scenarios: [crash, 'recipes-en', 'recipes-zh'], strategies: ['buffer'], seed: 5 };
    const inline = await runBenchmark({ ...options, workers: 1 });
    const pooled = await runBenchmark({ ...options, workers: 3 });
    const { plans } = await planRun(options);
    expect(pooled.cells.map((cell) => cell.id)).toEqual(plans.map((plan) => plan.id));
    expect(pooled.cells.some((cell) => cell.durabilityOutcome?.crashes.some((crash) => crash.reached))).toBe(true);
    expect(withoutTiming(pooled)).toEqual(withoutTiming(inline));
  });

  it('takes the worker forked ahead of the run (membench run forks one as it starts), also one that said it was ready before the pool listened; the same results', {
    timeout: 60_000,
  }, async () => {
    const options = { scenarios: ['recipes-en'], strategies: ['buffer', 'window'], seed: 3 };
    const inline = await runBenchmark({ ...options, workers: 1 });
    try {
      const ahead = prestartPoolWorker();
      await new Promise<void>((resolve) => ahead.onMessage((message) => message.type === 'ready' && resolve()));
      const taken = prestartStats.taken;
      // One worker: the one ahead runs every cell (a pool that never gave it one would not finish).
      const pooled = await runBenchmark({ ...options, workers: 1, workerProcesses: true });
      expect(prestartStats.taken - taken).toBe(1);
      expect(withoutTiming(pooled)).toEqual(withoutTiming(inline));
      // A pool worker, disconnected at the end of the run: not the kill of one left over.
      expect(await ahead.exited).toEqual({ exited: true, code: 0, signal: null });
    } finally {
      releasePrestarted();
    }
  });

  it('kills a worker forked ahead under another environment (it would run the cells under it) and one no pool took', {
    timeout: 180_000,
  }, async () => {
    const options = { scenarios: ['recipes-en'], strategies: ['buffer'], seed: 3 };
    const inline = await runBenchmark({ ...options, workers: 1 });
    const stale = prestartPoolWorker();
    process.env.MEMBENCH_TEST_PRESTART = 'changed';
    try {
      const pooled = await runBenchmark({ ...options, workers: 1, workerProcesses: true });
      expect(withoutTiming(pooled)).toEqual(withoutTiming(inline));
    } finally {
      delete process.env.MEMBENCH_TEST_PRESTART;
      releasePrestarted();
    }
    expect((await stale.exited).signal).toBe('SIGKILL');
    const unused = prestartPoolWorker();
    const replaced = prestartPoolWorker(); // a second one ahead replaces the first
    expect((await unused.exited).signal).toBe('SIGKILL');
    releasePrestarted();
    expect((await replaced.exited).signal).toBe('SIGKILL');
  });

  it('records a cell whose worker dies as an error with its exit code, and runs the rest', async () => {
    const scenario = await scenarioFile(
      'exit.yaml',
      'name: exit\nsteps:\n  - user: please EXIT now\n    assistant: ok\n  - probe: what did I say?\n    expect: ["EXIT"]\n',
    );
    const result = await runBenchmark({
      scenarios: [scenario, 'recipes-en'],
      strategies: [EXITS_ON_SAVE, 'buffer'],
      workers: 2,
    });
    expect(result.cells.map((cell) => [cell.id, cell.status])).toEqual([
      ['exit/exits-on-save', 'error'],
      ['exit/buffer', 'ok'],
      ['recipes-en/exits-on-save', 'ok'],
      ['recipes-en/buffer', 'ok'],
    ]);
    const [died] = errorCells(result.cells);
    expect(died!.error).toMatch(
      /pool worker running this cell exited unexpectedly in step 0 \(user\) \(exit code 3, signal null\): a strategy that calls process.exit/u,
    );
    expect(died!.phase).toBe('step 0 (user)');
    expect(ok(result.cells[3]).recall.contextRecall.value).toBe(1);
  });

  it('records a cell over its time limit as an error naming the phase it hung in, in a worker or in this process, and runs the rest', {
    timeout: 120_000,
  }, async () => {
    const scenario = await scenarioFile(
      'tiny.yaml',
      'name: tiny\nsteps:\n  - user: I live in Lisbon.\n    assistant: Noted.\n  - probe: Where do I live?\n    expect: [Lisbon]\n',
    );
    const phases = { open: 'open', save: 'step 0 (user)', close: 'close' } as const;
    const runs = [
      { workers: 2, hangs: ['open', 'close'] as const },
      { workers: 1, workerProcesses: true, hangs: ['save'] as const },
      { workers: 1, hangs: ['open'] as const },
    ];
    // The three runs side by side: their cells wait out their time limits at the same time, not one after another.
    const results = await Promise.all(
      runs.map(({ hangs, ...run }) =>
        // buffer first: its worker is free for a hanging cell, so no worker has to be started again.
        runBenchmark({
          scenarios: [scenario],
          strategies: ['buffer', HANGS],
          params: [`hangs.in=${hangs.join(',')}`],
          cellTimeoutMs: 2000,
          ...run,
        }),
      ),
    );
    for (const [at, { hangs }] of runs.entries()) {
      const result = results[at]!;
      expect(result.cells.map((cell) => [cell.status, cell.status === 'error' ? cell.phase : undefined])).toEqual([
        ['ok', undefined],
        ...hangs.map((where) => ['error', phases[where]]),
      ]);
      for (const [index, where] of hangs.entries())
        expect(errorCells(result.cells)[index]!.error).toMatch(
          new RegExp(`^timed out after 2 s in ${phases[where].replace(/[()]/gu, '\\$&')}: the cell was stopped `, 'u'),
        );
    }
    expect(timeoutMessage(2000, 'open')).toBe(
      'timed out after 2 s in open: the cell was stopped (a strategy that never finishes open()?); raise --cell-timeout if it needs longer',
    );
  });

  it("starts a cell's time limit once its strategy module is loaded (loading has its own limit of at least a minute)", {
    timeout: 120_000,
  }, async () => {
    // The module takes 2.5 s to import, longer than the cell's 2 s: the cell is still on time.
    const result = await runBenchmark({
      scenarios: ['recipes-en'],
      strategies: [SLOW_TO_LOAD],
      cellTimeoutMs: 2000,
      workers: 1,
      workerProcesses: true,
    });
    expect(result.cells.map((cell) => [cell.status, cell.status === 'error' ? cell.error : undefined])).toEqual([
      ['ok', undefined],
    ]);
    expect(loadLimitMs(2000)).toBe(60_000);
    expect(loadLimitMs(90_000)).toBe(90_000);
  });

  it('warms a fresh worker up on cells spread over the run before its first cell, and the results stay the same', {
    timeout: 180_000,
  }, async () => {
    const scenario = await scenarioFile('tiny.yaml', TINY);
    const log = path.join(path.dirname(scenario), 'opens.log');
    // One worker and more than ten times the warm-up's cells behind its first and its second cell: only the first is warmed up.
    const options = { scenarios: [scenario], strategies: [LOGS_OPENS], trials: WARM_UP_CELLS * 10 + 10, seed: 5 };
    process.env.MEMBENCH_TEST_OPEN_LOG = log;
    let pooled: Awaited<ReturnType<typeof runBenchmark>>;
    try {
      pooled = await runBenchmark({ ...options, workers: 1, workerProcesses: true });
    } finally {
      delete process.env.MEMBENCH_TEST_OPEN_LOG;
    }
    const { plans } = await planRun(options);
    const positionOf = (dir: string): number =>
      plans.findIndex((plan) => dir.split(path.sep).some((part) => part.startsWith(cellDirPrefix(plan.id))));
    const lines = (await readFile(log, 'utf8')).trim().split('\n');
    const opened = lines.map((line) => positionOf(line.split(' ').slice(2).join(' ')));
    // The worker may collect between cells (--expose-gc).
    expect(new Set(lines.map((line) => line.split(' ')[1]))).toEqual(new Set(['function']));
    // The warm-up replays 8 cells spread over the 89 queued behind the first, then every cell runs once, in order.
    const spread = Array.from({ length: WARM_UP_CELLS }, (_, slot) => 1 + Math.floor(((slot + 0.5) * 89) / 8));
    expect(opened).toEqual([...spread, ...plans.map((_, position) => position)]);
    expect(withoutTiming(pooled)).toEqual(withoutTiming(await runBenchmark(options)));
    expect(pooled.cells.every((cell) => cell.status === 'ok' && cell.cpuMs !== undefined && cell.cpuMs > 0)).toBe(true);
  });

  it('sends a scenario to a worker once for the cells it runs of it, not once per cell; results as in one process', {
    timeout: 180_000,
  }, async () => {
    const options = {
      scenarios: ['recipes-en', 'recipes-zh', 'preference-corrections'],
      strategies: ['buffer', 'window', 'bm25', 'summary'],
      seed: 7,
    };
    const before = poolStats.scenariosSent;
    const pooled = await runBenchmark({ ...options, workers: 2 });
    const sent = poolStats.scenariosSent - before;
    // 12 cells of 3 scenarios: each worker is sent a scenario when it starts one, at most once more at the end.
    expect(pooled.cells).toHaveLength(12);
    expect(sent).toBeLessThanOrEqual(3 + 2);
    expect(withoutTiming(pooled)).toEqual(withoutTiming(await runBenchmark({ ...options, workers: 1 })));
  });

  it('a worker takes a cell of the scenario it holds, else one of a scenario no other worker holds, else the first', () => {
    const [a, b, c] = [{ name: 'a' }, { name: 'b' }, { name: 'c' }] as unknown as [Scenario, Scenario, Scenario];
    const pending = [a, a, b, c, b].map((scenario, index) => ({ index, task: { scenario } as never }));
    expect(nextTask(pending, b, new Set([a]))).toBe(2);
    expect(nextTask(pending, undefined, new Set([a]))).toBe(2);
    expect(nextTask(pending, c, new Set())).toBe(3);
    expect(nextTask(pending, undefined, new Set([a, b, c]))).toBe(0);
    expect(nextTask([], a, new Set())).toBe(-1);
  });

  it('warms up only runs of ten times its cells per worker, and never with a live model or embedder', () => {
    const offline = { modelProvider: 'offline', embedderProvider: 'hashed' };
    const pending = (count: number) =>
      Array.from({ length: count }, (_, index) => ({ index, task: { id: `cell ${index}` } as never }));
    expect(warmUpTasks(pending(WARM_UP_CELLS * 10 * 2 - 1), 2, offline)).toEqual([]);
    expect(warmUpTasks(pending(WARM_UP_CELLS * 10 * 2), 2, offline).map((task) => (task as { id: string }).id)).toEqual(
      [10, 30, 50, 70, 90, 110, 130, 150].map((index) => `cell ${index}`),
    );
    expect(warmUpTasks(pending(1000), 2, { ...offline, modelProvider: 'openai:gpt-4o-mini' })).toEqual([]);
    expect(warmUpTasks(pending(1000), 2, { ...offline, embedderProvider: 'openai:text-embedding-3-small' })).toEqual(
      [],
    );
  });

  it("lets a scenario go once its last cell is recorded: a dataset's text does not stay for the whole run", {
    timeout: 120_000,
  }, async () => {
    // Three scenarios of one ~1.5 MB message each, run one after another by one worker: when the
    // third cell is saved, the first two scenarios are held by nothing here (the worker holds the third).
    const chars = 1_500_000;
    const files = await Promise.all(
      [0, 1, 2].map((k) => {
        const words = Array.from({ length: chars / 10 }, (_, i) => `s${k}w${String(i % 10_000).padStart(5, '0')} `);
        return scenarioFile(
          `big-${k}.yaml`,
          `name: big-${k}\nsteps:\n  - id: u1\n    user: ${JSON.stringify(words.join(''))}\n    assistant: Noted.\n  - probe: What did I say?\n    expect: ["s${k}w00001"]\n    evidence: [u1]\n`,
        );
      }),
    );
    const heapAtSave: number[] = [];
    const run = await runBenchmark({
      scenarios: files,
      strategies: ['buffer'],
      workers: 1,
      workerProcesses: true,
      store: {
        open: async () => new Map(),
        save: async () => {
          heapAtSave.push(heapAfterGc());
        },
      },
    });
    expect(run.cells.map((cell) => cell.status)).toEqual(['ok', 'ok', 'ok']);
    // Two scenarios of 1.5 MB of one-byte text (3 MB) gone between the first save and the last.
    expect(heapAtSave[0]! - heapAtSave[2]!).toBeGreaterThan(2_000_000);
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
    const options = {
      scenarios: ['recipes-en', 'recipes-zh'],
      strategies: ['buffer', 'window'],
      params: ['window.k=2,4'],
    };
    const { plans } = await planRun(options);
    const shards = await Promise.all(
      [1, 2, 3].map((index) => runBenchmark({ ...options, shard: { index, count: 3 } })),
    );
    expect(shards.map((shard) => shard.cells.map((cell) => cell.id))).toEqual(
      [1, 2, 3].map((index) => plans.filter((_, position) => position % 3 === index - 1).map((plan) => plan.id)),
    );
    const headers = shards.map((shard) => (shard.header as { shard?: unknown }).shard);
    expect(headers[1]).toEqual({ index: 2, count: 3, planned: 6, digest: expect.stringMatching(/^[0-9a-f]{16}$/u) });
    expect(new Set(headers.map((header) => (header as { digest: string }).digest)).size).toBe(1);
  });
});
