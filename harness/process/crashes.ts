/**
 * Cells with faults: the agent runs in child processes, armed crash points kill them with
 * SIGKILL, fresh processes recover on the same dir, and invariants 1–6 (docs/design.md §6) are checked
 * after every recovery. Every death, loss and duplicate is recorded as data.
 */
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { Ack } from '../agent/loop.js';
import { INVARIANTS, type CellPhases, type CrashRecord, type DurabilityCounts, type DurabilityResult, type InvariantId, type InvariantOutcome, type ProbeRecord, type ToolRecovery, type TurnRecord } from '../results/schema.js';
import { concurrentStepIndex } from '../scenarios/step-ids.js';
import { isExit, type AgentProcess, type ProcessExit } from './agent-process.js';
import { returnSpare, spareKind, spareReady, takeSpare } from './spares.js';
import { Ledger } from '../agent/ledger.js';
import { addUsage, emptyUsage, type ModelUsage } from '../models/index.js';
import { CRASH_POINTS, type CrashPoint, type Scenario, type Step } from '../scenarios/format.js';
import type { CheckReport, FromAgent, AgentCell } from './protocol.js';
import { cellPaths } from './protocol.js';
import { hasCjkIn } from '../core/text.js';
import type { PreloadHint } from '../../strategies/types.js';

/** What a process-run cell hands back to the runner. */
export interface ProcessCellOutcome {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  usage: ModelUsage;
  modelLatencies: number[];
  /** The largest resident set any agent process of the cell reached, in kB. */
  peakRssKb: number;
  durability: DurabilityResult;
  /** Where the cell's time went (see CellPhases). */
  phases: CellPhases;
  error?: string;
}

/** No time spent yet. */
export function emptyPhases(): CellPhases {
  return { processes: 0, processStartMs: 0, moduleLoadMs: 0, processCpuMs: 0, spareWaitMs: 0, openMs: 0, replayMs: 0, recoveryMs: 0, checkMs: 0, closeMs: 0 };
}

