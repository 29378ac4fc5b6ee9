/**
 * The plan of a process-run cell, made before its first step: where the seeded fuzzer kills,
 * the turn and session reached before each step (where a fresh process resumes), and the
 * records a cell's phases start from.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { CellPhases, DurabilityOutcome, ProbeRecord, TurnRecord } from '../results/schema.js';
import type { ModelUsage } from '../models/index.js';
import { CRASH_POINTS, type CrashPoint, type Step } from '../scenarios/format.js';

/** What a process-run cell hands back to the runner. */
export interface ProcessCellOutcome {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  usage: ModelUsage;
  modelLatencies: number[];
  /** The largest resident set any agent process of the cell reached, in kB. */
  peakRssKb: number;
  durabilityOutcome: DurabilityOutcome;
  /** Where the cell's time went (see CellPhases). */
  phases: CellPhases;
  error?: string;
}

/** Runs `work` and adds its wall time to `phases[phase]`. */
export async function timedPhase<T>(phases: CellPhases, phase: keyof CellPhases, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    phases[phase] += performance.now() - started;
  }
}

/** Crash points the agent loop passes in a step of each kind (strategies add their own inside save/remember). */
const POINTS_BY_KIND: Partial<Record<Step['kind'], readonly CrashPoint[]>> = {
  user: ['before_model_call'],
  tool: ['after_tool_intent', 'after_tool_effect', 'after_tool_result'],
  remember: ['after_ack'],
  forget: [],
};
/** Where a strategy's own crash points can be reached: steps that write to it. */
const WRITING_KINDS: ReadonlySet<Step['kind']> = new Set(['user', 'assistant', 'remember', 'forget']);

/**
 * A reproducible fuzz plan: `kills` crash points spread over the steps that can reach one, aimed
 * only at points the step (and the strategy's own `crashPoints`) can reach. Points of one step
 * come in the order a step passes them, so each kill can be reached on the retry after the last.
 */
export function fuzzPlan(
  steps: readonly Step[],
  kills: number,
  seed: number,
  strategyPoints: readonly CrashPoint[] = [],
): Map<number, CrashPoint[]> {
  const plan = new Map<number, CrashPoint[]>();
  // A user message nobody answers (`reply: false`) makes no model call: before_model_call is not on its path.
  const loopPoints = (step: Step): readonly CrashPoint[] =>
    step.kind === 'user' && step.reply === false ? [] : (POINTS_BY_KIND[step.kind] ?? []);
  const reachable = (step: Step): CrashPoint[] => [
    ...loopPoints(step),
    ...(WRITING_KINDS.has(step.kind) ? strategyPoints : []),
  ];
  const candidates = steps.flatMap((step, index) => (reachable(step).length > 0 ? [index] : []));
  if (candidates.length === 0) return plan;
  const rng = xoroshiro128plus(seed);
  for (let i = 0; i < kills; i++) {
    const index = candidates[uniformInt(rng, 0, candidates.length - 1)]!;
    const points = reachable(steps[index]!);
    const point = points[uniformInt(rng, 0, points.length - 1)]!;
    plan.set(index, [...(plan.get(index) ?? []), point]);
  }
  for (const [index, points] of plan)
    plan.set(
      index,
      points.sort((a, b) => CRASH_POINTS.indexOf(a) - CRASH_POINTS.indexOf(b)),
    );
  return plan;
}

/** Turn number and session number reached before each step (user, remember and forget steps each start a turn; session steps a session). */
export function turnsBefore(steps: readonly Step[]): { turn: number; session: number }[] {
  let turn = 0;
  let session = 0;
  return steps.map((step) => {
    const before = { turn, session };
    if (step.kind === 'user' || step.kind === 'remember' || step.kind === 'forget') turn++;
    if (step.kind === 'session') session++;
    return before;
  });
}
