/**
 * Cells with faults: the agent runs in child processes, armed crash points kill them with
 * SIGKILL, fresh processes recover on the same dir, and invariants 1–6 (docs/design.md §6) are checked
 * after every recovery. Every death, loss and duplicate is recorded as data.
 */
import type { Ack } from '../agent/loop.js';
import {
  INVARIANTS,
  type CrashRecord,
  type DurabilityCounts,
  emptyDurabilityCounts,
  emptyPhases,
  type DurabilityOutcome,
  type InvariantId,
  type InvariantOutcome,
  type ProbeRecord,
  type ToolRecovery,
  type TurnRecord,
} from '../results/schema.js';
import { concurrentStepIndex } from '../scenarios/step-ids.js';
import { agentProcessStats, isExit, type AgentProcess, type ProcessExit } from './agent-process.js';
import { returnSpare, spareKind, spareReady, takeSpare, type SpareKind } from './spares.js';
import { Ledger } from '../agent/ledger.js';
import { addUsage, emptyUsage } from '../models/index.js';
import type { CrashPoint, Scenario, Step } from '../scenarios/format.js';
import type { CheckReport, FromAgent, AgentCell } from './protocol.js';
import { fuzzPlan, timedPhase, turnsBefore, type ProcessCellOutcome } from './crash-plan.js';
import { cellPaths } from './protocol.js';
import { batchEnd } from './cell-session.js';
import { hasCjkIn, normalizeText } from '../core/text.js';
import type { PreloadHint } from '../../strategies/types.js';
import { errorMessage } from '../core/errors.js';

export { fuzzPlan, type ProcessCellOutcome } from './crash-plan.js';

function outcome(): InvariantOutcome {
  return { held: true, checked: 0, violations: 0, details: [] };
}

export interface ProcessCellOptions {
  cell: AgentCell;
  scenario: Scenario;
  fuzzKills?: number;
  /** The strategy's own crash points (its definition's `crashPoints`), for the fuzzer. */
  strategyCrashPoints?: readonly CrashPoint[];
  /** What the strategy prepared for its processes' `preload` from the scenario's texts (its definition's `preloadShared`). */
  preloadShared?: Partial<PreloadHint>;
  /** Told as each scenario step starts (a cell that hangs is reported with its step). */
  onStep?: (index: number, step: Step) => void;
  /** Told as a replayed dataset's batch of saved turns (steps `first`…`last`) starts, instead of each step. */
  onBatch?: (first: number, last: number) => void;
}

/** Runs one cell through agent processes, injecting the scenario's crashes (and fuzzed ones). */
export async function runCellInProcesses(options: ProcessCellOptions): Promise<ProcessCellOutcome> {
  const forked = agentProcessStats.spawned;
  const run = new ProcessCellRun(options);
  await run.replay();
  run.verifyAfterReplay();
  const outcome = run.collect();
  // A process runs one cell at a time: every fork meanwhile is this cell's (its spares' included).
  outcome.phases.forked = agentProcessStats.spawned - forked;
  return outcome;
}

/** An armed crash point and who armed it. */
type Arm = { point: CrashPoint; source: CrashRecord['source'] };

/**
 * One process-run cell in phases: the plan (the fuzzer's kills, what each step needs loaded) is
 * made on construction; `replay` drives the steps through agent processes, recovering and
 * checking after each crash; `verifyAfterReplay` checks what only the whole cell shows (the
 * ledger, stale writes); `collect` hands back the records.
 */
