/**
 * Durability with real crashes: agent processes killed with SIGKILL at crash points, fresh
 * processes recovering on the same dir, the ledger counting effects. Nothing is mocked. The run is
 * the built one (test/helpers/built.ts): its agent processes start from the bundle, as a user's do.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type * as Crashes from '../../../harness/process/crashes.js';
import type { CellResult, OkCell } from '../../../harness/results/schema.js';
import type * as Runner from '../../../harness/run/runner.js';
import type * as Load from '../../../harness/scenarios/load.js';
import type * as Reports from '../../../reports/index.js';
import { builtModule } from '../../helpers/built.js';
import { allOk, ok } from '../../helpers/cells.js';

const { fuzzPlan } = await builtModule<typeof Crashes>('harness/process/crashes.js');
const { loadScenarioFile } = await builtModule<typeof Load>('harness/scenarios/load.js');
const { runBenchmark } = await builtModule<typeof Runner>('harness/run/runner.js');
const { renderConsoleSummary, renderHtml, renderMarkdown } = await builtModule<typeof Reports>('reports/index.js');

/** The temp dirs of the scenario files written, removed after the tests. */
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

async function scenarioFile(yaml: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-durability-'));
  made.push(dir);
  const file = path.join(dir, 'scenario.yaml');
  await writeFile(file, yaml);
  return file;
}

/** Room for real processes killed and restarted on a loaded 2-core machine (the slowest here took 21 s at load 5). */
const PROCESS_TIMEOUT = { timeout: 120_000 };

const cell = (cells: CellResult[], id: string): OkCell => {
  const found = cells.find((item) => item.id === id);
  if (!found) throw new Error(`no cell ${id} in ${cells.map((item) => item.id).join(', ')}`);
  return ok(found);
};

describe('crashes mid tool call', () => {
  it(
    'with idempotency keys no effect happens twice; without them the ledger counts the duplicate',
    PROCESS_TIMEOUT,
    async () => {
      const result = await runBenchmark({ scenarios: ['crash-mid-tool-call'], strategies: ['buffer'] });
      const withKeys = cell(result.cells, 'crash-mid-tool-call/buffer');
      const withoutKeys = cell(result.cells, 'crash-mid-tool-call/buffer/no-keys');
      for (const item of [withKeys, withoutKeys]) {
        expect(item.status).toBe('ok');
        // Every armed crash point was reached and killed the process with SIGKILL.
        expect(item.durabilityOutcome!.crashes.map((crash) => [crash.point, crash.reached, crash.signal])).toEqual([
          ['after_tool_intent', true, 'SIGKILL'],
          ['after_tool_effect', true, 'SIGKILL'],
          ['after_tool_result', true, 'SIGKILL'],
          ['before_model_call', true, 'SIGKILL'],
        ]);
      }
      expect(withKeys.effects).toEqual({ effects: 3, effectsDuplicated: 0, effectsRefused: 0 });
      expect(
        withKeys.durabilityOutcome!.recoveries.map((recovery) => [
          recovery.classification,
          recovery.ledgerApplied,
          recovery.reran,
        ]),
      ).toEqual([
        ['not-started', false, true], // killed after the intent: the ledger says the order was never placed
        ['completed', true, false], // killed after the effect: the key tells recovery not to add the wine again
      ]);
      expect(withoutKeys.effects).toEqual({ effects: 4, effectsDuplicated: 1, effectsRefused: 0 });
      expect(withoutKeys.durabilityOutcome!.recoveries.map((recovery) => recovery.classification)).toEqual([
        'started-unknown',
        'started-unknown',
      ]);
      for (const id of ['1', '2', '3', '5'] as const)
        expect(withKeys.durabilityOutcome!.invariants[id].held).toBe(true);
      expect(withKeys.durabilityOutcome!.invariants['3'].checked).toBeGreaterThan(0);
      // The matrix attributes the duplicate to the crash point that caused it.
      const row = result.durabilityMatrix.find((item) => !item.idempotencyKeys && item.point === 'after_tool_effect')!;
      expect(row).toMatchObject({ armed: 1, reached: 1, effectsDuplicated: 1 });
      // Both probes still recall the order after four kills.
      expect(withKeys.recall.contextRecall.hits).toBe(2);
    },
  );
});

