/**
 * The ranking-only cell (harness/run/rank-only.ts) gives a protocol run the full cell's rankings and
 * figures without answers, sampled contexts or durable stores: checked cell by cell against the
 * full path (`protocolFull`) on LongMemEval- and LoCoMo-shaped files, with every strategy that ranks.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeSyntheticLongMemEval } from '../../../harness/bench/synthetic-longmemeval.js';
import { OfflineModel, type ChatModel } from '../../../harness/models/index.js';
import type { Protocol } from '../../../harness/results/protocols.js';
import { PROTOCOL_K } from '../../../harness/results/protocols.js';
import type { CellResult, OkCell } from '../../../harness/results/schema.js';
import type { Providers } from '../../../harness/run/cell.js';
import { runCell } from '../../../harness/run/runner.js';
import { rankingOnlyNote } from '../../../reports/summary.js';
import { ok } from '../../helpers/cells.js';
import { offlineProviders } from '../../helpers/offline-providers.js';
import { plannedCells } from '../../helpers/planned.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SAMPLES = path.join(ROOT, 'fixtures/datasets');

/** The offline model, counting the calls that reach it. */
class CountingModel extends OfflineModel {
  calls = 0;
  override chat(...args: Parameters<ChatModel['chat']>): ReturnType<ChatModel['chat']> {
    this.calls++;
    return super.chat(...args);
  }
}

function providers(protocol: Protocol, model: ChatModel, more: Partial<Providers> = {}): Providers {
  return {
    ...offlineProviders(),
    model,
    modelFor: () => model,
    protocol,
    retrievalK: PROTOCOL_K[protocol],
    ...more,
  };
}

/** What a protocol run reports of a cell: its rankings and every retrieval figure scored on them. */
function rankings(result: CellResult): unknown {
  const cell = ok(result);
  return {
    id: cell.id,
    status: cell.status,
    retrieval: cell.retrieval,
    protocolRetrieval: cell.protocolRetrieval,
    probes: cell.probes.map((probe) => [probe.step, probe.retrieved, probe.retrieval, probe.protocolRetrieval]),
  };
}

/** Runs every planned cell both ways; returns the pairs and how many model calls each path made. */
async function bothPaths(
  dataset: string,
  protocol: Protocol,
  strategies: string[],
): Promise<{ fast: OkCell[]; full: OkCell[]; fastCalls: number; fullCalls: number }> {
  const { plans } = await plannedCells({ datasets: [dataset], datasetLimit: 6, protocol, strategies });
  const fastModel = new CountingModel();
  const fullModel = new CountingModel();
  const fast: OkCell[] = [];
  const full: OkCell[] = [];
  for (const plan of plans) {
    fast.push(ok(await runCell(plan, providers(protocol, fastModel))));
    full.push(ok(await runCell(plan, providers(protocol, fullModel, { protocolFull: true }))));
  }
  return { fast, full, fastCalls: fastModel.calls, fullCalls: fullModel.calls };
}