class ProcessCellRun {
  private readonly cell: AgentCell;
  private readonly steps: readonly Step[];
  private readonly turnAt: { turn: number; session: number }[];
  private readonly turns: TurnRecord[] = [];
  private readonly probes: ProbeRecord[] = [];
  private readonly recoveries: ToolRecovery[] = [];
  private readonly crashes: CrashRecord[] = [];
  private readonly usage = emptyUsage();
  private readonly modelLatencies: number[] = [];
  private peakRssKb = 0;
  private readonly acks: Ack[] = [];
  private readonly invariants = Object.fromEntries(Object.keys(INVARIANTS).map((id) => [id, outcome()])) as Record<
    InvariantId,
    InvariantOutcome
  >;
  private readonly counts: DurabilityCounts = emptyDurabilityCounts();
  /** Step index → the crash points the fuzzer aims at in it. */
  private readonly fuzz: Map<number, CrashPoint[]>;
  private readonly phases = emptyPhases();
  private readonly spares: SpareKind;
  /**
   * What a step's text needs loaded (a Chinese dictionary for Han text): a process is told before
   * the first step that needs it (outside the step's timing), a spare before the crash whose
   * recovery re-runs such a step — so a process that never meets Chinese never loads it.
   */
  private readonly cjkAt: boolean[];
  /** Kills armed from step i on (a scenario's crash steps and the fuzzer's points), at index i: how many processes the cell may still start. */
  private readonly killsFrom: number[];
  private error: string | undefined;
  private lastPending: number | null = null;
  /** Jobs the last report before a process died said were pending: what the next open must still find (invariant 6). */
  private pendingAtDeath: number | null = null;
  /** The crash whose recovery re-runs a step: tool recoveries of that step are attributed to it. */
  private readonly pendingAttribution = new Map<number, CrashRecord>();
  /** The process serving the cell now (killed if the cell fails). */
  private agent: AgentProcess | undefined;

  constructor(private readonly options: ProcessCellOptions) {
    this.cell = options.cell;
    this.steps = options.scenario.steps;
    this.turnAt = turnsBefore(this.steps);
    this.fuzz = options.fuzzKills
      ? fuzzPlan(this.steps, options.fuzzKills, this.cell.seed, options.strategyCrashPoints)
      : new Map<number, CrashPoint[]>();
    this.spares = spareKind(this.cell);
    this.cjkAt = this.steps.map((step) => hasCjkIn(step));
    this.killsFrom = new Array<number>(this.steps.length + 1).fill(0);
    for (let index = this.steps.length - 1; index >= 0; index--)
      this.killsFrom[index] =
        this.killsFrom[index + 1]! +
        (this.steps[index]!.kind === 'crash' ? 1 : 0) +
        (this.fuzz.get(index)?.length ?? 0);
  }

  private hintAt(index: number): { strategy: string; hint: PreloadHint } {
    return { strategy: this.cell.strategy, hint: this.cjkAt[index] ? this.cjkHint() : { cjk: false } };
  }

  /** The hint of a step with CJK text: with the cuts the strategy prepared for it, if any. */
  private cjkHint(): PreloadHint {
    return { ...this.options.preloadShared, cjk: true };
  }

  private async prepareFor(agent: AgentProcess, index: number): Promise<void> {
    if (this.cjkAt[index])
      await timedPhase(this.phases, 'openMs', () => agent.prepare(this.cell.strategy, this.cjkHint()));
  }

  private violate(id: InvariantId, count: number, detail: string): void {
    const target = this.invariants[id];
    target.checked++;
    if (count > 0) {
      target.held = false;
      target.violations += count;
      if (target.details.length < 20) target.details.push(detail);
    }
  }

