/** The small committed results fixture (buffer and window k=2,4 on recipes-zh and preference-corrections), fresh per call. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseResults } from '../../harness/results/read.js';
import type { ErrorCell, OkCell, RunResult } from '../../harness/results/schema.js';
import { ROOT } from '../cli/helpers.js';
import { allOk, ok, type OkRun } from '../helpers/cells.js';

export type { OkRun };

export const FIXTURE_FILE = path.join(ROOT, 'fixtures/results/small.json');

export function smallRun(): OkRun {
  // Read through the one results schema, so the fixture can never drift from what runs write.
  return allOk(parseResults(readFileSync(FIXTURE_FILE, 'utf8'), FIXTURE_FILE));
}

/** The fixture's cell with this id (throws when absent or errored, so a test never runs on undefined). */
export function cellOf(result: RunResult, id: string): OkCell {
  const cell = result.cells.find((item) => item.id === id);
  if (!cell) throw new Error(`fixture has no cell ${id}`);
  return ok(cell);
}

/** Makes the cell with this id an error cell in place, as a run writes one: its error and phase, no figures. */
export function failCell(result: RunResult, id: string, error: string, phase?: string): ErrorCell {
  const index = result.cells.findIndex((item) => item.id === id);
  const { scenario, group, strategy, setting, options, durability, trial, seed, durationMs, durabilityOutcome } =
    cellOf(result, id);
  const failed: ErrorCell = {
    id,
    scenario,
    ...(group !== undefined ? { group } : {}),
    strategy,
    setting,
    options,
    durability,
    trial,
    seed,
    status: 'error',
    error,
    ...(phase !== undefined ? { phase } : {}),
    ...(durabilityOutcome !== undefined ? { durabilityOutcome } : {}),
    durationMs,
  };
  result.cells[index] = failed;
  return failed;
}

/** Renames a scenario everywhere it appears (cell ids included), e.g. to exercise Chinese names. */
export function renameScenario(result: RunResult, from: string, to: string): RunResult {
  const copy = structuredClone(result);
  for (const scenario of copy.header.scenarios) if (scenario.name === from) scenario.name = to;
  for (const cell of copy.cells) {
    if (cell.scenario !== from) continue;
    cell.scenario = to;
    cell.id = `${to}${cell.id.slice(from.length)}`;
  }
  return copy;
}

/** A `faults` object shaped like the durability runner's: `reached` crashes and `[checked, violations]` per invariant. */
export function durability(reached: number, invariants: Record<string, [number, number]>): unknown {
  return {
    idempotencyKeys: true,
    crashes: Array.from({ length: reached + 1 }, (_, index) => ({
      step: index,
      point: 'mid_memory_write',
      reached: index < reached,
      signal: 'SIGKILL',
      code: null,
      source: 'scenario',
    })),
    recoveries: [],
    invariants: Object.fromEntries(
      Object.entries(invariants).map(([id, [checked, violations]]) => [
        id,
        {
          held: violations === 0,
          checked,
          violations,
          details: violations ? [`lost "peanut allergy" after crash ${id}`] : [],
        },
      ]),
    ),
    counts: {},
  };
}
