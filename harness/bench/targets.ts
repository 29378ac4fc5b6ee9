/**
 * membench's performance targets (docs/performance.md), judged on a bench report: each a measured value against its
 * limit, PASS / MISS (or not judged, with the reason), and for a miss, by how much.
 */
import { findStrategy } from '../../strategies/index.js';
import type { Floors } from './floors.js';
import type { RecoveryResult } from './recovery.js';
import type { RememberRow, SaveLoadResult, SaveLoadRow } from './save-load.js';
import type { SuiteResult } from './suite.js';
import { PLANT_NAMES, PLANTS, type AaResult } from './aa.js';
import { PROTOCOL_TARGET_RATIO, type ProtocolBenchResult } from './protocol.js';
import type { VectorScaleResult } from './vector-scale.js';
import type { VersusResult } from './versus-langchain.js';

/** Per-turn save + load within this multiple of the floor. */
export const NEAR_FLOOR_RATIO = 3;
/** p50 at the largest history within this multiple of the p50 at 100 turns. */
export const FLAT_RATIO = 1.5;
/** Held to the near-floor target: every strategy but one that calls the model on every turn by design (summary). */
export function heldNearFloor(strategy: string): boolean {
  return findStrategy(strategy)?.callsModelEveryTurn !== true;
}
/** Exempt from the flat target: a full history (buffer) grows with the history by definition. */
export function flatExempt(strategy: string): boolean {
  return findStrategy(strategy)?.kind === 'full-history';
}
/** Vector search at scale: top-k p50 under this many ms, at this recall, at this many memories. */
export const VECTOR_TARGET = { count: 100_000, p50Ms: 0.5, recall: 0.95 };
/** The whole default run (`membench run`, offline) within this multiple of the fork + SIGKILL + reopen floor measured beside it. */
export const SUITE_FLOOR_RATIO = 400;
/** A crash and its recovery within this multiple of the fork + SIGKILL + reopen floor. */
export const RECOVERY_RATIO = 2;

/** One judged target. `pass` is null when the run could not judge it (quick mode, a section skipped). */
export interface Target {
  id: string;
  what: string;
  value: number;
  limit: number;
  unit: 'x' | 'ms' | 's' | 'tokens' | '';
  /** `value` must be at most (`<=`), below (`<`) or at least (`>=`) `limit`. */
  comparison: '<=' | '<' | '>=';
  pass: boolean | null;
  note?: string;
}

/** The sections a target can be judged from. */
export interface TargetInputs {
  floors?: Floors;
  saveLoad?: SaveLoadResult;
  recovery?: RecoveryResult;
  langchain?: VersusResult;
  vector?: VectorScaleResult;
  suite?: SuiteResult & { complete: boolean };
  aa?: AaResult;
  protocol?: ProtocolBenchResult;
}

/** Questions from which the protocol section's ratio is judged: fewer (quick) leave the run's fixed costs (planning, reports) weighing more than its cells. */
export const PROTOCOL_JUDGED_QUESTIONS = 50;

/** A save/load row's multiple of the per-turn floor sampled between its turns (model and embedder time excluded). */
export function floorRatio(row: SaveLoadRow): number {
  return row.turn.p50Ms / row.floorP50Ms;
}

/** A remember row's multiple of its floor (token count + atomic file write) sampled between its calls. */
export function rememberRatio(row: RememberRow): number {
  return row.timing.p50Ms / row.floorP50Ms;
}

/**
 * The flat ratio of one strategy: p50 at the largest size over p50 at 100 turns (or the smallest
 * size when 100 was not measured). `ratio` divides each p50 by the floor sampled alongside it, so
 * a change in the machine's load between the two measurements cancels out; `rawRatio` does not.
 */
export function flatRatio(
  rows: readonly SaveLoadRow[],
): { from: SaveLoadRow; to: SaveLoadRow; ratio: number; rawRatio: number } | undefined {
  if (rows.length < 2) return undefined;
  const sorted = [...rows].sort((a, b) => a.size - b.size);
  const from = sorted.find((row) => row.size === 100) ?? sorted[0]!;
  const to = sorted.at(-1)!;
  if (to === from) return undefined;
  return { from, to, ratio: floorRatio(to) / floorRatio(from), rawRatio: to.turn.p50Ms / from.turn.p50Ms };
}

