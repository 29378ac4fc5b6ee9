import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { CALIBRATION_SAMPLES } from '../../../harness/core/calibration.js';
import { JsonHash } from '../../../harness/core/hash.js';
import { writeSyntheticLongMemEval } from '../../../harness/bench/synthetic-longmemeval.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { loadScenarioFile } from '../../../harness/scenarios/load.js';
import { withoutTiming } from '../../helpers/same-seed.js';
import { offlineProviders } from '../../helpers/offline-providers.js';
import { cellSeed, planDigest, planRun, runBenchmark, runCell, type RunOptions } from '../../../harness/run/runner.js';
import { MEMBENCH_VERSION } from '../../../harness/core/package-info.js';
import { defineStrategy } from '../../../strategies/types.js';
import { cellVerdict, verdictFails } from '../../../reports/junit.js';
import { renderMarkdown } from '../../../reports/markdown.js';
import { allOk } from '../../helpers/cells.js';
import { plannedCells } from '../../helpers/planned.js';

/** The temp dirs made, removed after the tests. */
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

async function scenarioFile(yaml: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-runner-'));
  made.push(dir);
  const file = path.join(dir, 'scenario.yaml');
  await writeFile(file, yaml);
  return file;
}

/** The provider settings the plan-digest tests hash with. */
const DIGEST_SETTINGS = {
  modelProvider: 'offline',
  embedderProvider: 'hashed',
  tokenizerModel: 'offline',
  isolate: false,
  retrievalK: [1, 5],
  live: {},
  keepCellDirs: false,
};

