/**
 * The durability matrix (strategy × durability mode × crash point) and the price of each mode
 * (save latency beside its losses), derived from the cells that ran with faults.
 */
import { distribution } from '../core/metrics.js';
import type { DurabilityCounts } from '../process/crashes.js';
import type { CellResult } from './schema.js';
import type { CrashPoint } from '../scenarios/format.js';
import type { DurabilityMode } from '../../strategies/types.js';

export interface MatrixRow {
  strategy: string;
  durability: DurabilityMode;
  idempotencyKeys: boolean;
  point: CrashPoint;
  /** Crashes armed at this point, and how many the process actually reached. */
  armed: number;
  reached: number;
  acknowledgedLost: number;
  messagesLost: number;
  effectsDuplicated: number;
  toolsMisclassified: number;
  tornFiles: number;
  indexMismatches: number;
}

export interface ModePrice {
  strategy: string;
  durability: DurabilityMode;
  idempotencyKeys: boolean;
  /** Save latency per turn, over every cell of the strategy in this mode. */
  saveP50: number;
  saveP95: number;
  cells: number;
  crashes: number;
  /** Losses summed over those cells. */
  losses: Pick<DurabilityCounts, 'acknowledgedLost' | 'messagesLost' | 'effectsDuplicated' | 'lostUpdates' | 'tornFiles' | 'indexMismatches' | 'pendingJobsLost' | 'staleOverwrites'>;
  /** Invariant violations, by invariant id. */
  violations: Record<string, number>;
}

export function durabilityMatrix(cells: readonly CellResult[]): MatrixRow[] {
  const rows = new Map<string, MatrixRow>();
  for (const cell of cells) {
    if (!cell.faults) continue;
    for (const crash of cell.faults.crashes) {
      const key = [cell.strategy, cell.durability, cell.faults.idempotencyKeys, crash.point].join('|');
      const row = rows.get(key) ?? {
        strategy: cell.strategy, durability: cell.durability, idempotencyKeys: cell.faults.idempotencyKeys, point: crash.point,
        armed: 0, reached: 0, acknowledgedLost: 0, messagesLost: 0, effectsDuplicated: 0, toolsMisclassified: 0, tornFiles: 0, indexMismatches: 0,
      };
      row.armed++;
      if (crash.reached) row.reached++;
      if (crash.found) {
        row.acknowledgedLost += crash.found.acknowledgedLost;
        row.messagesLost += crash.found.messagesLost;
        row.effectsDuplicated += crash.found.effectsDuplicated;
        row.toolsMisclassified += crash.found.toolsMisclassified;
        row.tornFiles += crash.found.tornFiles;
        row.indexMismatches += crash.found.indexMismatches;
      }
      rows.set(key, row);
    }
  }
  return [...rows.values()].sort((a, b) => a.strategy.localeCompare(b.strategy) || a.durability.localeCompare(b.durability) || Number(b.idempotencyKeys) - Number(a.idempotencyKeys) || a.point.localeCompare(b.point));
}

export function modePrices(cells: readonly CellResult[]): ModePrice[] {
  const groups = new Map<string, CellResult[]>();
  for (const cell of cells) {
    if (!cell.faults) continue;
    const key = `${cell.strategy}|${cell.durability}|${cell.faults.idempotencyKeys}`;
    groups.set(key, [...(groups.get(key) ?? []), cell]);
  }
  return [...groups.values()].map((group) => {
    const saves = distribution(group.flatMap((cell) => cell.turns.map((turn) => turn.saveMs)));
    const sum = (key: keyof ModePrice['losses']): number => group.reduce((total, cell) => total + cell.faults!.counts[key], 0);
    const violations: Record<string, number> = {};
    for (const cell of group) for (const [id, outcome] of Object.entries(cell.faults!.invariants)) violations[id] = (violations[id] ?? 0) + outcome.violations;
    return {
      strategy: group[0]!.strategy,
      durability: group[0]!.durability,
      idempotencyKeys: group[0]!.faults!.idempotencyKeys,
      saveP50: saves.p50,
      saveP95: saves.p95,
      cells: group.length,
      crashes: group.reduce((total, cell) => total + cell.faults!.crashes.filter((crash) => crash.reached).length, 0),
      losses: {
        acknowledgedLost: sum('acknowledgedLost'), messagesLost: sum('messagesLost'), effectsDuplicated: sum('effectsDuplicated'), lostUpdates: sum('lostUpdates'),
        tornFiles: sum('tornFiles'), indexMismatches: sum('indexMismatches'), pendingJobsLost: sum('pendingJobsLost'), staleOverwrites: sum('staleOverwrites'),
      },
      violations,
    };
  }).sort((a, b) => a.strategy.localeCompare(b.strategy) || a.durability.localeCompare(b.durability) || Number(b.idempotencyKeys) - Number(a.idempotencyKeys));
}