const judge = (value: number, comparison: Target['comparison'], limit: number): boolean =>
  comparison === '<=' ? value <= limit : comparison === '<' ? value < limit : value >= limit;

function target(fields: Omit<Target, 'pass'>, judged = true): Target {
  return {
    ...fields,
    pass: judged && Number.isFinite(fields.value) ? judge(fields.value, fields.comparison, fields.limit) : null,
  };
}

/** Every target the report's sections allow judging. */
export function evaluateTargets(inputs: TargetInputs): Target[] {
  const targets: Target[] = [];
  const { saveLoad } = inputs;
  if (saveLoad) {
    const strategies = [...new Set(saveLoad.rows.map((row) => row.strategy))];
    for (const strategy of strategies) {
      const rows = saveLoad.rows.filter((row) => row.strategy === strategy);
      const worst = rows.reduce((a, b) => (floorRatio(b) > floorRatio(a) ? b : a));
      targets.push(
        target(
          {
            id: `near-floor:${strategy}`,
            what: `${strategy}: per-turn save + load ≤ ${NEAR_FLOOR_RATIO}× floor (worst history length)`,
            value: floorRatio(worst),
            limit: NEAR_FLOOR_RATIO,
            unit: 'x',
            comparison: '<=',
            note: `worst at ${worst.size} turns: ${worst.turn.p50Ms.toFixed(3)} ms vs floor ${worst.floorP50Ms.toFixed(3)} ms${heldNearFloor(strategy) ? '' : ' (no target: reported only)'}`,
          },
          heldNearFloor(strategy),
        ),
      );
    }
    for (const strategy of strategies) {
      const flat = flatRatio(saveLoad.rows.filter((row) => row.strategy === strategy));
      if (!flat) continue;
      const exempt = flatExempt(strategy);
      targets.push(
        target(
          {
            id: `flat:${strategy}`,
            what: `${strategy}: p50 @ ${flat.to.size} ≤ ${FLAT_RATIO}× p50 @ ${flat.from.size} (each over its floor)`,
            value: flat.ratio,
            limit: FLAT_RATIO,
            unit: 'x',
            comparison: '<=',
            note: `${exempt ? 'exempt: its context is the whole history; ' : ''}raw p50 ratio ${flat.rawRatio.toFixed(2)}×${flat.to.size < 10_000 ? `; largest size measured: ${flat.to.size}` : ''}`,
          },
          !exempt,
        ),
      );
    }
    for (const strategy of new Set(saveLoad.remember.map((row) => row.strategy))) {
      const rows = saveLoad.remember.filter((row) => row.strategy === strategy);
      const worst = rows.reduce((a, b) => (rememberRatio(b) > rememberRatio(a) ? b : a));
      targets.push(
        target({
          id: `near-floor:${strategy}:remember`,
          what: `${strategy}: remember ≤ ${NEAR_FLOOR_RATIO}× floor (token count + atomic file write), worst memory count`,
          value: rememberRatio(worst),
          limit: NEAR_FLOOR_RATIO,
          unit: 'x',
          comparison: '<=',
          note: `worst at ${worst.memories} ${worst.memories === 1 ? 'memory' : 'memories'}: ${worst.timing.p50Ms.toFixed(3)} ms vs floor ${worst.floorP50Ms.toFixed(3)} ms`,
        }),
      );
    }
  }
  const { recovery, floors } = inputs;
  for (const row of recovery?.rows ?? []) {
    const floor = floors?.forkKillReopen.p50Ms ?? NaN;
    targets.push(
      target(
        {
          id: `recovery:${row.strategy}`,
          what: `${row.strategy}: crash + recovery ≤ ${RECOVERY_RATIO}× the fork + SIGKILL + reopen floor (p50 over ${row.crashes} crashes)`,
          value: row.p50Ms / floor,
          limit: RECOVERY_RATIO,
          unit: 'x',
          comparison: '<=',
          note: floors
            ? `${row.p50Ms.toFixed(1)} ms vs floor ${floor.toFixed(1)} ms; ${recovery!.scenario}, warm spares`
            : 'no floors section: not judged',
        },
        floors !== undefined && row.crashes > 0,
      ),
    );
  }
  for (const pair of inputs.langchain?.pairs ?? []) {
    for (const run of [...pair.ours.slice(0, 1), pair.langchain]) {
      if (run.limit.kind !== 'tokens') continue;
      const ours = run === pair.ours[0];
      targets.push(
        target(
          {
            id: `context-bound:${run.strategy}`,
            what: `${run.strategy}: largest context ≤ maxTokenLimit`,
            value: run.maxContextTokens,
            limit: run.limit.value,
            unit: 'tokens',
            comparison: '<=',
            note: `${run.turnsOverLimit} of ${run.turnsPlayed} turns over the limit${ours ? '' : ' (LangChain: shown, not a membench target)'}`,
          },
          ours,
        ),
      );
    }
  }
  const { vector } = inputs;
  if (vector) {
    const atScale = vector.count >= VECTOR_TARGET.count;
    const note = atScale
      ? `ef=${vector.ef}, ${vector.count} vectors`
      : `ef=${vector.ef}, only ${vector.count} vectors (quick): the target is at ${VECTOR_TARGET.count}`;
    targets.push(
      target(
        {
          id: 'vector:p50',
          what: `vector: top-${vector.k} p50 at ${VECTOR_TARGET.count} memories < ${VECTOR_TARGET.p50Ms} ms`,
          value: vector.search.p50Ms,
          limit: VECTOR_TARGET.p50Ms,
          unit: 'ms',
          comparison: '<',
          note,
        },
        atScale,
      ),
    );
    targets.push(
      target(
        {
          id: 'vector:recall',
          what: `vector: recall@${vector.k} ≥ ${VECTOR_TARGET.recall}`,
          value: vector.recall,
          limit: VECTOR_TARGET.recall,
          unit: '',
          comparison: '>=',
          note,
        },
        atScale,
      ),
    );
  }
  const { protocol } = inputs;
  if (protocol) {
    const judged = protocol.questions >= PROTOCOL_JUDGED_QUESTIONS;
    targets.push(
      target(
        {
          id: 'protocol:floor',
          what: `--protocol longmemeval -s bm25 (both units, both rankers): CPU per question ≤ ${PROTOCOL_TARGET_RATIO}× read + tokenize + index + rank`,
          value: protocol.ratio,
          limit: PROTOCOL_TARGET_RATIO,
          unit: 'x',
          comparison: '<=',
          note: `${protocol.run.cpuMsPerQuestion.toFixed(1)} ms vs floor ${protocol.floor.cpuMsPerQuestion.toFixed(1)} ms, ${protocol.questions} questions${judged ? '' : ` (judged from ${PROTOCOL_JUDGED_QUESTIONS})`}`,
        },
        judged,
      ),
    );
  }
  const { suite } = inputs;
  if (suite) {
    targets.push(
      target(
        {
          id: 'suite:floor-ratio',
          what: `${suite.command} (${suite.cells} cells, reports and charts included) ≤ ${SUITE_FLOOR_RATIO}× the fork + SIGKILL + reopen floor measured beside it`,
          value: suite.floorRatio,
          limit: SUITE_FLOOR_RATIO,
          unit: 'x',
          comparison: '<=',
          note: suite.complete
            ? `${(suite.wallMs / 1000).toFixed(1)} s, floor ${suite.forkFloorMs.toFixed(0)} ms; ${suite.turnsPerSec.toFixed(0)} turns/s`
            : 'quick: in-process scenarios only, not the whole suite',
        },
        suite.complete,
      ),
    );
  }
  const { aa } = inputs;
  if (aa) {
    targets.push({
      id: 'aa:false-alarms',
      what: 'figures compare flags between two runs of the same code',
      value: aa.flagged.length,
      limit: 0,
      unit: '',
      comparison: '<=',
      pass: aa.flagged.length === 0,
    });
    const { planted } = aa;
    if (!('skipped' in planted))
      for (const name of PLANT_NAMES)
        targets.push({
          id: `aa:planted-${name}`,
          what: `${PLANTS[name].figure} figures compare fails on the planted ${PLANTS[name].what}`,
          value: planted[name].expected,
          limit: 1,
          unit: '',
          comparison: '>=',
          pass: planted[name].expected >= 1,
        });
  }
  return targets;
}

/** How far a missed target is from its limit, as a phrase ("2.4× the limit", "recall 0.03 short"). */
export function missBy(item: Target): string {
  if (item.pass !== false) return '';
  if (item.comparison === '>=') return `${(item.limit - item.value).toFixed(3)} short`;
  return `${(item.value / item.limit).toFixed(2)}× the limit`;
}