describe('ranking-only protocol cells', () => {
  let dir: string;
  let synthetic: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-rank-only-'));
    synthetic = path.join(dir, 'longmemeval-synthetic.json');
    await writeSyntheticLongMemEval(synthetic, { questions: 4, sessions: [4, 6], messages: [4, 8], seed: 7 });
  });
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  const RANKERS = ['bm25', 'vector', 'hybrid'];
  const SAMPLE = `longmemeval:${path.join(SAMPLES, 'longmemeval-sample.json')}`;
  /** The LongMemEval sample's cells both ways, run once: the first test compares them, the second reads what they skipped. */
  let sample: ReturnType<typeof bothPaths> | undefined;
  const sampleBothPaths = (): ReturnType<typeof bothPaths> => (sample ??= bothPaths(SAMPLE, 'longmemeval', RANKERS));

  it.each([
    ['a LongMemEval sample', () => SAMPLE, 'longmemeval'],
    ['a synthetic LongMemEval_S-shaped file', () => `longmemeval:${synthetic}`, 'longmemeval'],
    ['a LoCoMo sample', () => `locomo:${path.join(SAMPLES, 'locomo10-sample.json')}`, 'locomo'],
  ] as const)('rank %s as the full cells do, with no model call', async (_, dataset, protocol) => {
    const { fast, full, fastCalls, fullCalls } =
      dataset() === SAMPLE ? await sampleBothPaths() : await bothPaths(dataset(), protocol, RANKERS);
    expect(fast.length).toBeGreaterThanOrEqual(4);
    expect(fast.map(rankings)).toEqual(full.map(rankings));
    // The figures compared are there: cells ok, probes with rankings, protocol figures.
    expect(fast.every((cell) => cell.status === 'ok')).toBe(true);
    const ranked = fast.flatMap((cell) => cell.probes).filter((probe) => (probe.retrieved?.length ?? 0) > 0);
    expect(ranked.length).toBeGreaterThan(fast.length / 2);
    expect(fast.filter((cell) => cell.protocolRetrieval?.summary).length).toBeGreaterThan(fast.length / 2);
    expect(fastCalls).toBe(0);
    expect(fullCalls).toBeGreaterThan(0);
  });

  it('say what they skipped and leave answer figures empty, not zero', async () => {
    const { fast, full } = await sampleBothPaths();
    for (const cell of fast) {
      expect(cell.skipped).toEqual(['answers', 'turns', 'durability', 'distance', 'context figures']);
      expect(cell.recall.answerAccuracy).toEqual({ n: 0, hits: 0, value: null });
      expect(cell.recall.abstention).toEqual({ n: 0, hits: 0, value: null });
      expect(cell.recall.answerF1.mean).toBeNull();
      expect(cell.usage.answerTokens).toBe(0);
      for (const probe of cell.probes) {
        expect(probe).not.toHaveProperty('answer');
        expect(probe).not.toHaveProperty('answerCorrect');
        expect(probe).not.toHaveProperty('distance');
        // No context figures: the loaded context is neither counted in tokens nor segmented.
        expect(probe).not.toHaveProperty('contextTokens');
        expect(probe).not.toHaveProperty('answerRecall');
        expect(probe).not.toHaveProperty('evidenceCoverage');
      }
      // Pooled, they are empty (n 0), not zero.
      expect(cell.recall.answerRecall).toEqual({ n: 0, mean: null });
      expect(cell.recall.evidenceCoverage).toEqual({ n: 0, mean: null });
      // No turn recorded: no context tokens, no save latency.
      expect(cell.turns).toEqual([]);
      expect(cell.latency.saveMs.n).toBe(0);
    }
    // The reports say it under their tables; a run of full cells says nothing of the kind.
    expect(rankingOnlyNote(fast)).toMatch(
      /^Every cell ranked only .*answers not generated.*durability not exercised.*context figures not measured/u,
    );
    // The full cells measured them, and the figures a ranking-only cell keeps from its context are theirs.
    const fullProbes = full.flatMap((cell) => cell.probes);
    expect(fullProbes.every((probe) => typeof probe.contextTokens === 'number' && probe.contextTokens > 0)).toBe(true);
    expect(fullProbes.filter((probe) => typeof probe.answerRecall === 'number').length).toBeGreaterThan(0);
    expect(fullProbes.filter((probe) => typeof probe.evidenceCoverage === 'number').length).toBeGreaterThan(0);
    const kept = (cells: OkCell[]): unknown =>
      cells.flatMap((cell) =>
        cell.probes.map((probe) => [probe.contextRecall, probe.evidenceRecall, probe.staleExposure]),
      );
    expect(kept(fast)).toEqual(kept(full));
    expect(rankingOnlyNote([...fast, ...full])).toMatch(/^\d+ of \d+ cells ranked only/u);
    expect(rankingOnlyNote(full)).toBeUndefined();
    expect(full.every((cell) => cell.skipped === undefined)).toBe(true);
    expect(full.reduce((sum, cell) => sum + cell.recall.answerAccuracy.n + cell.recall.abstention.n, 0)).toBe(
      full.reduce((sum, cell) => sum + cell.probes.length, 0),
    );
  });

  it('write nothing to disk: the strategy dir of a ranking-only cell stays empty', async () => {
    const fastRoot = await mkdtemp(path.join(dir, 'fast-'));
    const fullRoot = await mkdtemp(path.join(dir, 'full-'));
    const { plans } = await plannedCells({
      datasets: [SAMPLE],
      datasetLimit: 1,
      protocol: 'longmemeval',
      strategies: ['bm25'],
      params: ['bm25.unit=turn', 'bm25.ranker=fts5'],
    });
    const model = new CountingModel();
    await runCell(plans[0]!, providers('longmemeval', model, { keepCellDirs: true, tempRoot: fastRoot }));
    await runCell(
      plans[0]!,
      providers('longmemeval', model, { keepCellDirs: true, tempRoot: fullRoot, protocolFull: true }),
    );
    const files = async (root: string): Promise<string[]> =>
      (await readdir(root, { recursive: true }))
        .filter((name) => name.endsWith('.sqlite'))
        .map((name) => path.basename(name))
        .sort();
    // Only the full cell opened store files (the strategy's, the ledger): the ranking-only one opened none.
    expect(await files(fullRoot)).toEqual(['bm25.sqlite', 'ledger.sqlite']);
    expect(await files(fastRoot)).toEqual([]);
  });

  it('share one dir in a process while each leaves it as it made it; one that leaves a file gets its dir removed', async () => {
    const root = await mkdtemp(path.join(dir, 'scratch-'));
    const { plans } = await plannedCells({
      datasets: [SAMPLE],
      datasetLimit: 2,
      protocol: 'longmemeval',
      strategies: ['bm25'],
    });
    expect(plans.length).toBeGreaterThanOrEqual(4);
    const settings = providers('longmemeval', new CountingModel(), { keepCellDirs: false, tempRoot: root });
    const held = new Set<string>();
    for (const plan of plans.slice(0, 3)) {
      ok(await runCell(plan, settings));
      const names = await readdir(root);
      expect(names).toHaveLength(1);
      held.add(names[0]!);
    }
    const [first] = held;
    expect([...held]).toEqual([expect.stringMatching(/^ranking-only-/u)]);
    expect(await readdir(path.join(root, first!), { recursive: true })).toEqual(['strategy']);
    // A strategy that writes in mode `none` after all: its dir is not handed to the next cell.
    ok(
      await runCell(plans[3]!, settings, (phase) => {
        if (phase === 'close') writeFileSync(path.join(root, first!, 'strategy', 'left-behind'), 'x');
      }),
    );
    expect(await readdir(root)).toEqual([]);
    ok(await runCell(plans[0]!, settings));
    const [fresh, ...more] = await readdir(root);
    expect(more).toEqual([]);
    expect(fresh).not.toBe(first);
    expect(await readdir(path.join(root, fresh!), { recursive: true })).toEqual(['strategy']);
  });

  it('take only strategies that rank: buffer under a protocol, or --protocol-full, runs the full cell', async () => {
    const dataset = `longmemeval:${path.join(SAMPLES, 'longmemeval-sample.json')}`;
    const { plans } = await plannedCells({
      datasets: [dataset],
      datasetLimit: 1,
      protocol: 'longmemeval',
      strategies: ['buffer'],
    });
    const model = new CountingModel();
    const buffer = ok(await runCell(plans[0]!, providers('longmemeval', model)));
    expect(buffer.skipped).toBeUndefined();
    expect(model.calls).toBeGreaterThan(0);
    const { plans: bm25 } = await plannedCells({
      datasets: [dataset],
      datasetLimit: 1,
      protocol: 'longmemeval',
      strategies: ['bm25'],
    });
    const forced = ok(await runCell(bm25[0]!, providers('longmemeval', model, { protocolFull: true })));
    expect(forced.skipped).toBeUndefined();
    // Without a protocol no cell is ranking-only.
    const plain = ok(await runCell(bm25[0]!, { ...offlineProviders(), modelFor: () => model }));
    expect(plain.skipped).toBeUndefined();
  });
});