describe('acknowledged memories and user input', () => {
  const yaml = `name: ack
steps:
  - user: Hello there.
    assistant: Hi!
  - crash: after_ack
  - remember: The garage code is 4711.
  - crash: before_model_call
  - user: What should I cook tonight?
    assistant: Try the braised tofu.
  - probe: What is the garage code?
    expect: ["4711"]
`;

  it('in sync mode survive every crash; in none mode the losses are counted, not errors', PROCESS_TIMEOUT, async () => {
    const file = await scenarioFile(yaml);
    const result = await runBenchmark({
      scenarios: [file],
      strategies: ['buffer', 'file-index'],
      durabilities: ['sync', 'none'],
    });
    for (const strategy of ['buffer', 'file-index']) {
      const sync = cell(result.cells, `ack/${strategy}`);
      expect(sync.status).toBe('ok');
      expect(sync.durabilityOutcome!.crashes.every((crash) => crash.reached)).toBe(true);
      expect(sync.durabilityOutcome!.invariants['1']).toMatchObject({ held: true, violations: 0 });
      expect(sync.durabilityOutcome!.invariants['2']).toMatchObject({ held: true, violations: 0, checked: 1 });
      expect(sync.recall.contextRecall.hits).toBe(1);
      const none = cell(result.cells, `ack/${strategy}(durability=none)`);
      expect(none.status).toBe('ok');
      expect(none.durabilityOutcome!.counts.acknowledgedLost).toBeGreaterThan(0);
      expect(none.durabilityOutcome!.invariants['1'].held).toBe(false);
      expect(none.recall.contextRecall.hits).toBe(0);
    }
    const buffer = result.durabilityPrices.find((price) => price.strategy === 'buffer' && price.durability === 'none')!;
    expect(buffer.losses.acknowledgedLost).toBeGreaterThan(0);
    expect(buffer.losses.messagesLost).toBe(1);
    // The price of each mode beside its losses, in the console and in report.md.
    const console = renderConsoleSummary(result);
    // Only invariants that were checked show: 4 (stale writers), 5 (store integrity) and 6 (queues) had nothing to check here.
    expect(console).toMatch(/│ buffer +│ none +│ on +│.*│ 1✗\d+ 2✗1 3✓ +│/u);
    expect(console).toMatch(/│ buffer +│ sync +│ on +│.*│ 1✓ 2✓ 3✓ +│/u);
    const markdown = renderMarkdown(result);
    expect(markdown).toContain('## Durability');
    expect(markdown).toMatch(/\| buffer \| none \| on \| after_ack \| 1\/1 \| 1 \|/u);
  });
});

describe('summarising strategies', () => {
  it(
    'count what they lose in none mode as losses, not as compressed away, in every report',
    PROCESS_TIMEOUT,
    async () => {
      const file = await scenarioFile(
        'name: forgets\nsteps:\n  - user: Hello there.\n    assistant: Hi!\n  - crash: after_ack\n  - remember: The garage code is 4711.\n  - probe: What is the garage code?\n    expect: ["4711"]\n',
      );
      const result = await runBenchmark({ scenarios: [file], strategies: ['summary'], durabilities: ['none'] });
      const only = ok(result.cells[0]);
      expect(only.status).toBe('ok');
      expect(only.recall.contextRecall.hits).toBe(0);
      expect(only!.durabilityOutcome!.counts).toMatchObject({ acknowledgedLost: 1, compressedAway: 0 });
      expect(only!.durabilityOutcome!.invariants['1']).toMatchObject({ held: false, violations: 1 });
      expect(result.durabilityPrices[0]!.losses).toMatchObject({ acknowledgedLost: 1, compressedAway: 0 });
      expect(renderConsoleSummary(result, { width: 1000 })).toMatch(/│ summary +│ none +│ on +│.*│ 1 +│ 0 +│.*│ 1✗1/u);
      for (const report of [renderConsoleSummary(result), renderMarkdown(result), renderHtml(result)])
        expect(report).toContain('compressed away');
    },
  );
});