describe('runBenchmark', () => {
  it('shows window k=2 forgetting the early recipe fact that buffer keeps, at fewer tokens', async () => {
    const result = allOk(
      await runBenchmark({ scenarios: ['recipes-zh', 'recipes-en'], strategies: ['buffer', 'window'] }),
    );
    for (const scenario of ['recipes-zh', 'recipes-en']) {
      const buffer = result.cells.find((cell) => cell.scenario === scenario && cell.strategy === 'buffer')!;
      const window = result.cells.find((cell) => cell.scenario === scenario && cell.strategy === 'window')!;
      expect(buffer.status).toBe('ok');
      expect(buffer.recall.contextRecall.value).toBe(1);
      expect(window.recall.contextRecall.value!).toBeLessThan(0.5);
      expect(window.tokens.contextTotal).toBeLessThan(buffer.tokens.contextTotal / 3);
      const allergy = (cell: typeof buffer) => cell.probes.find((probe) => probe.id === 'p-allergy')!;
      expect(allergy(buffer).contextRecall).toBe(true);
      expect(allergy(window).contextRecall).toBe(false);
    }
  });

  it('reproduces the same results from the same seed, apart from timing fields', async () => {
    const options = {
      scenarios: ['preference-corrections'],
      strategies: ['buffer', 'window'],
      params: ['window.k=2,4'],
      seed: 7,
    };
    const [a, b] = [await runBenchmark(options), await runBenchmark(options)];
    expect(withoutTiming(b)).toEqual(withoutTiming(a));
    expect(a.cells.map((cell) => cell.setting)).toEqual(['buffer', 'window(k=2)', 'window(k=4)']);
    expect(new Set(a.cells.map((cell) => cell.seed)).size).toBe(3);
    expect(a.cells[0]!.seed).toBe(cellSeed(7, 'preference-corrections/buffer'));
  });

  it('breaks recall down by category with n, scoring abstention probes apart from recall and answers', async () => {
    const result = allOk(await runBenchmark({ scenarios: ['recipes-en'], strategies: ['buffer'] }));
    const cell = result.cells[0]!;
    const abstention = cell.probes.filter((probe) => probe.category === 'abstention');
    expect(abstention.length).toBeGreaterThan(0);
    const answerable = cell.probes.length - abstention.length;
    expect(cell.recall.contextRecall.n).toBe(answerable);
    expect(cell.recall.answerAccuracy.n).toBe(answerable);
    expect(cell.recall.conflictExposure.n).toBe(answerable);
    expect(cell.recall.abstention.n).toBe(abstention.length);
    const byCategory = Object.values(cell.recallByCategory).reduce(
      (sum, summary) => sum + summary.answerAccuracy.n + summary.abstention.n,
      0,
    );
    expect(byCategory).toBe(cell.probes.length);
    expect(cell.recallByCategory.abstention?.contextRecall.n).toBe(0);
    expect(cell.recallByCategory.abstention?.abstention.n).toBe(abstention.length);
  });

  it('records per-turn context tokens and latencies', async () => {
    const result = allOk(await runBenchmark({ scenarios: ['recipes-en'], strategies: ['window'] }));
    const cell = result.cells[0]!;
    const loaded = cell.turns.filter((turn) => turn.contextTokens !== null);
    expect(loaded.length).toBeGreaterThan(10);
    expect(cell.latency.loadMs.n).toBe(loaded.length);
    expect(cell.latency.saveMs.n).toBe(cell.turns.length);
    expect(cell.tokens.contextTotal).toBe(loaded.reduce((sum, turn) => sum + turn.contextTokens!, 0));
    expect(result.header.tokenizer.encoding).toBe('cl100k_base');
    expect(cell.peakRssMb).toBeGreaterThan(10);
    // The machine's speed over the run, which compare divides latencies by: a batch before and after
    // the cells, and no round between them when the cells run in this process (it would be timed in a step).
    const { calibration } = result.header;
    expect(calibration!.samples).toBe(2 * CALIBRATION_SAMPLES);
    expect(calibration!.cpuMs).toBeGreaterThan(0);
    expect(calibration!.commitMs).toBeGreaterThan(0);
  });

  it('expands filler steps with the run seed, the same for every strategy', async () => {
    const filler = await scenarioFile(
      'name: y\nsteps:\n  - user: My locker code is 4711.\n    assistant: Noted.\n  - filler: 30\n  - probe: locker code?\n    expect: ["4711"]\n',
    );
    const result = allOk(await runBenchmark({ scenarios: [filler], strategies: ['buffer', 'window'] }));
    const [buffer, window] = result.cells;
    expect(buffer!.turns.filter((turn) => turn.kind === 'user')).toHaveLength(31);
    expect(buffer!.recall.contextRecall.hits).toBe(1);
    expect(window!.recall.contextRecall.hits).toBe(0);
    const again = allOk(await runBenchmark({ scenarios: [filler], strategies: ['buffer'], seed: 43 }));
    expect(again.cells[0]!.tokens.contextTotal).not.toBe(buffer!.tokens.contextTotal);
  });

  it("hashes the plan's digest scenario by scenario into the digest of the whole matrix's JSON (run dirs of before still resume)", async () => {
    const { plans, scenarios } = await plannedCells({
      strategies: ['window', 'bm25'],
      scenarios: ['recipes-en', 'recipes-zh'],
    });
    const whole = JSON.stringify({
      membench: MEMBENCH_VERSION,
      providers: ['offline', 'hashed', 'offline', 0, false, [1, 5]],
      scenarios: scenarios.map(({ source: _source, ...scenario }) => scenario),
      cells: plans.map((plan) => [
        plan.id,
        plan.scenario.name,
        plan.strategy.name,
        plan.strategy.options,
        plan.strategy.durability,
        plan.idempotencyKeys,
        plan.trial,
        plan.seed,
      ]),
    });
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      expect(planDigest(plans, scenarios, DIGEST_SETTINGS)).toBe(
        createHash('sha256').update(whole).digest('hex').slice(0, 16),
      );
      // No scenario's JSON is written: only strings with something to escape go through JSON.stringify.
      expect(stringify.mock.calls.filter(([value]) => typeof value === 'object' && value && 'steps' in value)).toEqual(
        [],
      );
    } finally {
      stringify.mockRestore();
    }
  });

  it("feeds an imported question's digest, made from the JSON its import wrote, instead of walking the question again", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-runner-'));
    made.push(dir);
    const file = path.join(dir, 'longmemeval.json');
    await writeSyntheticLongMemEval(file, { questions: 3, sessions: [2, 3], messages: [2, 4], seed: 5 });
    const digestOf = async (options: RunOptions): Promise<string> => {
      const { plans, scenarios, shelf } = await planRun(options);
      await shelf?.close();
      return planDigest(plans, scenarios, DIGEST_SETTINGS);
    };
    const options = { datasets: [`longmemeval:${file}`], strategies: ['bm25'] };
    const walked = vi.spyOn(JsonHash.prototype, 'json');
    try {
      const digest = await digestOf(options);
      expect(walked).not.toHaveBeenCalled();
      expect(await digestOf(options)).toBe(digest);
      // Copied after the import (stretched): walked as any other scenario, and a digest of its own.
      const stretched = await digestOf({ ...options, stretch: 40 });
      expect(walked).toHaveBeenCalledTimes(3);
      expect(stretched).not.toBe(digest);
      // One word changed in one message of the file: another digest.
      const text = await readFile(file, 'utf8');
      const changed = text.replace(/"content": ?"/u, '"content": "Changed: ');
      expect(changed).not.toBe(text);
      await writeFile(file, changed);
      expect(await digestOf(options)).not.toBe(digest);
    } finally {
      walked.mockRestore();
    }
  });

  it('stretches any scenario to N turns with --stretch, probes kept', async () => {
    const plan = await plannedCells({ strategies: ['window'], scenarios: ['recipes-en'], stretch: 300 });
    const [scenario] = plan.scenarios;
    expect(scenario!.name).toBe('recipes-en~300');
    expect(
      scenario!.steps.filter((step) => step.kind === 'user' || step.kind === 'remember' || step.kind === 'forget'),
    ).toHaveLength(300);
    expect(scenario!.steps.filter((step) => step.kind === 'probe')).toHaveLength(8);
  });

  it('leaves long conversations out of the default run but runs them by name', async () => {
    const plan = await plannedCells({ strategies: ['window'] });
    expect(plan.scenarios.map((scenario) => scenario.name)).not.toContain('long-recipes');
    const named = await plannedCells({ strategies: ['window'], scenarios: ['long-recipes'] });
    expect(named.scenarios[0]!.steps.filter((step) => step.kind === 'user').length).toBeGreaterThanOrEqual(1000);
  });

  it('runs the with / without idempotency keys contrast for buffer only by default, for every strategy with --idempotency both', async () => {
    const noKeys = async (
      idempotency?: 'one' | 'both' | 'on' | 'off',
      strategies = ['buffer', 'window', 'bm25'],
    ): Promise<string[]> =>
      (
        await plannedCells({ strategies, scenarios: ['crash-mid-tool-call'], ...(idempotency ? { idempotency } : {}) })
      ).plans
        .filter((plan) => !plan.idempotencyKeys)
        .map((plan) => plan.id);
    expect(await noKeys()).toEqual(['crash-mid-tool-call/buffer/no-keys']);
    expect(await noKeys('both')).toEqual([
      'crash-mid-tool-call/buffer/no-keys',
      'crash-mid-tool-call/window(k=2)/no-keys',
      'crash-mid-tool-call/bm25/no-keys',
    ]);
    expect(await noKeys('on')).toEqual([]);
    // Without buffer in the run, the contrast goes to its first strategy.
    expect(await noKeys(undefined, ['bm25', 'window'])).toEqual(['crash-mid-tool-call/bm25/no-keys']);
  });

  it.each([
    [['window.q=1'], /has no knob "q" \(knobs: k, maxTokens, durability\)/u],
    [['window.k=abc'], /--param window.k=abc: /u],
    [['window.k=0'], /--param window.k=0: /u],
    [['vector.k=1'], /strategy "vector" is not selected/u],
    [['window-k=1'], /expected STRATEGY.KEY=V1,V2/u],
    [['window.durability=later'], /expected one of sync, async, exit, none/u],
  ])('rejects --param %j', async (params, message) => {
    const run = runBenchmark({ scenarios: ['recipes-en'], strategies: ['buffer', 'window'], params });
    await expect(run).rejects.toBeInstanceOf(MembenchError);
    await expect(runBenchmark({ scenarios: ['recipes-en'], strategies: ['buffer', 'window'], params })).rejects.toThrow(
      message,
    );
  });

  it('refuses two scenarios under one name (their cell ids would collide), naming both sources; one file named twice runs once', async () => {
    const own = await scenarioFile('name: recipes-en\nsteps:\n  - user: hi\n    assistant: hello\n');
    const refused = await plannedCells({ scenarios: ['recipes-en', own], strategies: ['buffer'] }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(MembenchError);
    expect((refused as MembenchError).exitCode).toBe(2);
    expect((refused as Error).message).toBe(
      `two scenarios are named "recipes-en": builtin:recipes-en and ${own}; cell ids would collide: rename one (its \`name:\` key)`,
    );
    const { plans } = await plannedCells({ scenarios: [own, own], strategies: ['buffer'] });
    expect(plans.map((plan) => plan.id)).toEqual(['recipes-en/buffer']);
    // The same file under another spelling of its path (`a.yaml`, `./a.yaml`) is the same file.
    const again = `${path.dirname(own)}/./${path.basename(own)}`;
    const twice = await plannedCells({ scenarios: [own, again], strategies: ['buffer'] });
    expect(twice.plans.map((plan) => plan.id)).toEqual(['recipes-en/buffer']);
  });

  it('hands the cells the file a file: URL names (a worker resolved the URL against the working dir: every cell failed)', async () => {
    const file = path.resolve('fixtures/strategies/clock-reader.mjs');
    const { strategies } = await plannedCells({ scenarios: ['recipes-en'], strategies: [pathToFileURL(file).href] });
    expect(strategies.map((strategy) => strategy.source)).toEqual([file]);
  });

  it('records memory files the strategy could not read in the cell and fails it, instead of dropping them in silence', async () => {
    const userMemory = await mkdtemp(path.join(os.tmpdir(), 'membench-user-memory-'));
    made.push(userMemory);
    await mkdir(path.join(userMemory, 'memories'), { recursive: true });
    // Half-written: the front matter never closes.
    await writeFile(
      path.join(userMemory, 'memories', 'home-city.md'),
      '---\ntype: user\npriority: high\ndescription: where I liv',
    );
    const result = await runBenchmark({
      scenarios: ['recipes-en'],
      strategies: ['file-index'],
      params: [`file-index.globalDir=${userMemory}`],
    });
    const [cell] = result.cells;
    expect(cell!.status).toBe('ok');
    expect(cell!.unreadable).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${path.join(userMemory, 'memories', 'home-city.md').replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}: .+`,
          'u',
        ),
      ),
    ]);
    const verdict = cellVerdict(cell!);
    expect(verdictFails(verdict)).toBe(true);
    expect(verdict.failures[0]).toMatch(
      /^the strategy could not read 1 stored item\(s\) and left them out: .*home-city\.md: /u,
    );
    expect(renderMarkdown(result)).toMatch(
      /- unreadable: recipes-en\/file-index\(.*\): the strategy could not read 1 stored item\(s\) and left them out: .*home-city\.md/u,
    );
  });

  it('rejects unknown strategies and scenarios with the built-in names', async () => {
    await expect(runBenchmark({ strategies: ['nope'] })).rejects.toThrow(
      /unknown strategy "nope": built-ins are buffer, window, /u,
    );
    await expect(runBenchmark({ scenarios: ['nope'] })).rejects.toThrow(/unknown scenario "nope"/u);
  });

  it('records a strategy that throws as a failed cell instead of crashing the run', async () => {
    const broken = defineStrategy({
      name: 'broken',
      description: 'throws on load',
      options: z.object({}),
      defaultDurability: 'none',
      create: () => ({
        capabilities: { persistent: false, explicitMemory: false, backgroundWork: false },
        open: async () => undefined,
        save: async () => undefined,
        load: async () => {
          throw new Error('disk on fire');
        },
        close: async () => undefined,
      }),
    });
    const scenario = await loadScenarioFile(await scenarioFile('name: z\nsteps:\n  - user: hi\n'));
    const result = await runCell(
      {
        id: 'z/broken',
        scenario,
        strategy: { name: 'broken', source: 'broken', options: {}, durability: 'none', setting: 'broken' },
        definition: broken,
        idempotencyKeys: true,
        trial: 0,
        seed: 1,
      },
      offlineProviders(),
    );
    expect(result).toMatchObject({ status: 'error', error: 'disk on fire' });
    expect(Object.keys(result)).not.toContain('recall');
  });

  it('carries state across a session boundary only through what the strategy persisted', async () => {
    const file = await scenarioFile(
      'name: s\nsteps:\n  - user: My locker code is 4711.\n    assistant: Noted.\n  - session: new\n  - user: hello\n    assistant: hi\n  - probe: What is my locker code?\n    expect: ["4711"]\n',
    );
    const result = allOk(
      await runBenchmark({
        scenarios: [file],
        strategies: ['buffer'],
        params: ['buffer.durability=sync,exit,none'],
      }),
    );
    expect(result.cells.map((cell) => [cell.setting, cell.recall.contextRecall.hits])).toEqual([
      ['buffer', 1],
      ['buffer(durability=exit)', 1],
      ['buffer(durability=none)', 0],
    ]);
  });
});

describe('durability-mode pricing', () => {
  it('the default run replays remember-then-crash in every strategy’s other modes; naming scenarios turns it off', async () => {
    const { plans } = await plannedCells({ strategies: ['buffer', 'window'] });
    const priced = plans.filter((plan) => plan.pricing);
    expect(new Set(priced.map((plan) => plan.scenario.name))).toEqual(new Set(['remember-then-crash']));
    expect(priced.map((plan) => `${plan.strategy.name}:${plan.strategy.durability}`).sort()).toEqual([
      'buffer:async',
      'buffer:exit',
      'buffer:none',
      'window:async',
      'window:exit',
      'window:none',
    ]);
    expect(plans.filter((plan) => !plan.pricing).every((plan) => plan.strategy.durability === 'sync')).toBe(true);
    expect(
      (await plannedCells({ strategies: ['buffer'], scenarios: ['remember-then-crash'] })).plans.some(
        (plan) => plan.pricing,
      ),
    ).toBe(false);
    const chosen = await plannedCells({
      strategies: ['buffer'],
      scenarios: ['recipes-en'],
      priceDurability: ['recipes-en'],
    });
    expect(chosen.plans.filter((plan) => plan.pricing).map((plan) => plan.strategy.setting)).toEqual([
      'buffer(durability=async)',
      'buffer(durability=exit)',
      'buffer(durability=none)',
    ]);
  });
});
