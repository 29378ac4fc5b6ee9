/**
 * `membench bench` at tiny sizes. Behaviour and complexity only — counts of tokenizer, model and
 * embedder calls per turn, rows written, recall — never a wall-clock threshold: timings on a
 * shared machine are noise, counts are not.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, test } from 'vitest';
import { FloorProbe, measureFloors } from '../../../harness/bench/floors.js';
import { measure, Stopwatch, TimedModel } from '../../../harness/bench/measure.js';
import { renderBenchJson, renderBenchReport } from '../../../harness/bench/render.js';
import { benchSaveLoad, type SaveLoadResult, type SaveLoadRow } from '../../../harness/bench/save-load.js';
import type * as Recovery from '../../../harness/bench/recovery.js';
import type { RecoveryResult } from '../../../harness/bench/recovery.js';
import {
  benchSuite,
  cpuFloorRatio,
  offlineSuiteScenarios,
  suiteArguments,
  suiteSnapshot,
} from '../../../harness/bench/suite.js';
import { phaseTotals } from '../../../reports/profile.js';
import type { RunResult } from '../../../harness/results/schema.js';
import { evaluateTargets, flatRatio, missBy } from '../../../harness/bench/targets.js';
import { benchVectorScale, clusteredVectors, EF_GRID, exactTopK } from '../../../harness/bench/vector-scale.js';
import { benchVersusLangChain, type VersusResult } from '../../../harness/bench/versus-langchain.js';
import type { BenchReport } from '../../../harness/bench/index.js';
import { parseSections, parseSizes } from '../../../harness/cli/bench.js';
import { OfflineModel } from '../../../harness/models/index.js';
import { builtinStrategies } from '../../../strategies/index.js';
import { membench } from '../../cli/helpers.js';
import { benchHeader } from '../../helpers/bench-header.js';
import { builtModule } from '../../helpers/built.js';

// The recovery section kills and restarts agent processes: the built one starts them from the bundle, as a user's do.
const { benchRecovery } = await builtModule<typeof Recovery>('harness/bench/recovery.js');

const timing = (p50Ms: number) => ({ p50Ms, p99Ms: p50Ms * 2, meanMs: p50Ms, opsPerSec: 1000 / p50Ms, samples: 10 });

function row(strategy: string, size: number, p50Ms: number, floorP50Ms = 1): SaveLoadRow {
  return {
    strategy,
    size,
    historyFrom: size,
    historyTo: size + 10,
    turn: timing(p50Ms),
    wallP50Ms: p50Ms,
    wallP99Ms: p50Ms,
    saveP50Ms: p50Ms,
    loadP50Ms: 0.01,
    modelShare: 0,
    embedShare: 0,
    tokenizerCallsPerTurn: 4,
    modelCallsPerTurn: 0,
    embedCallsPerTurn: 0,
    commitsPerTurn: 2,
    fileSyncsPerTurn: 0,
    contextTokens: 100,
    reopenMs: 1,
    floorP50Ms,
    floorWrite: 'commit',
  };
}

describe('measure', () => {
  test('a returned duration is the sample: tinybench statistics over exactly those values, one per iteration', async () => {
    let calls = 0;
    const result = await measure('fixed', () => ({ durationMs: ++calls % 2 === 0 ? 4 : 2 }), {
      iterations: 10,
      warmupIterations: 2,
    });
    expect(calls).toBe(12);
    expect(result.samples).toBe(10);
    expect(result.meanMs).toBeCloseTo(3);
    expect(result.opsPerSec).toBeCloseTo(1000 / 3);
  });

  test('an aborted run keeps the samples it took', async () => {
    const stop = new AbortController();
    let calls = 0;
    const result = await measure(
      'stops',
      () => {
        if (++calls === 5) stop.abort();
        return { durationMs: 1 };
      },
      { iterations: 100, signal: stop.signal },
    );
    expect(result.samples).toBeLessThan(100);
    expect(result.p50Ms).toBe(1);
  });

  test('the timed model counts calls and passes answers through', async () => {
    const model = new TimedModel(new OfflineModel(), new Stopwatch());
    const { HumanMessage } = await import('@langchain/core/messages');
    const request = { task: 'reply' as const, messages: [new HumanMessage('Hello there, how are you?')] };
    const response = await model.chat(request);
    expect(response.text).toBe((await new OfflineModel().chat(request)).text);
    expect(response.text.length).toBeGreaterThan(0);
    expect(model.watch.calls).toBe(1);
  });
});

describe('floors', () => {
  test('the probe writes two committed rows per turn sample (or two files) and one file per remember sample', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-bench-test-'));
    try {
      const probe = new FloorProbe(dir);
      for (let i = 0; i < 3; i++) expect(await probe.turn('commit')).toBeGreaterThan(0);
      expect(await probe.turn('file')).toBeGreaterThan(0);
      expect(await probe.remember()).toBeGreaterThan(0);
      probe.close();
      const db = new Database(path.join(dir, 'floor-probe.sqlite'));
      expect((db.prepare('SELECT count(*) AS n FROM messages').get() as { n: number }).n).toBe(6);
      db.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('every floor is measured on this machine, with a crossover estimate', async () => {
    const floors = await measureFloors({ quick: true, vectors: 300, dimensions: 16, ef: 16, seed: 1 });
    // Quick mode: at least a quarter of each floor's iterations (tinybench may run more within its time budget).
    const least = {
      tokenEncode: 125,
      tokenEncodeOrdinary: 125,
      sqliteCommitFull: 50,
      sqliteCommitNormal: 50,
      atomicFileWrite: 25,
      hnswTop5: 100,
      bruteForceTop5: 10,
      forkKillReopen: 5,
    } as const;
    for (const [name, samples] of Object.entries(least)) {
      const floor = floors[name as keyof typeof least];
      expect(floor.samples, name).toBeGreaterThanOrEqual(samples);
      expect(floor.p50Ms, name).toBeGreaterThan(0);
      expect(floor.p50Ms, name).toBeLessThanOrEqual(floor.p99Ms);
    }
    expect(floors.forkKillReopen.samples).toBe(5);
    expect(floors.crossoverVectors).toBeGreaterThan(0);
  });
});

describe('save + load per turn', () => {
  let result: SaveLoadResult;
  const sizes = [40, 160];
  beforeAll(async () => {
    result = await benchSaveLoad({
      definitions: builtinStrategies,
      sizes,
      turnsAt: () => 6,
      warmupTurns: 1,
      rememberEvery: 20,
      rememberSamples: 2,
    });
  }, 120_000);

  test('one row per strategy and history length, measured right after the prefilled history', () => {
    expect(result.rows).toHaveLength(builtinStrategies.length * sizes.length);
    for (const item of result.rows) {
      expect(item.historyFrom).toBe(item.size);
      expect(item.historyTo).toBe(item.size + 7);
      expect(item.turn.samples).toBe(6);
      expect(item.floorP50Ms).toBeGreaterThan(0);
    }
  });

  test('work per turn does not grow with the history: tokenizer, model and embedder calls stay bounded', () => {
    for (const item of result.rows) {
      // 320 stored messages at the larger size: re-tokenising or re-embedding the history would show in the hundreds.
      expect(item.tokenizerCallsPerTurn, `${item.strategy}@${item.size}`).toBeLessThan(40);
      expect(item.modelCallsPerTurn, `${item.strategy}@${item.size}`).toBeLessThanOrEqual(10);
      expect(item.embedCallsPerTurn, `${item.strategy}@${item.size}`).toBeLessThanOrEqual(2);
    }
    const at = (strategy: string, size: number) =>
      result.rows.find((item) => item.strategy === strategy && item.size === size)!;
    for (const strategy of ['buffer', 'window', 'vector']) {
      expect(at(strategy, 160).tokenizerCallsPerTurn, strategy).toBe(at(strategy, 40).tokenizerCallsPerTurn);
    }
    // file-index counts a memory's index line once, when the memory is written: what a turn writes, not the history.
    expect(at('file-index', 160).tokenizerCallsPerTurn).toBeLessThanOrEqual(
      at('file-index', 40).tokenizerCallsPerTurn + 1,
    );
    for (const strategy of ['buffer', 'window', 'vector'])
      expect(at(strategy, 160).modelCallsPerTurn, strategy).toBe(0);
    // Durable writes, counted from the WAL: one commit per message; entity adds its extraction.
    for (const strategy of ['buffer', 'window', 'vector'])
      expect([at(strategy, 160).commitsPerTurn, at(strategy, 160).fileSyncsPerTurn], strategy).toEqual([2, 0]);
    expect(at('entity', 160).commitsPerTurn).toBe(3);
    expect(at('summary', 160).modelCallsPerTurn).toBe(1); // one fold per exchange
    expect(at('vector', 160).embedCallsPerTurn).toBe(1); // the finished exchange and the query in one call
    expect(at('buffer', 160).contextTokens).toBeGreaterThan(at('buffer', 40).contextTokens * 3); // buffer's inherent growth
    expect(at('window', 160).contextTokens).toBeLessThan(at('window', 40).contextTokens * 2);
  });

  test('explicit-memory strategies get memories in the prefill and a remember measurement', () => {
    expect(result.remember.map((item) => [item.strategy, item.size, item.memories])).toEqual([
      ['file-index', 40, 2],
      ['file-index', 160, 8],
    ]);
    for (const item of result.remember) expect(item.timing.samples).toBe(2);
  });
});

describe('LangChain side by side', () => {
  let versus: VersusResult;
  beforeAll(async () => {
    versus = await benchVersusLangChain({ turns: 40, windowK: 3, maxTokenLimit: 200, budgetMs: 60_000 });
  }, 120_000);

  test('both pairs play the whole conversation; ours in sync and none against LangChain in memory', () => {
    expect(versus.skipped).toBeUndefined();
    expect(
      versus.pairs.map((pair) => [
        pair.ours.map((run) => `${run.strategy}/${run.durability}`),
        pair.langchain.strategy,
        pair.commonTurns,
      ]),
    ).toEqual([
      [['window/sync', 'window/none'], 'langchain:buffer-window', 40],
      [['summary-buffer/sync', 'summary-buffer/none'], 'langchain:summary-buffer', 40],
    ]);
  });

  test("summary-buffer stays within maxTokenLimit on every turn; LangChain's does not bound its context", () => {
    const [, pair] = versus.pairs;
    for (const run of pair!.ours) {
      expect(run.maxContextTokens).toBeLessThanOrEqual(200);
      expect(run.turnsOverLimit).toBe(0);
    }
    expect(pair!.langchain.maxContextTokens).toBeGreaterThan(200);
    expect(pair!.langchain.turnsOverLimit).toBeGreaterThan(0);
  });

  test('window counts the current exchange in k; BufferWindowMemory keeps k earlier ones besides it', () => {
    const [pair] = versus.pairs;
    expect(pair!.ours[0]!.maxEarlierExchanges).toBe(2);
    expect(pair!.langchain.maxEarlierExchanges).toBe(3);
    expect(pair!.langchain.modelCalls).toBe(0);
  });
});

describe('vector at scale', () => {
  test('exact top-k agrees with a full sort', () => {
    const set = clusteredVectors(500, 8, 3);
    const query = Array.from(set.data.subarray(8 * 17, 8 * 18));
    const scored = Array.from({ length: 500 }, (_, label) => ({
      label,
      score: query.reduce((sum, value, j) => sum + value * set.data[label * 8 + j]!, 0),
    }));
    const expected = scored
      .sort((a, b) => b.score - a.score)
      .slice(0, 5)
      .map((item) => item.label);
    expect(exactTopK(set, query, 5)).toEqual(expected);
    expect(expected[0]).toBe(17);
  });

  test('ef is tuned upwards until recall reaches the target; the index has a size on disk', async () => {
    const result = await benchVectorScale({
      count: 2000,
      dimensions: 32,
      queries: 40,
      k: 5,
      recallTarget: 0.95,
      seed: 5,
      iterations: 20,
    });
    expect(result.recall).toBeGreaterThanOrEqual(0.95);
    expect(EF_GRID).toContain(result.ef);
    expect(result.trials.map((trial) => trial.ef)).toEqual(EF_GRID.slice(0, result.trials.length));
    expect(result.trials.slice(0, -1).every((trial) => trial.recall < 0.95)).toBe(true);
    expect(result.indexBytes).toBeGreaterThan(2000 * 32 * 4);
    expect(result.search.samples).toBe(20);
  });
});

describe('suite throughput', () => {
  test('the offline suite is every built-in scenario except the long ones, and the generated suite', async () => {
    const names = await offlineSuiteScenarios();
    expect(names).toContain('recipes-en');
    expect(names).not.toContain('long-recipes');
    expect(names.at(-1)).toBe('generated');
  });

  test('counts cells, turns and where the time went', async () => {
    const suite = await benchSuite({ scenarios: ['recipes-en'], strategies: ['window', 'buffer'], floorForks: 2 });
    expect(suite.cells).toBe(2);
    expect(suite.errors).toEqual([]);
    expect(suite.turns).toBeGreaterThan(20);
    expect(suite.byMode.map((phase) => [phase.name, phase.cells])).toEqual([['in process', 2]]);
    expect(suite.byScenario.map((phase) => phase.name)).toEqual(['recipes-en']);
    expect([suite.phases.cells, suite.phases.processes]).toEqual([2, 0]); // phases recorded; no agent process for in-process cells
    expect(suite.snapshot).toEqual({ starts: 0, otherStarts: 0, warning: null });
    // Agent processes as the table counts them: forked (spares no cell opened included), started, opened.
    const counted = { ...suite.phases, forked: 9, snapshotStarts: 7, otherStarts: 0, processes: 12, processCells: 3 };
    expect(
      renderBenchReport({
        header: benchHeader({ sections: ['suite'] }),
        suite: { ...suite, phases: counted, snapshot: { starts: 7, otherStarts: 0, warning: null }, complete: true },
        targets: [],
      }),
    ).toMatch(/\| agent processes forked \/ started \/ opens +\| 9 \/ 7 \/ 12 for 3 cells /u);
    // The whole command was timed: its cells are part of its wall time, its process tree's CPU counted.
    expect(suite.command).toBe('membench run');
    expect(suite.cellsMs).toBeGreaterThan(0);
    expect(suite.wallMs).toBeGreaterThan(suite.cellsMs);
    expect(suite.cpuMs).toBeGreaterThan(0);
    // The ratio the target judges: the run over the fork floor measured in the same section.
    expect(suite.forkFloorMs).toBeGreaterThan(0);
    expect(suite.floorRatio).toBeCloseTo(suite.wallMs / suite.forkFloorMs);
    // The CPU view beside it: a fork's CPU (the child's and this process's), the tree's CPU over it.
    expect(suite.forkFloorCpuMs).toBeGreaterThan(0);
    expect(suite.cpuFloorRatio).toBeCloseTo(suite.cpuMs! / suite.forkFloorCpuMs!);
    expect([
      cpuFloorRatio(null, 80),
      cpuFloorRatio(8000, null),
      cpuFloorRatio(8000, 0),
      cpuFloorRatio(8000, 80),
    ]).toEqual([null, null, null, 100]);
    expect(
      evaluateTargets({ suite: { ...suite, complete: true } }).find((item) => item.id === 'suite:floor-ratio'),
    ).toMatchObject({
      value: suite.floorRatio,
      limit: 400,
      pass: suite.floorRatio <= 400,
    });
  }, 60_000);

  test('says whether the agent processes started from the startup snapshot, and why not when they did not', () => {
    const phases = (snapshotStarts: number, otherStarts: number) => ({
      ...phaseTotals({ cells: [] } as unknown as RunResult),
      snapshotStarts,
      otherStarts,
    });
    let asked = 0;
    const why = (): string => {
      asked++;
      return 'the snapshot records the bundle /elsewhere/agent-entry.bundle.cjs';
    };
    expect(suiteSnapshot(phases(12, 0), why)).toEqual({ starts: 12, otherStarts: 0, warning: null });
    expect(asked).toBe(0); // a V8 check costs a process: only when one is needed
    const slower = suiteSnapshot(phases(2, 10), why);
    expect(slower.warning).toContain('10 of 12 agent processes did not start from the startup snapshot');
    expect(slower.warning).toContain('/elsewhere/agent-entry.bundle.cjs');
    expect(suiteSnapshot(phases(0, 3), () => null).warning).toContain('looks usable here');
  });

  test('runs the command a user types: the default run when nothing is named', () => {
    expect(suiteArguments({})).toEqual(['run', '--profile', '--quiet']);
    expect(suiteArguments({ scenarios: ['recipes-en'], strategies: ['window'], workers: 3 })).toEqual([
      'run',
      '-c',
      'recipes-en',
      '-s',
      'window',
      '-w',
      '3',
      '--profile',
      '--quiet',
    ]);
  });
});

describe('crash + recovery', () => {
  test('times every reached crash of the recovery scenario and counts the processes behind them', async () => {
    const recovery = await benchRecovery({ strategies: ['buffer'] });
    expect(recovery.errors).toEqual([]);
    const [buffer] = recovery.rows;
    expect(buffer!.crashes).toBe(3); // two after_ack kills and one before_model_call; buffer has no mid_memory_write point
    expect(buffer!.processes).toBe(1 + 3 + 1); // the first, one per crash, one after the session boundary
    expect(buffer!.p50Ms).toBeGreaterThan(0);
  }, 180_000);

  test('judged against the fork floor of the same run, only when the floors were measured', () => {
    const recovery: RecoveryResult = {
      scenario: 'remember-then-crash',
      errors: [],
      rows: [
        { strategy: 'buffer', crashes: 3, p50Ms: 50, maxMs: 80, processes: 5, processCpuMsEach: 200, spareWaitMs: 10 },
        {
          strategy: 'vector',
          crashes: 3,
          p50Ms: 250,
          maxMs: 300,
          processes: 5,
          processCpuMsEach: 200,
          spareWaitMs: 10,
        },
      ],
    };
    const floors = { forkKillReopen: timing(100) } as unknown as NonNullable<BenchReport['floors']>;
    const judged = new Map(evaluateTargets({ recovery, floors }).map((item) => [item.id, item]));
    expect(judged.get('recovery:buffer')!.pass).toBe(true);
    expect(judged.get('recovery:vector')!.pass).toBe(false);
    expect(missBy(judged.get('recovery:vector')!)).toBe('1.25× the limit');
    expect(evaluateTargets({ recovery }).every((item) => item.pass === null)).toBe(true);
  });
});

describe('targets and the report', () => {
  const saveLoad: SaveLoadResult = {
    rows: [
      row('window', 10, 1),
      row('window', 100, 1),
      row('window', 10_000, 1.2),
      row('vector', 100, 2),
      row('vector', 10_000, 4),
      row('buffer', 100, 1),
      row('buffer', 10_000, 9),
    ],
    remember: [],
    turnsPerSize: { 10: 30, 100: 100, 10_000: 200 },
    rememberEvery: 100,
  };

  test('flatness compares the largest history with 100 turns', () => {
    const flat = flatRatio(saveLoad.rows.filter((item) => item.strategy === 'window'))!;
    expect([flat.from.size, flat.to.size, flat.ratio, flat.rawRatio]).toEqual([100, 10_000, 1.2, 1.2]);
    // Over the floor sampled alongside: twice the time at twice the floor is flat.
    const drifted = flatRatio([row('entity', 100, 1, 1), row('entity', 10_000, 2, 2)])!;
    expect([drifted.rawRatio, drifted.ratio]).toEqual([2, 1]);
  });

  test('near-floor and flat targets pass, miss (with by how much) or are not judged', () => {
    const targets = evaluateTargets({ saveLoad });
    const byId = new Map(targets.map((item) => [item.id, item]));
    expect(byId.get('near-floor:window')!.pass).toBe(true);
    expect(byId.get('near-floor:vector')!.pass).toBe(false);
    expect(missBy(byId.get('near-floor:vector')!)).toBe('1.33× the limit');
    expect(byId.get('flat:vector')!.pass).toBe(false);
    expect(byId.get('flat:buffer')!.pass).toBeNull(); // exempt
    expect(byId.get('flat:window')!.pass).toBe(true);
  });

  test('tables print every figure with PASS / MISS; the JSON renders to the same tables', () => {
    const report: BenchReport = {
      header: benchHeader({
        loadAverage: { start: 0.5, end: 0.7 },
        quick: false,
        sections: ['save-load'],
        durationMs: 1000,
      }),
      saveLoad,
      targets: evaluateTargets({ saveLoad }),
    };
    const text = renderBenchReport(report);
    expect(text).toContain('## save + load per turn');
    expect(text).toContain('| vector ');
    expect(text).toMatch(/PASS/u);
    expect(text).toMatch(/MISS \(1\.33× the limit\)/u);
    const json = JSON.parse(renderBenchJson(report)) as BenchReport;
    expect(json.saveLoad!.rows).toHaveLength(7);
    expect(renderBenchReport(json)).toBe(text);
  });
});

describe('membench bench arguments', () => {
  test('sections and sizes are checked before anything runs', async () => {
    expect(parseSections(['floors,vector', 'suite'])).toEqual(['floors', 'vector', 'suite']);
    expect(parseSizes('10,100,10_000')).toEqual([10, 100, 10_000]);
    expect(() => parseSections(['speed'])).toThrow(
      /--only speed: expected one of floors, save-load, recovery, langchain, vector, suite/u,
    );
    expect(() => parseSizes('10,ten')).toThrow(/--sizes 10,ten/u);
    const run = await membench(['bench', '--only', 'speed']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--only speed');
  });
});