describe('a memory the user asked to forget', () => {
  it(
    'is no acknowledged memory a later crash must keep (invariant 1 held, not violated)',
    PROCESS_TIMEOUT,
    async () => {
      const file = await scenarioFile(
        'name: forget-then-crash\nsteps:\n  - {id: r1, remember: My home city is Shanghai., name: home-city}\n  - forget: home-city\n  - crash: before_model_call\n  - user: ok\n  - {probe: Where do I live?, category: abstention, forbid: [Shanghai]}\n',
      );
      const result = await runBenchmark({ scenarios: [file], strategies: ['file-index'], workers: 1 });
      const only = ok(result.cells[0]);
      expect(only.durabilityOutcome!.invariants['1']).toMatchObject({ held: true, violations: 0 });
      expect(only.durabilityOutcome!.counts).toMatchObject({ acknowledgedLost: 0 });
    },
  );

  it(
    'in a concurrent session is no write the check after the step must find (invariant 5), unless the session remembered it again',
    PROCESS_TIMEOUT,
    async () => {
      const file = await scenarioFile(
        [
          'name: concurrent-forget',
          'steps:',
          '  - user: Hello there.',
          '    assistant: Hi!',
          '  - concurrent:',
          '      - - {remember: My home city is Shanghai., name: home-city}',
          '        - forget: home-city',
          '        - {remember: My gym is on Elm Street., name: gym}',
          '      - - {remember: My car is teal., name: car}',
          '        - forget: car',
          '        - {remember: My car is now red., name: car}',
          '  - {probe: What colour is my car?, expect: [red]}',
          '',
        ].join('\n'),
      );
      const result = await runBenchmark({ scenarios: [file], strategies: ['file-index'], workers: 1 });
      const only = ok(result.cells[0]);
      expect(only.durabilityOutcome!.invariants['5']).toMatchObject({ held: true, violations: 0 });
      expect(only.durabilityOutcome!.counts).toMatchObject({ lostUpdates: 0 });
    },
  );
});

describe('background work across a crash (invariants 4 and 6)', () => {
  it('counts the jobs a best-effort queue loses to a crash and holds for a durable one', PROCESS_TIMEOUT, async () => {
    const file = await scenarioFile(
      'name: queued\nsteps:\n  - user: Note the blue paper.\n    assistant: OK.\n  - user: Note the forty guests.\n    assistant: OK.\n  - crash: before_model_call\n  - user: And the green ink.\n    assistant: OK.\n  - probe: Which paper?\n    expect: ["blue paper"]\n',
    );
    const strategy = path.resolve('fixtures/strategies/queues-notes.mjs');
    const result = await runBenchmark({
      scenarios: [file],
      strategies: [strategy],
      params: ['queues-notes.queue=file,memory'],
    });
    const durable = cell(result.cells, 'queued/queues-notes(queue=file)');
    const bestEffort = cell(result.cells, 'queued/queues-notes(queue=memory)');
    for (const item of [durable, bestEffort]) {
      expect(item.status).toBe('ok');
      expect(item.durabilityOutcome!.crashes.map((crash) => [crash.point, crash.reached])).toEqual([
        ['before_model_call', true],
      ]);
    }
    expect(durable.durabilityOutcome!.invariants['6']).toMatchObject({ held: true, checked: 1, violations: 0 });
    expect(durable.durabilityOutcome!.counts.pendingJobsLost).toBe(0);
    expect(durable.recall.contextRecall.hits).toBe(1);
    // The two notes queued before the crash were pending when the process died, and gone after.
    expect(bestEffort.durabilityOutcome!.invariants['6']).toMatchObject({ held: false, checked: 1, violations: 2 });
    expect(bestEffort.durabilityOutcome!.invariants['6'].details).toEqual([
      '2 background job(s) pending before the crash were gone after reopening',
    ]);
    expect(bestEffort.durabilityOutcome!.counts.pendingJobsLost).toBe(2);
    expect(bestEffort.recall.contextRecall.hits).toBe(0);
    // The mode's price shows the loss (both knob settings pool into one row per strategy and mode).
    expect(result.durabilityPrices.find((price) => price.strategy === 'queues-notes')!.losses.pendingJobsLost).toBe(2);
    expect(renderConsoleSummary(result)).toMatch(/6✗2/u);
  });

  it(
    'a summary job killed mid_summary and resumed never overwrites the correction (built-ins, sync)',
    PROCESS_TIMEOUT,
    async () => {
      const result = await runBenchmark({
        scenarios: ['stale-background-job'],
        strategies: ['summary', 'entity'],
        params: ['summary.summarize=async'],
      });
      expect(result.cells.map((item) => item.id)).toEqual([
        'stale-background-job/summary(summarize=async)',
        'stale-background-job/entity',
      ]);
      for (const item of allOk(result).cells) {
        expect(item.status).toBe('ok');
        expect(item.durabilityOutcome!.crashes.map((crash) => [crash.point, crash.reached, crash.signal])).toEqual([
          ['mid_summary', true, 'SIGKILL'],
        ]);
        for (const id of ['4', '6'] as const)
          expect(item.durabilityOutcome!.invariants[id], `${item.id} invariant ${id}`).toMatchObject({
            held: true,
            checked: 1,
            violations: 0,
          });
        expect(item.durabilityOutcome!.counts).toMatchObject({ pendingJobsLost: 0, staleOverwrites: 0 });
      }
    },
  );
});