  /**
   * Takes a warm spare (new ones are forked behind it for the `need` more processes the cell may
   * start, unless the process will be handed back: a concurrent step's session, `returning`) and
   * opens the cell in it, as `sessionId`.
   */
  private async startProcess(
    resumeAt: { turn: number; session: number },
    {
      sessionId = this.cell.sessionId,
      returning = false,
      need,
    }: { sessionId?: string; returning?: boolean; need: number },
  ): Promise<AgentProcess> {
    const { phases, counts } = this;
    const agent = takeSpare(this.spares, { returning, need });
    phases.processes++;
    const waited = performance.now();
    await agent.settled();
    phases.spareWaitMs += performance.now() - waited;
    const opened = await timedPhase(phases, 'openMs', () =>
      agent.open({ ...this.cell, sessionId }, resumeAt, (ack) => this.acks.push(ack)),
    );
    // A process reused from an earlier cell or session started before it: its start is not this open's.
    if (agent.boot && agent.opens === 1) {
      phases.processStartMs += agent.boot.bootMs;
      phases.moduleLoadMs += agent.boot.modulesMs + agent.boot.warmUpMs;
      phases.processCpuMs += agent.boot.cpuMs;
      if (agent.boot.from === 'snapshot') phases.snapshotStarts++;
      else phases.otherStarts++;
    }
    if (isExit(opened) || opened.type === 'error') {
      throw new Error(
        `agent process failed to open the cell: ${isExit(opened) ? `exit code ${opened.code}, signal ${opened.signal}` : opened.message}`,
      );
    }
    if (opened.type === 'opened' && this.pendingAtDeath !== null && opened.pendingJobs !== null) {
      // Invariant 6: jobs reported pending before the crash should still be queued after it (a
      // clean close may finish them: only a process that died is checked).
      const lost = Math.max(0, this.pendingAtDeath - opened.pendingJobs);
      counts.pendingJobsLost += lost;
      this.violate('6', lost, `${lost} background job(s) pending before the crash were gone after reopening`);
    }
    this.pendingAtDeath = null;
    return agent;
  }

  /** Drops the acks a done forget step names (by the memory's name, or by text it holds), but those `kept`. */
  private dropForgotten(target: string, kept: (ack: Ack) => boolean = () => false): void {
    const wanted = normalizeText(target);
    for (let index = this.acks.length - 1; index >= 0; index--) {
      const ack = this.acks[index]!;
      if (kept(ack)) continue;
      if (ack.name === target || (wanted !== '' && normalizeText(ack.content).includes(wanted)))
        this.acks.splice(index, 1);
    }
  }

  /**
   * The forget steps of a concurrent step's sessions, as dropForgotten follows a top-level one: a
   * memory a session asked to forget need not survive (invariant 5 checked it, a false loss), unless
   * that session acknowledged it again after its forget. Another session's ack of it raced the
   * forget, and is dropped too: which came first is the interleaving's.
   */
  private dropForgottenInSessions(index: number, sessions: readonly Step[][]): void {
    for (const [session, steps] of sessions.entries())
      steps.forEach((step, offset) => {
        if (step.kind !== 'forget') return;
        const later = new Set(
          steps.slice(offset + 1).map((_, after) => concurrentStepIndex(index, session, offset + 1 + after)),
        );
        this.dropForgotten(step.forget, (ack) => later.has(ack.step));
      });
  }

  /** Asks a freshly opened process what survived (invariants 1, 2 and 5). */
  private async check(agent: AgentProcess, userTexts: string[], label: string): Promise<CheckReport | undefined> {
    const { counts } = this;
    const reply = await timedPhase(this.phases, 'checkMs', () =>
      agent.request({ type: 'check', acks: this.acks, userTexts }, 'checked'),
    );
    if (isExit(reply) || reply.type === 'error') return undefined;
    const { report } = reply;
    // Summarised away is the strategy's design, not a crash loss: counted apart, but only where the
    // summary itself is persisted (sync, async). In exit and none modes nothing was, so it is a loss.
    if (report.lossy && (this.cell.durability === 'sync' || this.cell.durability === 'async')) {
      counts.compressedAway = Math.max(counts.compressedAway, report.lostAcks.length);
      report.lostAcks = [];
    }
    counts.acknowledgedLost += report.lostAcks.length;
    this.violate(
      '1',
      report.lostAcks.length,
      `${label}: lost acknowledged memories: ${report.lostAcks.slice(0, 3).join(' | ')}`,
    );
    if (userTexts.length > 0) {
      counts.messagesLost += report.lostUserTexts.length;
      this.violate(
        '2',
        report.lostUserTexts.length,
        `${label}: user input not persisted: ${report.lostUserTexts.slice(0, 3).join(' | ')}`,
      );
    }
    if (report.store) {
      counts.tornFiles += report.store.torn;
      counts.indexMismatches += report.store.indexMismatches;
      this.violate(
        '5',
        report.store.torn + report.store.indexMismatches,
        `${label}: ${report.store.details.slice(0, 3).join('; ')}`,
      );
    }
    return report;
  }

