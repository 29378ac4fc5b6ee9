/**
 * Warm spare agent processes, counted: a crash costs one process start and nothing more (spares
 * carry over between cells, none is wasted). The run is the built one (test/helpers/built.ts): its
 * agent processes start from the bundle, as a user's do.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type * as Agents from '../../../harness/process/agent-process.js';
import type * as Spares from '../../../harness/process/spares.js';
import type * as Pool from '../../../harness/run/pool.js';
import type * as Runner from '../../../harness/run/runner.js';
import { builtModule } from '../../helpers/built.js';
import { ok } from '../../helpers/cells.js';
import { smallConcurrentScenario, smallCrashScenario } from '../../helpers/crash-scenarios.js';

const { agentProcessStats } = await builtModule<typeof Agents>('harness/process/agent-process.js');
const { killSpares, setQueuedAgentCells, SPARES_AHEAD } = await builtModule<typeof Spares>('harness/process/spares.js');
const { runBenchmark } = await builtModule<typeof Runner>('harness/run/runner.js');
const { poolStats } = await builtModule<typeof Pool>('harness/run/pool.js');

afterAll(killSpares);

/** Room for real processes on a loaded 2-core machine. */
const PROCESS_TIMEOUT = { timeout: 240_000 };

describe('warm spare agent processes', PROCESS_TIMEOUT, () => {
  beforeEach(killSpares);

  it('open once per crash or session, start a process only for a crash, and hand the processes left at the end to the next cell', async () => {
    const scenario = await smallCrashScenario();
    const before = agentProcessStats.spawned;
    const first = await runBenchmark({ scenarios: [scenario], strategies: ['buffer'], profile: true });
    const cell = ok(first.cells[0]);
    expect(cell.status).toBe('ok');
    expect(cell!.recall.contextRecall.hits).toBe(1);
    const reached = cell!.durabilityOutcome!.crashes.filter((crash) => crash.reached);
    expect(reached).toHaveLength(1);
    for (const crash of reached) expect(crash.recoveryMs).toBeGreaterThan(0);
    // The first session, one per reached crash, one after the session boundary...
    expect(cell!.phases!.processes).toBe(1 + reached.length + 1);
    // ...in as many processes less the one the cleanly closed session handed on, plus the spares kept ahead.
    expect(agentProcessStats.spawned - before).toBe(cell!.phases!.processes - 1 + SPARES_AHEAD);
    expect(cell.phases!.forked).toBe(agentProcessStats.spawned - before);

    const between = agentProcessStats.spawned;
    const second = await runBenchmark({ scenarios: [scenario], strategies: ['buffer'], profile: true });
    expect(second.cells[0]!.phases!.processes).toBe(cell!.phases!.processes);
    // The next cell opens in the process the first one closed cleanly: only its crash costs a process.
    expect(agentProcessStats.spawned - between).toBe(reached.length);
  });

  it('fork no spare beyond what the cell can still open once the pool has no such cell left to hand out', async () => {
    setQueuedAgentCells(0);
    try {
      const before = agentProcessStats.spawned;
      const result = await runBenchmark({
        scenarios: [await smallCrashScenario()],
        strategies: ['buffer'],
        profile: true,
      });
      const cell = ok(result.cells[0]);
      expect(cell.status).toBe('ok');
      expect(cell.durabilityOutcome!.crashes.filter((crash) => crash.reached)).toHaveLength(1);
      // The first session's process, one spare for its one crash, and no other: the session after
      // the crash opens in the process the recovered one handed back when it closed.
      expect(cell.phases!.processes).toBe(3);
      expect(agentProcessStats.spawned - before).toBe(2);
      expect(cell.phases!.forked).toBe(2);
      expect(await killSpares()).toBe(1); // the last session's, handed back at the end
    } finally {
      setQueuedAgentCells(undefined);
    }
  });

  it("a concurrent step's sessions fork no spares behind them: they come back when they close", async () => {
    const before = agentProcessStats.spawned;
    const result = await runBenchmark({
      scenarios: [await smallConcurrentScenario()],
      strategies: ['buffer'],
      priceDurability: [],
      profile: true,
    });
    const cell = ok(result.cells[0]);
    expect(cell.status).toBe('ok');
    expect(cell.recall.contextRecall.hits).toBe(1);
    // The first session's process, the three sessions' (one of them the first one handed back), the checker's (handed back).
    expect(cell.phases!.processes).toBe(5);
    // No crash: the first process and the spares kept ahead of it serve every session and the
    // checker, and are all handed back at the end. A replacement forked behind each session's
    // process would have been killed as surplus when the sessions came back (7 forked, 2 killed).
    expect(agentProcessStats.spawned - before).toBe(1 + SPARES_AHEAD);
    expect(await killSpares()).toBe(1 + SPARES_AHEAD);
  });

  it('a pool forks no spare that no cell opens: the workers learn when the last cell needing processes is handed out', async () => {
    const demands = poolStats.demandsSent;
    const result = await runBenchmark({
      scenarios: [await smallCrashScenario()],
      strategies: ['buffer', 'window'],
      priceDurability: [],
      workers: 2,
      profile: true,
    });
    const cells = result.cells.map(ok);
    expect(cells.map((cell) => cell.status)).toEqual(['ok', 'ok']);
    const sum = (of: (cell: (typeof cells)[number]) => number): number =>
      cells.reduce((total, cell) => total + of(cell), 0);
    const started = sum((cell) => cell.phases!.snapshotStarts + cell.phases!.otherStarts);
    // Each worker kept SPARES_AHEAD spares ahead of its cell (six never opened). Now a worker handed
    // its cell while the other cell was still queued may fork one spare for that cell: at most one.
    expect(started).toBeGreaterThanOrEqual(4);
    expect(sum((cell) => cell.phases!.forked) - started).toBeLessThanOrEqual(1);
    // The second cell handed out told the worker running the first that none is left.
    expect(poolStats.demandsSent - demands).toBe(1);
  });
});