/** Runs `work` and adds its wall time to `phases[phase]`. */
async function timedPhase<T>(phases: CellPhases, phase: keyof CellPhases, work: () => Promise<T>): Promise<T> {
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
export function fuzzPlan(steps: readonly Step[], kills: number, seed: number, strategyPoints: readonly CrashPoint[] = []): Map<number, CrashPoint[]> {
  const plan = new Map<number, CrashPoint[]>();
  // A user message nobody answers (`reply: false`) makes no model call: before_model_call is not on its path.
  const loopPoints = (step: Step): readonly CrashPoint[] => (step.kind === 'user' && step.reply === false ? [] : (POINTS_BY_KIND[step.kind] ?? []));
  const reachable = (step: Step): CrashPoint[] => [...loopPoints(step), ...(WRITING_KINDS.has(step.kind) ? strategyPoints : [])];
  const candidates = steps.flatMap((step, index) => (reachable(step).length > 0 ? [index] : []));
  if (candidates.length === 0) return plan;
  const rng = xoroshiro128plus(seed);
  for (let i = 0; i < kills; i++) {
    const index = candidates[uniformInt(rng, 0, candidates.length - 1)]!;
    const points = reachable(steps[index]!);
    const point = points[uniformInt(rng, 0, points.length - 1)]!;
    plan.set(index, [...(plan.get(index) ?? []), point]);
  }
  for (const [index, points] of plan) plan.set(index, points.sort((a, b) => CRASH_POINTS.indexOf(a) - CRASH_POINTS.indexOf(b)));
  return plan;
}

function outcome(): InvariantOutcome {
  return { held: true, checked: 0, violations: 0, details: [] };
}

export interface ProcessCellOptions {
  cell: AgentCell;
  scenario: Scenario;
  fuzzKills?: number;
  /** The strategy's own crash points (its definition's `crashPoints`), for the fuzzer. */
  strategyCrashPoints?: readonly CrashPoint[];
  /** Told as each scenario step starts (a cell that hangs is reported with its step). */
  onStep?: (index: number, step: Step) => void;
}

/** Turn number reached before each step (user, remember and forget steps each start a turn). */
function turnsBefore(steps: readonly Step[]): number[] {
  let turn = 0;
  return steps.map((step) => {
    const before = turn;
    if (step.kind === 'user' || step.kind === 'remember' || step.kind === 'forget') turn++;
    return before;
  });
}

/** Runs one cell through agent processes, injecting the scenario's crashes (and fuzzed ones). */
export async function runCellInProcesses(options: ProcessCellOptions): Promise<ProcessCellOutcome> {
  const { cell, scenario } = options;
  const steps = scenario.steps;
  const turnAt = turnsBefore(steps);
  const turns: TurnRecord[] = [];
  const probes: ProbeRecord[] = [];
  const recoveries: ToolRecovery[] = [];
  const crashes: CrashRecord[] = [];
  const usage = emptyUsage();
  const modelLatencies: number[] = [];
  let peakRssKb = 0;
  const acks: Ack[] = [];
  const invariants = Object.fromEntries(Object.keys(INVARIANTS).map((id) => [id, outcome()])) as Record<InvariantId, InvariantOutcome>;
  const counts: DurabilityCounts = {
    acknowledgedLost: 0, messagesLost: 0, effects: 0, effectsDuplicated: 0, effectsRefused: 0, toolsMisclassified: 0,
    staleOverwrites: 0, lostUpdates: 0, tornFiles: 0, indexMismatches: 0, pendingJobsLost: 0, unexpectedExits: 0, compressedAway: 0,
  };
  const fuzz = options.fuzzKills ? fuzzPlan(steps, options.fuzzKills, cell.seed, options.strategyCrashPoints) : new Map<number, CrashPoint[]>();
  const phases = emptyPhases();
  const spares = spareKind(cell);
  // What a step's text needs loaded (a Chinese dictionary for Han text): a process is told before
  // the first step that needs it (outside the step's timing), a spare before the crash whose
  // recovery re-runs such a step — so a process that never meets Chinese never loads it.
  const cjkAt = steps.map((step) => hasCjkIn(step));
  const hintAt = (index: number): { strategy: string; hint: PreloadHint } => ({ strategy: cell.strategy, hint: { cjk: cjkAt[index]! } });
  const prepareFor = async (agent: AgentProcess, index: number): Promise<void> => {
    if (cjkAt[index]) await timedPhase(phases, 'openMs', () => agent.prepare(cell.strategy, { cjk: true }));
  };
  let error: string | undefined;
  let lastPending: number | null = null;
  /** Jobs the last report before a process died said were pending: what the next open must still find (invariant 6). */
  let pendingAtDeath: number | null = null;

  const violate = (id: InvariantId, count: number, detail: string): void => {
    const target = invariants[id];
    target.checked++;
    if (count > 0) {
      target.held = false;
      target.violations += count;
      if (target.details.length < 20) target.details.push(detail);
    }
  };

  /** Takes a warm spare (a new one is forked behind it) and opens the cell in it. */
  const startProcess = async (resumeTurn: number, sessionId = cell.sessionId, sink: Ack[] = acks): Promise<AgentProcess> => {
    const agent = takeSpare(spares);
    phases.processes++;
    const waited = performance.now();
    await agent.settled();
    phases.spareWaitMs += performance.now() - waited;
    const opened = await timedPhase(phases, 'openMs', () => agent.open({ ...cell, sessionId }, resumeTurn, (ack) => sink.push(ack)));
    // A process reused from an earlier cell or session started before it: its start is not this open's.
    if (agent.boot && agent.opens === 1) {
      phases.processStartMs += agent.boot.bootMs;
      phases.moduleLoadMs += agent.boot.modulesMs + agent.boot.warmUpMs;
      phases.processCpuMs += agent.boot.cpuMs;
    }
    if (isExit(opened) || opened.type === 'error') {
      throw new Error(`agent process failed to open the cell: ${isExit(opened) ? `exit code ${opened.code}, signal ${opened.signal}` : opened.message}`);
    }
    if (opened.type === 'opened' && pendingAtDeath !== null && opened.pendingJobs !== null) {
      // Invariant 6: jobs reported pending before the crash should still be queued after it (a
      // clean close may finish them: only a process that died is checked).
      const lost = Math.max(0, pendingAtDeath - opened.pendingJobs);
      counts.pendingJobsLost += lost;
      violate('6', lost, `${lost} background job(s) pending before the crash were gone after reopening`);
    }
    pendingAtDeath = null;
    return agent;
  };

  const check = async (agent: AgentProcess, userTexts: string[], label: string): Promise<CheckReport | undefined> => {
    const reply = await timedPhase(phases, 'checkMs', () => agent.request({ type: 'check', acks, userTexts }, 'checked'));
    if (isExit(reply) || reply.type === 'error') return undefined;
    const { report } = reply;
    // Summarised away is the strategy's design, not a crash loss: counted apart, but only where the
    // summary itself is persisted (sync, async). In exit and none modes nothing was, so it is a loss.
    if (report.lossy && (cell.durability === 'sync' || cell.durability === 'async')) {
      counts.compressedAway = Math.max(counts.compressedAway, report.lostAcks.length);
      report.lostAcks = [];
    }
    counts.acknowledgedLost += report.lostAcks.length;
    violate('1', report.lostAcks.length, `${label}: lost acknowledged memories: ${report.lostAcks.slice(0, 3).join(' | ')}`);
    if (userTexts.length > 0) {
      counts.messagesLost += report.lostUserTexts.length;
      violate('2', report.lostUserTexts.length, `${label}: user input not persisted: ${report.lostUserTexts.slice(0, 3).join(' | ')}`);
    }
    if (report.store) {
      counts.tornFiles += report.store.torn;
      counts.indexMismatches += report.store.indexMismatches;
      violate('5', report.store.torn + report.store.indexMismatches, `${label}: ${report.store.details.slice(0, 3).join('; ')}`);
    }
    return report;
  };

  // The crash whose recovery re-runs a step: tool recoveries of that step are attributed to it.
  const pendingAttribution = new Map<number, CrashRecord>();
  const absorb = (reply: Extract<FromAgent, { type: 'step-done' }>): void => {
    for (const recovery of reply.recoveries) {
      const found = pendingAttribution.get(recovery.step)?.found;
      if (!found) continue;
      if (recovery.reran && recovery.ledgerApplied) found.effectsDuplicated++;
      if ((recovery.classification === 'completed' && !recovery.ledgerApplied) || (recovery.classification === 'not-started' && recovery.ledgerApplied)) found.toolsMisclassified++;
    }
    turns.push(...reply.turns);
    probes.push(...reply.probes);
    recoveries.push(...reply.recoveries);
    addUsage(usage, reply.usage);
    modelLatencies.push(...reply.modelLatencies);
    peakRssKb = Math.max(peakRssKb, reply.maxRssKb);
    lastPending = reply.pendingJobs;
  };

  /**
   * Closes a session cleanly, its usage counted, and hands the process back to serve the next cell
   * or session (a fresh session object reopens the strategy from disk there); one that did not
   * close cleanly is killed.
   */
  const closeForReuse = async (closing: AgentProcess): Promise<void> => {
    const closed = await timedPhase(phases, 'closeMs', () => closing.close({ reuse: true }));
    if (!isExit(closed) && closed.type === 'closed') addUsage(usage, closed.usage);
    await returnSpare(spares, closing);
  };

  let agent: AgentProcess | undefined;
  try {
    agent = await startProcess(0);
    let scenarioArm: CrashPoint | undefined;
    for (const [index, step] of steps.entries()) {
      options.onStep?.(index, step);
      if (step.kind === 'crash') {
        scenarioArm = step.crash;
        continue;
      }
      if (step.kind === 'session') {
        await closeForReuse(agent);
        lastPending = null; // a clean close finishes background work: only a crash can lose it (invariant 6)
        agent = await startProcess(turnAt[index]!);
        continue;
      }
      if (step.kind === 'concurrent') {
        await closeForReuse(agent);
        await runConcurrent(index, step.concurrent);
        lastPending = null; // the sessions closed cleanly, finishing their work
        agent = await startProcess(turnAt[index]!);
        const report = await check(agent, [], `after concurrent step ${index}`);
        if (report) {
          counts.lostUpdates += report.lostAcks.length;
          violate('5', report.lostAcks.length, `after concurrent step ${index}: ${report.lostAcks.length} acknowledged concurrent write(s) lost`);
        }
        continue;
      }
      const arms: { point: CrashPoint; source: CrashRecord['source'] }[] = [
        ...(scenarioArm ? [{ point: scenarioArm, source: 'scenario' as const }] : []),
        ...(fuzz.get(index) ?? []).map((point) => ({ point, source: 'fuzz' as const })),
      ];
      scenarioArm = undefined;
      let attempts = 0;
      for (;;) {
        const arm = arms.shift();
        // A crash is armed only once a warm spare waits for it: the recovery never waits for a process to start.
        if (arm) phases.spareWaitMs += await spareReady(spares, hintAt(index));
        await prepareFor(agent, index);
        if (arm) agent.post({ type: 'arm', point: arm.point });
        const sent = performance.now();
        const reply = await agent.request({ type: 'step', index, step }, 'step-done');
        if (!isExit(reply) && reply.type === 'step-done') {
          phases.replayMs += performance.now() - sent;
          absorb(reply);
          if (arm) crashes.push({ step: index, point: arm.point, reached: false, signal: null, code: null, source: arm.source });
          if (arms.length === 0) break;
          continue;
        }
        if (!isExit(reply)) throw new Error(`step ${index} failed in the agent process: ${reply.message}`);
        const exit: ProcessExit = reply;
        const crash: CrashRecord | undefined = arm && exit.signal === 'SIGKILL' ? { step: index, point: arm.point, reached: true, signal: exit.signal, code: exit.code, source: arm.source } : undefined;
        if (crash) crashes.push(crash);
        else counts.unexpectedExits++;
        pendingAtDeath = lastPending;
        // Armed kills are the point; a process that keeps dying on its own is a broken strategy.
        if (!crash && ++attempts > 3) throw new Error(`step ${index} kept killing the agent process (last exit: code ${exit.code}, signal ${exit.signal})`);
        agent = await startProcess(turnAt[index]!);
        phases.recoveryMs += performance.now() - sent;
        const userTexts = step.kind === 'user' && arm?.point === 'before_model_call' ? [step.user] : [];
        const report = await check(agent, userTexts, `after a crash at ${arm?.point ?? 'an unexpected exit'} in step ${index}`);
        if (crash) crash.recoveryMs = performance.now() - sent;
        if (crash && report) {
          crash.found = {
            acknowledgedLost: report.lostAcks.length,
            messagesLost: report.lostUserTexts.length,
            tornFiles: report.store?.torn ?? 0,
            indexMismatches: report.store?.indexMismatches ?? 0,
            effectsDuplicated: 0,
            toolsMisclassified: 0,
          };
          pendingAttribution.set(index, crash);
        }
      }
    }
    const closing = agent;
    agent = undefined;
    await closeForReuse(closing);
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  } finally {
    await agent?.kill();
  }

  // Invariant 3: every recovered call classified in agreement with the ledger; with keys, no duplicate.
  const misclassified = recoveries.filter((recovery) => (recovery.classification === 'completed' && !recovery.ledgerApplied) || (recovery.classification === 'not-started' && recovery.ledgerApplied));
  counts.toolsMisclassified = misclassified.length;
  const ledger = new Ledger(cellPaths(cell.dir).ledger);
  const ledgerCounts = ledger.counts();
  ledger.close();
  counts.effects = ledgerCounts.effects;
  counts.effectsDuplicated = ledgerCounts.duplicates;
  counts.effectsRefused = ledgerCounts.refused;
  violate('3', misclassified.length + (cell.idempotencyKeys ? ledgerCounts.duplicates : 0), `${misclassified.length} misclassified tool call(s), ${ledgerCounts.duplicates} duplicated effect(s)`);
  // Invariant 4: a stale background write shows as stale exposure on an update probe.
  if (scenario.tags?.includes('stale-writer')) {
    const stale = probes.filter((probe) => probe.category === 'update' && probe.staleExposure).length;
    counts.staleOverwrites = stale;
    violate('4', stale, `${stale} update probe(s) saw the stale value after background work finished`);
  }
  return { turns, probes, usage, modelLatencies, peakRssKb, phases, durability: { idempotencyKeys: cell.idempotencyKeys, crashes, recoveries, invariants, counts }, ...(error !== undefined ? { error } : {}) };

  /** Sessions run their steps at once, each in its own process, released together by a barrier. */
  async function runConcurrent(index: number, sessions: Step[][]): Promise<void> {
    const agents: AgentProcess[] = [];
    // The barrier: every process has opened the store before any session starts.
    for (const [sessionIndex, sessionSteps] of sessions.entries()) {
      const worker = await startProcess(turnAt[index]!, `${cell.sessionId}-c${index}-${sessionIndex}`);
      agents.push(worker);
      if (hasCjkIn(sessionSteps)) await timedPhase(phases, 'openMs', () => worker.prepare(cell.strategy, { cjk: true }));
    }
    // Replies are kept per session and recorded in session order once all are done, so the
    // records come out in one canonical order whatever the interleaving was.
    const replies: Extract<FromAgent, { type: 'step-done' }>[][] = sessions.map(() => []);
    try {
      await Promise.all(
        sessions.map(async (sessionSteps, sessionIndex) => {
          const worker = agents[sessionIndex]!;
          for (const [offset, step] of sessionSteps.entries()) {
            const reply = await timedPhase(phases, 'replayMs', () => worker.request({ type: 'step', index: concurrentStepIndex(index, sessionIndex, offset), step }, 'step-done'));
            if (isExit(reply)) {
              counts.unexpectedExits++;
              return;
            }
            if (reply.type === 'error') throw new Error(`concurrent session ${sessionIndex}, step ${offset}: ${reply.message}`);
            replies[sessionIndex]!.push(reply);
          }
        }),
      );
      for (const reply of replies.flat()) absorb(reply);
    } catch (error) {
      // A failed session must not leave its siblings running.
      await Promise.all(agents.map((worker) => worker.kill()));
      throw error;
    }
    for (const worker of agents) await closeForReuse(worker);
  }
}
