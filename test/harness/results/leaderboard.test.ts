/** The leaderboard and its recommendations, on the committed results fixture (buffer and window k=2,4). */
import { describe, expect, it } from 'vitest';
import { leaderboard, RECALL_FLOOR, TOKEN_BUDGET } from '../../../harness/results/leaderboard.js';
import { distanceBucket, recallByDistance } from '../../../harness/results/by-distance.js';
import { cellOf, durability, smallRun } from '../../reports/fixture.js';
import { leaderboardCells, versusBest } from '../../../reports/verdict.js';

describe('leaderboard', () => {
  it('pools each setting over the run, best first, with intervals and a paired comparison against the best', () => {
    const result = smallRun();
    const board = leaderboard(result.cells, result.header.seed);
    expect(board.rows.map((row) => row.setting)).toEqual(['buffer', 'window(k=4)', 'window(k=2)']);
    const [buffer, , window] = board.rows;
    const probes = result.cells
      .filter((cell) => cell.setting === 'buffer')
      .reduce((sum, cell) => sum + cell.recall.contextRecall.n, 0);
    expect(buffer!.contextRecall.n).toBe(probes);
    expect(buffer!.contextRecall.interval!.hi).toBe(1);
    expect(buffer!.vsBest).toBeUndefined();
    expect(window!.vsBest).toMatchObject({ n: probes, verdict: 'behind' });
    expect(window!.contextPerTurn).toBeLessThan(buffer!.contextPerTurn / 3);
    expect(board.best).toBe('buffer');
  });

  it('calls no setting "best" in a run without probes: vs best says nothing was measured', () => {
    const result = smallRun();
    const cells = result.cells.map((cell) => ({ ...cell, probes: [] }));
    const board = leaderboard(cells, result.header.seed);
    expect(board.rows.map((row) => row.contextRecall.value)).toEqual([null, null, null]);
    expect(board.rows.map(versusBest)).toEqual(['–', '–', '–']);
    expect(leaderboard(result.cells, result.header.seed).rows.map(versusBest)[0]).toBe('best');
  });

  it('recommends the cheapest setting within noise of the best, and the best under the token budget', () => {
    const result = smallRun();
    const board = leaderboard(result.cells, result.header.seed);
    const cheapest = board.recommendations.find((item) => item.kind === 'cheapest-within-noise')!;
    const affordable = board.rows.filter((row) => row.contextPerTurn <= TOKEN_BUDGET);
    expect(cheapest.text).toMatch(
      /^buffer recalls best, 1\.00 \[0\.80, 1\.00\] \(n=15\), and nothing within noise of it is cheaper \(700 tokens\/turn\)\.$/u,
    );
    expect(board.recommendations.find((item) => item.kind === 'best-under-budget')!.text).toContain(
      affordable[0]?.setting ?? 'No setting',
    );
  });

  it('prices nothing when no turn recorded its context tokens (ranking-only --protocol cells): no "0 tokens/turn"', () => {
    const result = smallRun();
    const cells = result.cells.map((cell) => ({
      ...cell,
      turns: cell.turns.map((turn) => ({ ...turn, contextTokens: null })),
    }));
    const board = leaderboard(cells, result.header.seed);
    expect(board.rows.map((row) => row.contextMeasured)).toEqual([false, false, false]);
    expect(leaderboardCells(board).map((row) => row[2])).toEqual(['–', '–', '–']);
    expect(board.recommendations.map((item) => item.text)).toEqual([
      'buffer recalls best, 1.00 [0.80, 1.00] (n=15) (context tokens not measured: no cost to compare).',
    ]);
    expect(leaderboard(result.cells, result.header.seed).rows.map((row) => row.contextMeasured)).toEqual([
      true,
      true,
      true,
    ]);
  });

  it('recommends nothing under the token budget when the best setting there recalls less than the floor', () => {
    const result = smallRun();
    // Without window(k=4), only window(k=2) (0.13) stays under the budget.
    const cells = result.cells.filter((cell) => cell.setting !== 'window(k=4)');
    const board = leaderboard(cells, result.header.seed);
    const cheap = board.rows.find((row) => row.setting === 'window(k=2)')!;
    expect(cheap.contextPerTurn).toBeLessThanOrEqual(TOKEN_BUDGET);
    expect(cheap.contextRecall.value!).toBeLessThan(RECALL_FLOOR);
    expect(board.recommendations.find((item) => item.kind === 'best-under-budget')!.text).toBe(
      'No setting under 500 context tokens per turn recalls 0.50 or more (the best there: window(k=2), 0.13).',
    );
  });

  it('says in one sentence which modes lost nothing and in how many strategies the others lost, the pairs in its detail', () => {
    const result = smallRun();
    const withFaults = (id: string, mode: string, lost: number): void => {
      const faults = durability(2, { '1': [2, lost] }) as { counts: Record<string, number> };
      faults.counts = { acknowledgedLost: lost, messagesLost: 0, lostUpdates: 0, compressedAway: 0 };
      Object.assign(cellOf(result, id), { durability: mode, durabilityOutcome: faults });
    };
    withFaults('recipes-zh/window(k=2)', 'none', 1);
    const lost = (): { text: string; detail?: string } =>
      leaderboard(result.cells, 1).recommendations.find((item) => item.kind === 'loses-acknowledged')!;
    expect(lost().text).toBe(
      'Every mode lost something: none lost acknowledged memories or messages in 1 of 1 strategy.',
    );
    expect(lost().detail).toContain('window(k=2) in none mode (1 memories, 0 messages over 2 crashes)');
    withFaults('recipes-zh/buffer', 'sync', 0);
    withFaults('recipes-zh/window(k=4)', 'none', 2);
    expect(lost().text).toBe(
      'Only sync lost nothing: none lost acknowledged memories or messages in 2 of 2 strategies.',
    );
    withFaults('preference-corrections/buffer', 'async', 3);
    expect(lost().text).toBe(
      'Only sync lost nothing: async and none lost acknowledged memories or messages in 1 / 2 strategies.',
    );
  });

  it('tabulates recall by distance with power-of-two buckets', () => {
    const rows = recallByDistance(smallRun().cells, 'exchanges');
    expect(rows.every((row) => row.bucket.hi === 1 || row.bucket.lo === row.bucket.hi / 2 + 1)).toBe(true);
    const window = rows.filter((row) => row.setting === 'window(k=2)');
    expect(window.find((row) => row.bucket.hi === 1 || row.bucket.hi === 2)?.contextRecall.value).toBe(1);
    expect(window.at(-1)!.contextRecall.value!).toBeLessThan(0.5);
  });

  it('buckets finely for charts: each distance up to 32, then four buckets per doubling', () => {
    expect([1, 2, 3, 17, 32].map((value) => distanceBucket(value, 'fine').label)).toEqual(['≤1', '2', '3', '17', '32']);
    expect([33, 40, 41, 64, 65, 96, 97, 256].map((value) => distanceBucket(value, 'fine').label)).toEqual([
      '33–40',
      '33–40',
      '41–48',
      '57–64',
      '65–80',
      '81–96',
      '97–112',
      '225–256',
    ]);
    expect(distanceBucket(17).label).toBe('17–32');
  });
});
