/**
 * Ids a memory cannot read: LongMemEval's answer sessions are named `answer_…`, and a
 * strategy given those ids could find the evidence without reading a word. The agent loop hands
 * strategies opaque ids (`s12`); the harness maps rankings back for the retrieval metrics.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { AgentSession } from '../../../harness/agent/loop.js';
import { OfflineModel } from '../../../harness/models/offline.js';
import { importDataset } from '../../../harness/scenarios/importers/index.js';
import { runBenchmark } from '../../../harness/run/runner.js';
import type { OkCell, RunResult } from '../../../harness/results/schema.js';
import { findStrategy, type MemoryStrategy } from '../../../strategies/index.js';
import { makeHarness } from '../../strategies/conformance.js';
import { syntheticLongMemEval } from '../../../harness/bench/synthetic-longmemeval.js';
import { ok } from '../../helpers/cells.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('ids a memory cannot read', () => {
  let file: string;
  beforeAll(async () => {
    const dir = await tempDir('membench-opaque-');
    file = path.join(dir, 'longmemeval-synthetic.json');
    await writeFile(
      file,
      JSON.stringify([
        ...syntheticLongMemEval({ questions: 20, sessions: [8, 8], messages: [6, 6], replySentences: [3, 6] }),
      ]),
    );
  });

  it('no step id a strategy receives names a session, a turn or the evidence', async () => {
    const { scenarios } = await importDataset(`longmemeval:${file}`, { limit: 3 });
    const seen: string[] = [];
    for (const scenario of scenarios) {
      const harness = await makeHarness(findStrategy('buffer')!);
      const spy = (strategy: MemoryStrategy): MemoryStrategy =>
        Object.assign(Object.create(strategy) as MemoryStrategy, {
          save: (event: Parameters<MemoryStrategy['save']>[0]) => {
            if (event.stepId !== undefined) seen.push(event.stepId);
            return strategy.save(event);
          },
        });
      const session = new AgentSession({
        model: new OfflineModel(),
        tokens: harness.tokens,
        createStrategy: () => spy(harness.create('none')),
      });
      await session.start();
      await session.run(scenario.steps);
      await session.finish();
      // The scenario itself still cites the dataset's turns.
      expect(JSON.stringify(scenario.steps)).toContain('answer_');
    }
    expect(seen.length).toBeGreaterThan(100);
    expect(seen.every((id) => /^s\d+$/u.test(id))).toBe(true);
  });

  describe('a strategy ranking by "answer" in its ids', () => {
    let result: RunResult;
    const cell = (rank: string, scenario: string): OkCell =>
      ok(result.cells.find((item) => item.options.rank === rank && item.scenario === scenario));

    beforeAll(async () => {
      result = await runBenchmark({
        datasets: [`longmemeval:${file}`],
        strategies: ['./fixtures/strategies/answer-peeker.mjs'],
        params: ['answer-peeker.rank=peek,newest'],
        retrievalK: [1, 3],
      });
    });

    it('scores exactly what ranking newest first scores, well below a perfect ranking', () => {
      const scenarios = [...new Set(result.cells.map((item) => item.scenario))];
      expect(scenarios.length).toBe(20);
      let hits = 0;
      let probes = 0;
      for (const scenario of scenarios) {
        const peek = cell('peek', scenario);
        expect(peek.retrieval, scenario).toEqual(cell('newest', scenario).retrieval);
        expect(peek.recall.evidenceRecall, scenario).toEqual(cell('newest', scenario).recall.evidenceRecall);
        if (peek.retrieval) {
          probes += peek.retrieval.turn.n;
          hits += peek.retrieval.turn.n * peek.retrieval.turn.atK[0]!.recallAny;
        }
      }
      expect(probes).toBeGreaterThan(10);
      // Given the dataset's ids, the answer session's turns would rank first: recall_any@1 = 1.
      expect(hits / probes).toBeLessThan(0.5);
    });
  });
});
