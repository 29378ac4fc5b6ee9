/** A run holds one array per distinct ranking entry: the cells that rank one conversation share them. */
import { describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../harness/run/runner.js';
import { shareRankings } from '../../../harness/results/shared-rankings.js';
import type { CellResult } from '../../../harness/results/schema.js';

const LOCOMO = 'locomo:fixtures/datasets/locomo10-sample.json';

/** The ranking entries of an ok cell, in order. */
function entries(cell: CellResult): string[][] {
  return cell.status === 'ok' ? cell.probes.flatMap((probe) => probe.retrieved ?? []) : [];
}

describe('shared ranking entries', () => {
  it('gives equal entries of two results one frozen array, and changes no id', () => {
    const cell = (retrieved: string[][]) => ({ status: 'ok', probes: [{ retrieved }, {}] }) as unknown as CellResult;
    const a = shareRankings(cell([['D1:3'], ['D2:1', 'D2:2'], ['D1:3']]));
    const b = shareRankings(cell([['D2:1', 'D2:2'], ['D1:3'], ['D1:32']]));
    expect(entries(a)).toEqual([['D1:3'], ['D2:1', 'D2:2'], ['D1:3']]);
    expect(entries(b)).toEqual([['D2:1', 'D2:2'], ['D1:3'], ['D1:32']]);
    expect(entries(a)[0]).toBe(entries(b)[1]);
    expect(entries(a)[0]).toBe(entries(a)[2]);
    expect(entries(a)[1]).toBe(entries(b)[0]);
    expect(Object.isFrozen(entries(b)[2])).toBe(true);
    // An entry of one id never meets an entry whose JSON reads like it.
    const c = shareRankings(cell([['["D2:1","D2:2"]']]));
    expect(entries(c)).toEqual([['["D2:1","D2:2"]']]);
  });

  it('is what the runner keeps: cells ranking one conversation, run in worker processes, share their entries', async () => {
    const result = await runBenchmark({
      strategies: ['bm25', 'vector'],
      datasets: [LOCOMO],
      protocol: 'locomo',
      questions: ['conv-a'],
      workers: 2,
    });
    const dialog = result.cells.filter((cell) => cell.scenario === 'locomo-conv-a' && cell.status === 'ok');
    expect(dialog.length).toBeGreaterThanOrEqual(2);
    const [first, second] = dialog.map(entries);
    expect(first!.length).toBeGreaterThan(0);
    const byId = new Map(first!.map((entry) => [entry.join(' '), entry]));
    const common = second!.filter((entry) => byId.has(entry.join(' ')));
    expect(common.length).toBeGreaterThan(0);
    // Each cell came over its own IPC message: equal entries are one array only if the runner shared them.
    for (const entry of common) expect(entry).toBe(byId.get(entry.join(' ')));
  });
});
