/**
 * A dataset's questions are shelved on disk as they are imported (harness/run/scenario-shelf.ts):
 * the plan keeps stand-ins, a cell gets its question back whole (in this process, or as bytes in a
 * pool worker), and the shelf goes with the run, whether it ends, fails to plan or is interrupted.
 */
import { readdirSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { importDataset } from '../../../harness/scenarios/importers/index.js';
import { loadedCell, planRun, runBenchmark, type ProgressEvent } from '../../../harness/run/runner.js';
import { SHELVED_FILE_STEPS } from '../../../harness/run/plan.js';
import { tempDir } from '../../helpers/temp-dir.js';
import { isShelved } from '../../../harness/run/scenario-shelf.js';
import { allOk } from '../../helpers/cells.js';

const LONGMEMEVAL = 'longmemeval:fixtures/datasets/longmemeval-sample.json';
const LOCOMO = 'locomo:fixtures/datasets/locomo10-sample.json';

/** This process's run temp dirs (a shelf lives in one). */
const runDirs = (): string[] =>
  readdirSync(os.tmpdir()).filter((name) => name.startsWith(`membench-run-${process.pid}-`));

describe('the scenario shelf', () => {
  it('plans stand-ins for the imported questions; each cell loads its question as the import made it', async () => {
    const imported = (await importDataset(LONGMEMEVAL)).scenarios;
    const { plans, scenarios, shelf } = await planRun({ datasets: [LONGMEMEVAL], strategies: ['bm25', 'buffer'] });
    try {
      expect(shelf).toBeDefined();
      expect(runDirs()).toHaveLength(1);
      expect(scenarios.every(isShelved)).toBe(true);
      expect(scenarios.map((scenario) => scenario.name)).toEqual(imported.map((scenario) => scenario.name));
      // Both strategies' cells of a question share its stand-in (the pool sends a question once per worker).
      expect(new Set(plans.map((plan) => plan.scenario)).size).toBe(imported.length);
      for (const plan of plans) {
        const { scenario } = loadedCell(plan);
        expect(scenario).toEqual(imported.find((item) => item.name === scenario.name));
        expect(isShelved(plan.scenario) && plan.scenario.stepCount).toBe(scenario.steps.length);
      }
    } finally {
      await shelf?.close();
    }
    expect(runDirs()).toEqual([]);
  });

  it('keeps its exit hook until its dir is gone (a second Ctrl-C may exit while it is being removed)', async () => {
    const before = process.listenerCount('exit');
    const { shelf } = await planRun({ datasets: [LONGMEMEVAL], strategies: ['bm25'] });
    expect(process.listenerCount('exit')).toBe(before + 1);
    const closing = shelf!.close();
    expect(process.listenerCount('exit')).toBe(before + 1);
    await closing;
    expect(process.listenerCount('exit')).toBe(before);
    expect(runDirs()).toEqual([]);
  });

  it('keeps the built-in and file scenarios of the same run in memory', async () => {
    const { scenarios, shelf } = await planRun({
      datasets: [LONGMEMEVAL],
      scenarios: ['recipes-en'],
      strategies: ['buffer'],
    });
    await shelf?.close();
    expect(scenarios.map((scenario) => [scenario.name, isShelved(scenario)])[0]).toEqual(['recipes-en', false]);
    expect(scenarios.slice(1).every(isShelved)).toBe(true);
  });

  it('shelves a scenario file of more than SHELVED_FILE_STEPS steps as it is loaded, and runs it as any other', async () => {
    const dir = await tempDir('membench-shelf-files-');
    const long = path.join(dir, 'long.yaml');
    const steps = Array.from({ length: SHELVED_FILE_STEPS }, (_, i) => `  - user: "note ${i}: the weather is mild"`);
    await writeFile(
      long,
      `name: long-file\nsteps:\n  - user: My locker code is 4711.\n${steps.join('\n')}\n  - probe: What is my locker code?\n    expect: ["4711"]\n`,
    );
    const { scenarios, shelf } = await planRun({ scenarios: [long, 'recipes-en'], strategies: ['bm25'] });
    await shelf?.close();
    expect(scenarios.map((scenario) => [scenario.name, isShelved(scenario)])).toEqual([
      ['long-file', true],
      ['recipes-en', false],
    ]);
    const result = allOk(await runBenchmark({ scenarios: [long], strategies: ['bm25'] }));
    expect(result.header.scenarios[0]?.steps).toBe(SHELVED_FILE_STEPS + 2);
    expect(result.cells[0]!.recall.contextRecall.hits).toBe(1);
    expect(runDirs()).toEqual([]);
  });

  it('contrasts idempotency keys only for a scenario whose tool steps have an effect, in memory or shelved', async () => {
    const dir = await tempDir('membench-shelf-effects-');
    const file = async (name: string, effect: boolean, filler: number): Promise<string> => {
      const steps = Array.from({ length: filler }, (_, i) => `  - user: "note ${i}"`);
      const at = path.join(dir, `${name}.yaml`);
      await writeFile(
        at,
        `name: ${name}\nsteps:\n${[...steps, '  - user: Order the box.', '  - crash: after_tool_effect', '  - tool: place_order', '    result: { status: placed }', `    effect: ${effect}`, '  - probe: Was it ordered?', '    expect: [placed]'].join('\n')}\n`,
      );
      return at;
    };
    const files = [
      await file('small-effect', true, 1),
      await file('small-no-effect', false, 1),
      await file('long-effect', true, SHELVED_FILE_STEPS),
      await file('long-no-effect', false, SHELVED_FILE_STEPS),
    ];
    const { plans, scenarios, shelf } = await planRun({ scenarios: files, strategies: ['buffer'] });
    await shelf?.close();
    expect(scenarios.map(isShelved)).toEqual([false, false, true, true]);
    expect(plans.filter((plan) => !plan.idempotencyKeys).map((plan) => plan.scenario.name)).toEqual([
      'small-effect',
      'long-effect',
    ]);
  });

  it('a plan that fails after the import removes its shelf', async () => {
    await expect(
      planRun({ datasets: [LONGMEMEVAL], questions: ['no-such-question'], strategies: ['bm25'] }),
    ).rejects.toThrow(/--question no-such-question: no such question/u);
    await expect(
      planRun({ datasets: [LONGMEMEVAL], strategies: ['bm25'], priceDurability: ['nowhere'] }),
    ).rejects.toThrow(/--price-durability nowhere: not among the run's scenarios/u);
    expect(runDirs()).toEqual([]);
  });

  it('runs the same cells in this process and in a pool of workers, which are sent the bytes', async () => {
    const options = { datasets: [LOCOMO], protocol: 'locomo' as const, strategies: ['bm25'], datasetLimit: 1 };
    const inline = allOk(await runBenchmark(options));
    const pooled = allOk(await runBenchmark({ ...options, workers: 2 }));
    expect(inline.cells.length).toBeGreaterThan(1);
    const figures = (cells: typeof inline.cells) =>
      cells.map((cell) => [
        cell.id,
        cell.recall,
        cell.probes.map((probe) => [probe.retrieved, probe.protocolRetrieval]),
      ]);
    expect(figures(pooled.cells)).toEqual(figures(inline.cells));
    expect(runDirs()).toEqual([]);
  });

  it("tells the import's progress, bytes read up to the file's size, before the cells start", async () => {
    const events: ProgressEvent[] = [];
    allOk(
      await runBenchmark({
        datasets: [LONGMEMEVAL],
        strategies: ['bm25'],
        datasetLimit: 1,
        onProgress: (event) => events.push(event),
      }),
    );
    const reads = events.flatMap((event) => (event.type === 'import' ? [event] : []));
    expect(reads.length).toBeGreaterThan(0);
    expect(events.slice(0, reads.length)).toEqual(reads);
    expect(reads.every((event) => event.dataset === LONGMEMEVAL)).toBe(true);
    expect(reads.map((event) => event.total)).toEqual(reads.map(() => statSync(LONGMEMEVAL.slice(12)).size));
    expect(reads.at(-1)!.read).toBeLessThanOrEqual(reads.at(-1)!.total);
    expect(events[reads.length]?.type).toBe('start');
  });

  it('Ctrl-C during the import stops the import (no cell starts) and removes the shelf', async () => {
    const controller = new AbortController();
    const events: ProgressEvent['type'][] = [];
    const run = runBenchmark({
      datasets: [LONGMEMEVAL],
      strategies: ['bm25'],
      signal: controller.signal,
      onProgress: (event) => {
        events.push(event.type);
        if (event.type === 'import') controller.abort();
      },
    });
    await expect(run).rejects.toThrow('run interrupted');
    expect(events).not.toContain('start');
    expect(runDirs()).toEqual([]);
  });

  it('an interrupted run removes its shelf', async () => {
    const controller = new AbortController();
    const run = runBenchmark({
      datasets: [LONGMEMEVAL],
      strategies: ['bm25'],
      signal: controller.signal,
      onProgress: (event) => {
        if (event.type === 'cell') controller.abort();
      },
    });
    await expect(run).rejects.toThrow('run interrupted');
    expect(runDirs()).toEqual([]);
  });
});