  /** Records what a finished step reported. */
  private absorb(reply: Extract<FromAgent, { type: 'step-done' }>): void {
    for (const recovery of reply.recoveries) {
      const found = this.pendingAttribution.get(recovery.step)?.found;
      if (!found) continue;
      if (recovery.reran && recovery.ledgerApplied) found.effectsDuplicated++;
      if (
        (recovery.classification === 'completed' && !recovery.ledgerApplied) ||
        (recovery.classification === 'not-started' && recovery.ledgerApplied)
      )
        found.toolsMisclassified++;
    }
    this.turns.push(...reply.turns);
    this.probes.push(...reply.probes);
    this.recoveries.push(...reply.recoveries);
    addUsage(this.usage, reply.usage);
    this.modelLatencies.push(...reply.modelLatencies);
    this.peakRssKb = Math.max(this.peakRssKb, reply.maxRssKb);
    this.lastPending = reply.pendingJobs;
  }

  /**
   * Closes a session cleanly, its usage counted, and hands the process back to serve the next cell
   * or session (a fresh session object reopens the strategy from disk there); one that did not
   * close cleanly is killed.
   */
  private async closeForReuse(closing: AgentProcess): Promise<void> {
    const closed = await timedPhase(this.phases, 'closeMs', () => closing.close({ reuse: true }));
    if (!isExit(closed) && closed.type === 'closed') addUsage(this.usage, closed.usage);
    await returnSpare(this.spares, closing);
    // A strategy whose flush or close threw fails the cell, as it does in a cell run inline.
    if (!isExit(closed) && closed.type === 'error')
      throw new Error(`closing the cell failed in the agent process: ${closed.message}`);
  }

  /** Drives every step through agent processes; a failure ends the cell with its message recorded. */
  async replay(): Promise<void> {
    try {
      this.agent = await this.startProcess({ turn: 0, session: 0 }, { need: this.killsFrom[0]! });
      let scenarioArm: CrashPoint | undefined;
      for (let index = 0; index < this.steps.length; index++) {
        const step = this.steps[index]!;
        // A replayed dataset's run of saved turns goes as one batch, as it runs inline (cell-session.ts).
        const end = scenarioArm
          ? index + 1
          : batchEnd(this.steps, index, this.cell.datasetReplay ?? false, this.nextFuzzed(index));
        if (end - index > 1) {
          this.options.onBatch?.(index, end - 1);
          await this.runStep(index, this.steps.slice(index, end), []);
          index = end - 1;
          continue;
        }
        this.options.onStep?.(index, step);
        if (step.kind === 'crash') {
          scenarioArm = step.crash;
          continue;
        }
        if (step.kind === 'session') {
          await this.closeForReuse(this.agent);
          this.lastPending = null; // a clean close finishes background work: only a crash can lose it (invariant 6)
          const at = this.turnAt[index]!;
          // The new session's process.
          this.agent = await this.startProcess(
            { turn: at.turn, session: at.session + 1 },
            { need: this.killsFrom[index + 1]! },
          );
          continue;
        }
        if (step.kind === 'concurrent') {
          await this.closeForReuse(this.agent);
          await this.runConcurrent(index, step.concurrent);
          continue;
        }
        const arms: Arm[] = [
          ...(scenarioArm ? [{ point: scenarioArm, source: 'scenario' as const }] : []),
          ...(this.fuzz.get(index) ?? []).map((point) => ({ point, source: 'fuzz' as const })),
        ];
        scenarioArm = undefined;
        await this.runStep(index, [step], arms);
        // A memory the user asked to forget is no longer one that must survive (invariant 1).
        if (step.kind === 'forget') this.dropForgotten(step.forget);
      }
      const closing = this.agent;
      this.agent = undefined;
      await this.closeForReuse(closing);
    } catch (caught) {
      this.error = errorMessage(caught);
    } finally {
      await this.agent?.kill();
    }
  }

  /** The first step from `index` on that the fuzzer arms a kill in (a batch stops before it), or the scenario's end. */
  private nextFuzzed(index: number): number {
    let next = this.steps.length;
    for (const at of this.fuzz.keys()) if (at >= index && at < next) next = at;
    return next;
  }

