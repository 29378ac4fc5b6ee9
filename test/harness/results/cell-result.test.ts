/** A cell's result pooled from its replay's records: recall and retrieval from the probe records, tokens and latency from the turns. */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { emptyUsage } from '../../../harness/models/index.js';
import { emptyPhases } from '../../../harness/results/schema.js';
import { type CellRecords, cellResult, errorCell, type PooledCell } from '../../../harness/results/cell-result.js';
import { ProbeScoring } from '../../../harness/results/probe-record.js';
import { cellResultSchema, type TurnRecord } from '../../../harness/results/schema.js';
import type { ProbeStep, Step } from '../../../harness/scenarios/format.js';
import { ok } from '../../helpers/cells.js';

const probe: ProbeStep = {
  kind: 'probe',
  probe: 'What is my locker code?',
  expect: ['4172'],
  forbid: [],
  category: 'extraction',
  evidence: ['u1'],
};
const missed: ProbeStep = { ...probe, probe: 'Which locker is mine?', expect: ['locker 12'], evidence: ['u2'] };
const steps: Step[] = [
  { kind: 'user', id: 'u1', user: 'My locker code is 4172.', assistant: 'Noted.' },
  { kind: 'user', id: 'u2', user: 'Mine is locker 12.', assistant: 'Got it.' },
  probe,
  missed,
];
const cell: PooledCell = {
  id: 'c1',
  scenario: { name: 'lockers', steps },
  strategy: { name: 'vector', setting: 'vector', options: { k: 1 }, durability: 'sync' },
  trial: 0,
  seed: 7,
};

describe('cellResult', () => {
  const tokens = new TokenCounter('gpt-4o-mini');
  const scoring = new ProbeScoring({ steps, retrievalK: [1] }, tokens);
  const context = {
    messages: [new HumanMessage('My locker code is 4172.'), new AIMessage('Noted.')],
    retrieved: [{ stepIds: ['s0'] }],
  };
  const probes = [2, 3].map((index) =>
    scoring.record({
      index,
      step: steps[index] as ProbeStep,
      turn: 2,
      context,
      loadMs: 1,
      answer: '4172',
      keepsVerbatim: true,
    }),
  );
  const turn = (contextTokens: number | null, skipped = false): TurnRecord => ({
    step: 0,
    turn: 0,
    kind: 'user',
    contextTokens,
    loadMs: contextTokens === null ? null : 1,
    saveMs: 2,
    ...(skipped ? { contextSkipped: true as const } : {}),
  });
  const records: CellRecords = {
    turns: [turn(10), turn(30), turn(null, true), turn(null, true)],
    probes,
    usage: emptyUsage(),
    modelLatencies: [],
    effects: { effects: 0, effectsDuplicated: 0, effectsRefused: 0 },
    peakRssKb: 2048,
    phases: emptyPhases(),
  };

  it('pools the probe records into recall and retrieval, and counts unmeasured turns at the sample mean', () => {
    const result = ok(cellResult(cell, records, 5));
    expect(cellResultSchema.parse(result)).toEqual(result);
    expect(result).toMatchObject({
      id: 'c1',
      scenario: 'lockers',
      strategy: 'vector',
      setting: 'vector',
      status: 'ok',
    });
    expect(result.recall.contextRecall).toEqual({ n: 2, hits: 1, value: 0.5 });
    expect(result.recallByCategory.extraction?.contextRecall.hits).toBe(1);
    expect(result.retrieval?.turn).toMatchObject({ n: 2, atK: [{ k: 1, recallAny: 0.5 }] });
    // Two turns measured (10 and 30 tokens), two skipped: 4 × 20.
    expect(result.tokens).toMatchObject({ contextTotal: 80, contextMeanPerTurn: 20, contextMax: 30 });
    expect(result.tokens.contextSample).toEqual({ measured: 2, turns: 4 });
    expect(result.peakRssMb).toBe(2);
    expect(result.phases).toBeUndefined();
  });

  it('pools only the probes that measured their context figures: a ranking-only probe is left out, not averaged as 0', () => {
    const unmeasured = new ProbeScoring({ steps, retrievalK: [1], contextFigures: false }, tokens).record({
      index: 2,
      step: probe,
      turn: 2,
      context,
      loadMs: 1,
      keepsVerbatim: true,
    });
    const measured = ok(cellResult(cell, records, 5));
    const mixed = ok(cellResult(cell, { ...records, probes: [...probes, unmeasured, unmeasured] }, 5));
    expect(measured.recall.answerRecall.n).toBe(2);
    expect(mixed.recall.answerRecall).toEqual(measured.recall.answerRecall);
    expect(mixed.recall.evidenceCoverage).toEqual(measured.recall.evidenceCoverage);
    // The figures it did measure are pooled with the others'.
    expect(mixed.recall.contextRecall.n).toBe(4);
    const none = ok(cellResult(cell, { ...records, probes: [unmeasured] }, 5));
    expect(none.recall.answerRecall).toEqual({ n: 0, mean: null });
    expect(none.recall.evidenceCoverage).toEqual({ n: 0, mean: null });
  });

  it('makes a cell that stopped on an error an error cell: its error and phases, no figure of what it recorded', () => {
    const result = cellResult(cell, { ...records, error: 'boom' }, 5, true);
    expect(cellResultSchema.parse(result)).toEqual(result);
    expect(result).toEqual({
      id: 'c1',
      scenario: 'lockers',
      strategy: 'vector',
      setting: 'vector',
      options: { k: 1 },
      durability: 'sync',
      trial: 0,
      seed: 7,
      status: 'error',
      error: 'boom',
      durationMs: 5,
      phases: emptyPhases(),
    });
  });

  it('names where a cell that never produced records stopped', () => {
    expect(errorCell(cell, 'timed out', 9, { phase: 'step 3 (probe)' })).toMatchObject({
      status: 'error',
      error: 'timed out',
      phase: 'step 3 (probe)',
      durationMs: 9,
    });
    expect(Object.keys(errorCell(cell, 'timed out', 9))).not.toContain('recall');
  });

  it("keeps a strategy's terminal escapes in its error as text: the error is printed on terminals (FAILED lines)", () => {
    const error = 'bad\u001b[31mRED\u001b]0;title\u0007 line\rover\u009b2J\ttab\nnext 中文';
    expect(errorCell(cell, error, 1).error).toBe(
      'bad\\u001b[31mRED\\u001b]0;title\\u0007 line\\u000dover\\u009b2J\ttab\nnext 中文',
    );
  });
});
