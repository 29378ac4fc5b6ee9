/** A run holds one array per distinct ranking entry: the cells that rank one conversation share them. */
import { beforeAll, describe, expect, it } from 'vitest';
import { runBenchmark } from '../../../harness/run/runner.js';
import { parseResults } from '../../../harness/results/read.js';
import { shareRankings } from '../../../harness/results/shared-rankings.js';
import type { CellResult, RunResult } from '../../../harness/results/schema.js';
import { renderJson } from '../../../reports/index.js';

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

  let result: RunResult;
  beforeAll(async () => {
    result = await runBenchmark({
      strategies: ['bm25', 'vector'],
      datasets: [LOCOMO],
      protocol: 'locomo',
      questions: ['conv-a'],
      workers: 2,
    });
  });

  it('is what the runner keeps: cells ranking one conversation, run in worker processes, share their entries', () => {
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

  it('is what a run read back holds: the same rankings, shared', () => {
    const text = renderJson(result);
    const read = parseResults(text, 'results.json');
    expect(read.cells.map(entries)).toEqual(result.cells.map(entries));
    const [first, second] = read.cells.filter((cell) => cell.scenario === 'locomo-conv-a').map(entries);
    const byId = new Map(first!.map((entry) => [entry.join(' '), entry]));
    const common = second!.filter((entry) => byId.has(entry.join(' ')));
    expect(common.length).toBeGreaterThan(0);
    for (const entry of common) expect(entry).toBe(byId.get(entry.join(' ')));
    // Re-rendered, the file is the same bytes: the rankings went back where they were.
    expect(renderJson(read)).toBe(text);
  });

  it('leaves a malformed ranking to the schema, which refuses it naming where it is', () => {
    const data = JSON.parse(renderJson(result)) as { cells: { id: string; probes?: { retrieved?: unknown[] }[] }[] };
    const cell = data.cells.findIndex((item) => item.probes?.some((probe) => (probe.retrieved?.length ?? 0) > 1));
    const probe = data.cells[cell]!.probes!.findIndex((item) => (item.retrieved?.length ?? 0) > 1);
    data.cells[cell]!.probes![probe]!.retrieved![1] = ['D1:1', 7];
    expect(() => parseResults(JSON.stringify(data), 'bad.json')).toThrow(
      expect.objectContaining({
        message: expect.stringContaining('bad.json: not a valid membench results file'),
        details: [
          `  cells[${cell}] (id "${data.cells[cell]!.id}").probes.${probe}.retrieved.1.1: Invalid input: expected string, received number`,
        ],
      }),
    );
    data.cells[cell]!.probes![probe]!.retrieved = 'D1:1' as unknown as unknown[];
    expect(() => parseResults(JSON.stringify(data), 'bad.json')).toThrow(
      expect.objectContaining({
        details: [
          `  cells[${cell}] (id "${data.cells[cell]!.id}").probes.${probe}.retrieved: Invalid input: expected array, received string`,
        ],
      }),
    );
  });
});