  /**
   * Runs one step (or a batch of saved turns, which no kill is armed in) until it completes, with
   * each arm in turn: an armed kill is followed by a recovery in a fresh process.
   */
  private async runStep(index: number, run: readonly Step[], arms: Arm[]): Promise<void> {
    const step = run[0]!;
    const { phases } = this;
    let attempts = 0;
    for (;;) {
      const agent = this.agent!;
      const arm = arms.shift();
      // A crash is armed only once a warm spare waits for it: the recovery never waits for a process to start.
      // Needed from here on: this arm's recovery, the step's other arms, the kills of later steps.
      const need = 1 + arms.length + this.killsFrom[index + 1]!;
      if (arm) phases.spareWaitMs += await spareReady(this.spares, this.hintAt(index), need);
      await this.prepareFor(agent, index);
      if (arm) agent.post({ type: 'arm', point: arm.point });
      const sent = performance.now();
      const reply = await agent.request(
        run.length === 1 ? { type: 'step', index, step } : { type: 'batch', from: index, steps: [...run] },
        'step-done',
      );
      if (!isExit(reply) && reply.type === 'step-done') {
        phases.replayMs += performance.now() - sent;
        this.absorb(reply);
        if (arm)
          this.crashes.push({
            step: index,
            point: arm.point,
            reached: false,
            signal: null,
            code: null,
            source: arm.source,
          });
        if (arms.length === 0) return;
        continue;
      }
      if (!isExit(reply)) throw new Error(`step ${index} failed in the agent process: ${reply.message}`);
      const exit: ProcessExit = reply;
      const crash: CrashRecord | undefined =
        arm && exit.signal === 'SIGKILL'
          ? { step: index, point: arm.point, reached: true, signal: exit.signal, code: exit.code, source: arm.source }
          : undefined;
      if (crash) this.crashes.push(crash);
      else this.counts.unexpectedExits++;
      this.pendingAtDeath = this.lastPending;
      // Armed kills are the point; a process that keeps dying on its own is a broken strategy.
      if (!crash && ++attempts > 3)
        throw new Error(
          `step ${index} kept killing the agent process (last exit: code ${exit.code}, signal ${exit.signal})`,
        );
      await this.recover(index, step, arm, crash, sent, arms.length + this.killsFrom[index + 1]!);
    }
  }