describe('unexpected exits', () => {
  it('are recorded with the step, never crash the harness', PROCESS_TIMEOUT, async () => {
    const file = await scenarioFile(
      'name: dies\nsteps:\n  - user: hello\n    assistant: hi\n  - user: please EXIT now\n    assistant: ok\n',
    );
    const strategy = path.resolve('fixtures/strategies/exits-on-save.mjs');
    const result = await runBenchmark({ scenarios: [file], strategies: [strategy], agentProcesses: true });
    const [only] = result.cells;
    expect(only).toMatchObject({
      status: 'error',
      error: expect.stringMatching(/step 1 kept killing the agent process \(last exit: code 3, signal null\)/u),
    });
    // An error cell keeps what it saw of crashes before it stopped, and no figure.
    expect(Object.keys(only!)).not.toContain('recall');
    expect(only!.durabilityOutcome!.counts.unexpectedExits).toBeGreaterThan(1);
  });
});

describe('concurrent writers', () => {
  it('lose no acknowledged update and leave no torn file', PROCESS_TIMEOUT, async () => {
    const session = (name: string) =>
      Array.from(
        { length: 8 },
        (_, index) => `        - remember: ${name} fact number ${index} is ${name}-${index * 7}`,
      ).join('\n');
    const yaml = `name: writers\nsteps:\n  - user: start\n    assistant: ok\n  - concurrent:\n      - \n${session('alpha')}\n      - \n${session('beta')}\n      - \n${session('gamma')}\n      - \n${session('delta')}\n`;
    const result = await runBenchmark({ scenarios: [await scenarioFile(yaml)], strategies: ['buffer', 'file-index'] });
    for (const item of allOk(result).cells) {
      expect(item.status).toBe('ok');
      expect(item.durabilityOutcome!.counts.lostUpdates).toBe(0);
      expect(item.durabilityOutcome!.counts.tornFiles).toBe(0);
      expect(item.durabilityOutcome!.counts.indexMismatches).toBe(0);
      expect(item.durabilityOutcome!.invariants['5'].held).toBe(true);
      expect(item.durabilityOutcome!.invariants['5'].checked).toBeGreaterThan(0);
    }
  });
});

describe('crash fuzzing', () => {
  it('plans the same kills from the same seed and different ones from another', async () => {
    const scenario = await loadScenarioFile('scenarios/crash-mid-tool-call.yaml');
    const plan = (seed: number) => [...fuzzPlan(scenario.steps, 30, seed)].sort(([a], [b]) => a - b);
    expect(plan(7)).toEqual(plan(7));
    expect(plan(7)).not.toEqual(plan(8));
    expect(plan(7).reduce((total, [, points]) => total + points.length, 0)).toBe(30);
  });

  it('kills reproducibly: the same seed gives the same crash outcomes', PROCESS_TIMEOUT, async () => {
    const options = { scenarios: ['remember-then-crash'], strategies: ['buffer'], crashFuzz: 3, seed: 11 };
    const [a, b] = [await runBenchmark(options), await runBenchmark(options)];
    const outcomes = (result: typeof a) =>
      result.cells.map((item) =>
        item.durabilityOutcome!.crashes.map((crash) => `${crash.step}:${crash.point}:${crash.reached}`),
      );
    expect(outcomes(a)).toEqual(outcomes(b));
    expect(a.cells[0]!.durabilityOutcome!.crashes.filter((crash) => crash.source === 'fuzz').length).toBe(3);
    expect(a.cells[0]!.durabilityOutcome!.invariants['1'].held).toBe(true);
  });
});