  /** After a process died in step `index`: a fresh process on the same dir (`need`: kills still armed after), and what survived checked. */
  private async recover(
    index: number,
    step: Step,
    arm: Arm | undefined,
    crash: CrashRecord | undefined,
    sent: number,
    need: number,
  ): Promise<void> {
    const agent = await this.startProcess(this.turnAt[index]!, { need });
    this.agent = agent;
    this.phases.recoveryMs += performance.now() - sent;
    const userTexts = step.kind === 'user' && arm?.point === 'before_model_call' ? [step.user] : [];
    const report = await this.check(
      agent,
      userTexts,
      `after a crash at ${arm?.point ?? 'an unexpected exit'} in step ${index}`,
    );
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
      this.pendingAttribution.set(index, crash);
    }
  }

  /** Invariants only the whole cell shows: tool calls against the ledger (3), stale background writes (4). */
  verifyAfterReplay(): void {
    const { counts } = this;
    // Invariant 3: every recovered call classified in agreement with the ledger; with keys, no duplicate.
    const misclassified = this.recoveries.filter(
      (recovery) =>
        (recovery.classification === 'completed' && !recovery.ledgerApplied) ||
        (recovery.classification === 'not-started' && recovery.ledgerApplied),
    );
    counts.toolsMisclassified = misclassified.length;
    const ledger = new Ledger(cellPaths(this.cell.dir).ledger);
    const ledgerCounts = ledger.counts();
    ledger.close();
    counts.effects = ledgerCounts.effects;
    counts.effectsDuplicated = ledgerCounts.effectsDuplicated;
    counts.effectsRefused = ledgerCounts.effectsRefused;
    this.violate(
      '3',
      misclassified.length + (this.cell.idempotencyKeys ? ledgerCounts.effectsDuplicated : 0),
      `${misclassified.length} misclassified tool call(s), ${ledgerCounts.effectsDuplicated} duplicated effect(s)`,
    );
    // Invariant 4: a stale background write shows as stale exposure on an update probe.
    if (this.options.scenario.tags?.includes('stale-writer')) {
      const stale = this.probes.filter((probe) => probe.category === 'update' && probe.staleExposure).length;
      counts.staleOverwrites = stale;
      this.violate('4', stale, `${stale} update probe(s) saw the stale value after background work finished`);
    }
  }

  /** What the cell hands back to the runner. */
  collect(): ProcessCellOutcome {
    const { turns, probes, usage, modelLatencies, peakRssKb, phases, error } = this;
    const durabilityOutcome: DurabilityOutcome = {
      idempotencyKeys: this.cell.idempotencyKeys,
      crashes: this.crashes,
      recoveries: this.recoveries,
      invariants: this.invariants,
      counts: this.counts,
    };
    return {
      turns,
      probes,
      usage,
      modelLatencies,
      peakRssKb,
      phases,
      durabilityOutcome,
      ...(error !== undefined ? { error } : {}),
    };
  }

  /**
   * Sessions run their steps at once, each in its own process, released together by a barrier;
   * then a fresh process, which serves the cell on, checks that no acknowledged concurrent write was lost.
   */
  private async runConcurrent(index: number, sessions: Step[][]): Promise<void> {
    const { phases, counts } = this;
    const agents: AgentProcess[] = [];
    // The barrier: every process has opened the store before any session starts.
    for (const [sessionIndex, sessionSteps] of sessions.entries()) {
      const worker = await this.startProcess(this.turnAt[index]!, {
        sessionId: `${this.cell.sessionId}-c${index}-${sessionIndex}`,
        // A built-in strategy's session process comes back when it closes (returnSpare); a user's is killed then.
        returning: this.spares.builtin,
        need: this.killsFrom[index + 1]!,
      });
      agents.push(worker);
      if (hasCjkIn(sessionSteps))
        await timedPhase(phases, 'openMs', () => worker.prepare(this.cell.strategy, this.cjkHint()));
    }
    // Replies are kept per session and recorded in session order once all are done, so the
    // records come out in one canonical order whatever the interleaving was.
    const replies: Extract<FromAgent, { type: 'step-done' }>[][] = sessions.map(() => []);
    try {
      await Promise.all(
        sessions.map(async (sessionSteps, sessionIndex) => {
          const worker = agents[sessionIndex]!;
          for (const [offset, step] of sessionSteps.entries()) {
            const reply = await timedPhase(phases, 'replayMs', () =>
              worker.request(
                { type: 'step', index: concurrentStepIndex(index, sessionIndex, offset), step },
                'step-done',
              ),
            );
            if (isExit(reply)) {
              counts.unexpectedExits++;
              return;
            }
            if (reply.type === 'error')
              throw new Error(`concurrent session ${sessionIndex}, step ${offset}: ${reply.message}`);
            replies[sessionIndex]!.push(reply);
          }
        }),
      );
      for (const reply of replies.flat()) this.absorb(reply);
      this.dropForgottenInSessions(index, sessions);
    } catch (error) {
      // A failed session must not leave its siblings running.
      await Promise.all(agents.map((worker) => worker.kill()));
      throw error;
    }
    for (const worker of agents) await this.closeForReuse(worker);
    this.lastPending = null; // the sessions closed cleanly, finishing their work
    this.agent = await this.startProcess(this.turnAt[index]!, { need: this.killsFrom[index + 1]! });
    const report = await this.check(this.agent, [], `after concurrent step ${index}`);
    if (report) {
      counts.lostUpdates += report.lostAcks.length;
      this.violate(
        '5',
        report.lostAcks.length,
        `after concurrent step ${index}: ${report.lostAcks.length} acknowledged concurrent write(s) lost`,
      );
    }
  }
}
