/**
 * The agent loop: replays scenario steps against one strategy and records what each turn cost.
 * All state lives in the session, the strategy's dir and the journal, so the same loop runs in
 * this process or in an agent process that is killed and restarted at any step.
 */
import { checkedLoad } from './strategy-contract.js';
import { performance } from 'node:perf_hooks';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatModel } from '../models/types.js';
import { answerPrompt, replyPrompt } from '../core/prompts.js';
import { chosenAnswer } from '../results/scoring.js';
import { messageIds, opaqueStepId } from '../scenarios/step-ids.js';
import { datedText, withoutLeadingNote } from '../core/text.js';
import type { TokenCounter } from '../core/tokens.js';
import type { CrashPoint, ProbeStep, RememberStep, Step } from '../scenarios/format.js';
import { isMembenchError } from '../core/errors.js';
import { forgetExchange, rememberExchange } from './agent-texts.js';
import { Journal } from './journal.js';
import type { Ledger } from './ledger.js';
import type { MemoryStrategy } from '../../strategies/types.js';
import type { ProbeRecord, ToolRecovery, TurnRecord } from '../results/schema.js';
import { ProbeScoring, type ProbeScoringInput } from '../results/probe-record.js';
import { fnv1a } from '../core/hash.js';

/** An explicit memory the user was told is kept. */
export interface Ack {
  step: number;
  content: string;
  /** The memory's name, when the strategy names memories: a later ack of the same name replaces it. */
  name?: string;
}

export interface SessionDeps {
  /** Builds a fresh strategy on the cell's dir (called again at every session boundary). */
  createStrategy: () => MemoryStrategy;
  model: ChatModel;
  tokens: TokenCounter;
  /** Where side effects go; effects are counted from it. */
  ledger?: Ledger;
  /** The loop's durable progress; with it a fresh process resumes an interrupted step. */
  journal?: Journal;
  /** Names this session in the journal and in tool call ids (concurrent sessions share a dir). */
  sessionId?: string;
  /** Tool effects carry idempotency keys (default true): the ledger refuses a repeated effect. */
  idempotencyKeys?: boolean;
  /** Reaching a crash point (an armed one kills the process). */
  checkpoint?: (point: CrashPoint) => void;
  /** Told after a memory is acknowledged; awaited before the `after_ack` crash point. */
  onAck?: (ack: Ack) => Promise<void> | void;
  /**
   * What probes are scored against: the scenario's steps and the run's retrieval settings. Default:
   * the steps `run` is given, with the default retrieval k (a session driven by `step` alone scores
   * its probes without evidence).
   */
  scoring?: ProbeScoringInput;
  /**
   * The strategy's `keepsVerbatim` capability: false when it transforms what it keeps, so evidence
   * may also be held by rare-term coverage. Default true: evidence is held only when quoted.
   */
  keepsVerbatim?: boolean;
  /**
   * Whether the user turn at this step index assembles its context although its reply is scripted
   * (default: every turn does). No model reads that context, so a cell may measure only a seeded
   * sample of such turns (`contextSample`); probes and turns whose reply the model writes always load.
   */
  measureContext?: (step: number) => boolean;
  /**
   * A `session` step is the strategy's `newSession` (its stores stay open) where it offers one,
   * instead of a close and a fresh instance's open (default false: every boundary reopens).
   * Replayed datasets set it: their ~50 boundaries a question are where a reopen cost the most.
   */
  sessionsStayOpen?: boolean;
}

/**
 * A step that only saves what the scenario scripts: a user message with its scripted reply (or
 * none), or an assistant message. No model is called and nothing is acknowledged to the user, so
 * a run of them may share one durable commit (harness/core/durable-batch.ts).
 */
export function savesOnly(step: Step): boolean {
  return (step.kind === 'user' && (step.assistant !== undefined || step.reply === false)) || step.kind === 'assistant';
}

/** Scripted turns whose context a cell measures at most, per scenario (`contextSample`): more turns than that are sampled. */
export const CONTEXT_SAMPLE_TURNS = 32;

/**
 * The sample of a scenario's scripted user turns whose context is measured: all of them when there
 * are at most `size`; else every k-th one (k = ⌈turns / size⌉, so at most `size`), from an offset
 * drawn from `seed` (the scenario's name: every strategy is measured on the same turns). A
 * systematic sample: spread evenly over the conversation, so a context that grows with the history
 * is measured at every stage of it.
 */
export function contextSample(
  steps: readonly Step[],
  seed: string,
  size = CONTEXT_SAMPLE_TURNS,
): (step: number) => boolean {
  const scripted: number[] = [];
  for (const [index, step] of steps.entries())
    if (step.kind === 'user' && step.assistant !== undefined && step.reply !== false) scripted.push(index);
  if (scripted.length <= size) return () => true;
  const stride = Math.ceil(scripted.length / size);
  const offset = fnv1a(seed) % stride;
  const measured = new Set(scripted.filter((_, position) => position % stride === offset));
  return (step) => measured.has(step);
}

const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
};

/**
 * Least time between two readings of the resident set: a reading costs a system call (~0.1–0.4 ms
 * on a loaded 2-core machine), and a probe every millisecond or two read it ~500 times per
 * generated cell, while the resident set moves over tens of milliseconds, not per step.
 */
const RSS_INTERVAL_MS = 20;

/** Replays steps in order; `session` steps close the strategy and reopen it on the same dir (or, with `sessionsStayOpen`, tell the open strategy). */
export class AgentSession {
  readonly turns: TurnRecord[] = [];
  readonly probes: ProbeRecord[] = [];
  readonly recoveries: ToolRecovery[] = [];
  /** The process's resident set at its highest after any step of this session (bytes): this cell's peak, not the process's lifetime high-water mark. */
  peakRssBytes = 0;
  private rssReadAt = Number.NEGATIVE_INFINITY;
  /** What the strategy could not read and left out (`file: reason`), collected before each close. */
  readonly unreadable = new Set<string>();
  private strategy: MemoryStrategy | undefined;
  private probeScoring: ProbeScoring | undefined;
  private turn = 0;
  /** Session boundaries passed (what `MemoryEvent.session` says): a number, never the scenario's session ids. */
  private sessionNumber = 0;
  private readonly session: string;

  constructor(private readonly deps: SessionDeps) {
    this.session = deps.sessionId ?? 'main';
  }

  /** The strategy in use (durability checks read its snapshot). */
  get current(): MemoryStrategy | undefined {
    return this.strategy;
  }

  /** Sets the user-turn and session counters when a fresh process resumes a scenario part-way. */
  resumeAtTurn(turn: number, session = 0): void {
    this.turn = turn;
    this.sessionNumber = session;
  }

  private checkpoint(point: CrashPoint): void {
    this.deps.checkpoint?.(point);
  }

  async start(): Promise<void> {
    this.strategy = this.deps.createStrategy();
    await this.strategy.open();
  }

  private get memory(): MemoryStrategy {
    if (!this.strategy) throw new Error('AgentSession.start() was not called');
    return this.strategy;
  }

  async run(steps: readonly Step[]): Promise<void> {
    this.probeScoring ??= new ProbeScoring(this.deps.scoring ?? { steps: [...steps] }, this.deps.tokens);
    for (const [index, step] of steps.entries()) await this.step(step, index);
    this.readRss();
  }

  private readRss(): void {
    this.peakRssBytes = Math.max(this.peakRssBytes, process.memoryUsage.rss());
    this.rssReadAt = performance.now();
  }

  /** The scorer of this session's probes (built on first use). */
  private get scoring(): ProbeScoring {
    this.probeScoring ??= new ProbeScoring(this.deps.scoring ?? { steps: [] }, this.deps.tokens);
    return this.probeScoring;
  }

  /** Runs one step of the scenario, at its index. */
  async step(step: Step, index: number): Promise<void> {
    const journal = this.deps.journal;
    if (journal?.stepState(this.session, index) === 'done') return;
    await this.runStep(step, index);
    journal?.setStep(this.session, index, 'done');
    // Reading the resident set costs a system call: after the first step, then at most every RSS_INTERVAL_MS.
    if (performance.now() - this.rssReadAt >= RSS_INTERVAL_MS) this.readRss();
  }

  private async runStep(step: Step, index: number): Promise<void> {
    // What the strategy is told a message came from: an opaque id, never the scenario's own (DESIGN §5).
    const stepId = messageIds(step).length > 0 ? opaqueStepId(index) : undefined;
    switch (step.kind) {
      case 'user':
        return this.exchange(
          index,
          'user',
          new HumanMessage(datedText(step.user, step.at)),
          step.assistant === undefined ? undefined : datedText(step.assistant, step.at),
          stepId,
          step.at,
          step.reply !== false,
          { user: step.indexText, reply: step.replyIndexText },
        );
      case 'assistant':
        return this.assistantStep(index, step.assistant, stepId, step.at, step.indexText);
      case 'remember':
        return this.rememberStep(index, step.remember, step, stepId);
      case 'forget':
        return this.forgetStep(index, step.forget, stepId);
      case 'tool':
        return this.toolStep(index, step, stepId);
      case 'probe':
        return this.probe(index, step);
      case 'session':
        this.sessionNumber++;
        this.noteUnreadable();
        if (this.deps.sessionsStayOpen && (await this.memory.newSession?.())) return;
        await this.memory.close();
        return this.start();
      default:
        throw new Error(`step kind "${step.kind}" reached the agent loop; the runner should have refused it`);
    }
  }

  async finish(): Promise<void> {
    await this.memory.flush?.();
    this.noteUnreadable();
    await this.memory.close();
  }

  private noteUnreadable(): void {
    for (const item of this.memory.unreadable?.() ?? []) this.unreadable.add(item);
  }

  /** A user message, then the model call on the loaded context, then the reply (none when `reply` is false: a replayed message nobody answered). */
  private async exchange(
    index: number,
    kind: TurnRecord['kind'],
    user: BaseMessage,
    scripted: string | undefined,
    stepId?: string,
    timestamp?: string,
    reply = true,
    indexTexts: { user?: string | undefined; reply?: string | undefined } = {},
  ): Promise<void> {
    this.turn++;
    const turn = this.turn;
    // The user's input is saved before any model call (docs/design.md §6, invariant 2); a recovering
    // process does not save it twice.
    let saveUserMs = 0;
    if (this.deps.journal?.stepState(this.session, index) !== 'user_saved') {
      [, saveUserMs] = await timed(() =>
        this.memory.save({
          message: user,
          turn,
          stepId,
          timestamp,
          session: this.sessionNumber,
          ...(indexTexts.user !== undefined ? { indexText: indexTexts.user } : {}),
        }),
      );
      this.deps.journal?.setStep(this.session, index, 'user_saved');
    }
    if (!reply) {
      this.turns.push({ step: index, turn, kind, contextTokens: null, loadMs: null, saveMs: saveUserMs });
      return;
    }
    this.checkpoint('before_model_call');
    if (scripted !== undefined && kind === 'user' && this.deps.measureContext?.(index) === false) {
      // The reply is scripted and this turn is outside the sample: no model reads a context, none is assembled.
      const [, saveReplyMs] = await timed(() =>
        this.memory.save({
          message: new AIMessage(scripted),
          turn,
          stepId,
          timestamp,
          session: this.sessionNumber,
          ...(indexTexts.reply !== undefined ? { indexText: indexTexts.reply } : {}),
        }),
      );
      this.turns.push({
        step: index,
        turn,
        kind,
        contextTokens: null,
        loadMs: null,
        saveMs: saveUserMs + saveReplyMs,
        contextSkipped: true,
      });
      return;
    }
    const [loaded, loadMs] = await timed(() => this.memory.load({ query: String(user.content), turn, timestamp }));
    const context = checkedLoad(this.memory, loaded);
    const text =
      scripted ?? (await this.deps.model.chat({ task: 'reply', messages: replyPrompt(context.messages) })).text;
    const [, saveReplyMs] = await timed(() =>
      this.memory.save({
        message: new AIMessage(text),
        turn,
        stepId,
        timestamp,
        session: this.sessionNumber,
        ...(scripted !== undefined && indexTexts.reply !== undefined ? { indexText: indexTexts.reply } : {}),
      }),
    );
    this.turns.push({
      step: index,
      turn,
      kind,
      contextTokens: this.deps.tokens.countMessages(context.messages),
      loadMs,
      saveMs: saveUserMs + saveReplyMs,
    });
  }

  /** An assistant message with no user message before it (a replayed session opening with the assistant): saved, no model call. */
  private async assistantStep(
    index: number,
    text: string,
    stepId?: string,
    timestamp?: string,
    indexText?: string,
  ): Promise<void> {
    const turn = Math.max(this.turn, 1);
    const [, saveMs] = await timed(() =>
      this.memory.save({
        message: new AIMessage(datedText(text, timestamp)),
        turn,
        stepId,
        timestamp,
        session: this.sessionNumber,
        ...(indexText !== undefined ? { indexText } : {}),
      }),
    );
    this.turns.push({ step: index, turn, kind: 'assistant', contextTokens: null, loadMs: null, saveMs });
  }

  private async rememberStep(
    index: number,
    content: string,
    step: RememberStep,
    stepId: string | undefined,
  ): Promise<void> {
    const memory = this.memory;
    let acknowledgedName: string | undefined;
    if (memory.remember) {
      this.turn++;
      try {
        const item = {
          content,
          name: step.name,
          type: step.type,
          priority: step.priority,
          scope: step.scope,
          description: step.description,
          expires: step.expires,
          stepId,
        };
        const [ack, saveMs] = await timed(() => memory.remember!(item));
        acknowledgedName = ack.name;
        this.turns.push({ step: index, turn: this.turn, kind: 'remember', contextTokens: null, loadMs: null, saveMs });
      } catch (error) {
        // A refused memory (too large, unsafe name...) is recorded and never acknowledged.
        if (!isMembenchError(error) || error.code !== 'INVALID_ARGUMENT') throw error;
        this.turns.push({
          step: index,
          turn: this.turn,
          kind: 'remember',
          contextTokens: null,
          loadMs: null,
          saveMs: 0,
          refused: error.message,
        });
        return;
      }
    } else {
      const { user, ack } = rememberExchange(content);
      await this.exchange(index, 'remember', new HumanMessage(user), ack, stepId);
    }
    // The acknowledgement: given only once save()/remember() resolved, i.e. durable per the mode.
    await this.deps.onAck?.({
      step: index,
      content,
      ...(acknowledgedName !== undefined ? { name: acknowledgedName } : {}),
    });
    this.checkpoint('after_ack');
  }

  private async forgetStep(index: number, target: string, stepId?: string): Promise<void> {
    const memory = this.memory;
    if (memory.forget) {
      this.turn++;
      const [, saveMs] = await timed(() => memory.forget!(target));
      this.turns.push({ step: index, turn: this.turn, kind: 'forget', contextTokens: null, loadMs: null, saveMs });
      return;
    }
    const { user, ack } = forgetExchange(target);
    return this.exchange(index, 'forget', new HumanMessage(user), ack, stepId);
  }

  /**
   * The assistant calls a scripted tool. The journal records the intent first; the effect goes
   * to the ledger (with an idempotency key unless disabled); then the result is saved. A
   * recovering process classifies an interrupted call from what it can know and re-runs the
   * effect only when it cannot tell that it happened.
   */
  private async toolStep(
    index: number,
    step: { tool: string; args: Record<string, unknown>; result?: unknown; effect: boolean },
    stepId: string | undefined,
  ): Promise<void> {
    const turn = Math.max(this.turn, 1);
    const callId = `${this.session}-call-${index}`;
    const key = this.deps.idempotencyKeys === false ? undefined : `idem-${callId}`;
    const journal = this.deps.journal;
    const ledger = this.deps.ledger;
    const previous = journal?.tool(callId);
    const call = new AIMessage({
      content: '',
      tool_calls: [{ id: callId, name: step.tool, args: step.args, type: 'tool_call' }],
    });
    const output = new ToolMessage({
      content: typeof step.result === 'string' ? step.result : JSON.stringify(step.result ?? null),
      tool_call_id: callId,
      name: step.tool,
    });

    let saveCallMs = 0;
    if (!previous) journal?.recordIntent(callId, index, step.tool, key);
    if (!Journal.reached(previous, 'call_saved')) {
      [, saveCallMs] = await timed(() =>
        this.memory.save({ message: call, turn, stepId, session: this.sessionNumber }),
      );
      journal?.advanceTool(callId, 'call_saved');
    }
    this.checkpoint('after_tool_intent');
    let saveResultMs = 0;
    if (!Journal.reached(previous, 'result_saved')) {
      // Nothing durable separates "effect done" from "result not saved yet": that gap is what
      // idempotency keys are for.
      let runEffect = true;
      if (previous && step.effect && ledger) {
        const classification = key ? (ledger.completed(callId, key) ? 'completed' : 'not-started') : 'started-unknown';
        runEffect = classification !== 'completed';
        this.recoveries.push({
          step: index,
          callId,
          tool: step.tool,
          effect: true,
          classification,
          ledgerApplied: ledger.completed(callId),
          reran: runEffect,
        });
      }
      if (step.effect && ledger && runEffect) ledger.apply(callId, step.tool, step.args, key);
      this.checkpoint('after_tool_effect');
      [, saveResultMs] = await timed(() =>
        this.memory.save({ message: output, turn, stepId, session: this.sessionNumber }),
      );
      journal?.advanceTool(callId, 'result_saved');
      this.checkpoint('after_tool_result');
    }
    this.turns.push({
      step: index,
      turn,
      kind: 'tool',
      contextTokens: null,
      loadMs: null,
      saveMs: saveCallMs + saveResultMs,
    });
  }

  /** A question answered from memory: its record is judged on what load() returned (harness/results/probe-record.ts). */
  private async probe(index: number, step: ProbeStep): Promise<void> {
    const scoring = this.scoring;
    // Retrieval looks for the question; a leading "[Current date: …]" stays in what the model is asked.
    const [loaded, loadMs] = await timed(() =>
      this.memory.load({ query: withoutLeadingNote(step.probe), turn: this.turn + 1, rankDepth: scoring.rankDepth }),
    );
    const context = checkedLoad(this.memory, loaded);
    // The model sees only the context and the question as asked (a dataset's hint or choices
    // added): never `expect`, `forbid` or `evidence`. A reply that is only a letter names its choice.
    const reply = (
      await this.deps.model.chat({ task: 'answer', messages: answerPrompt(context.messages, step.ask ?? step.probe) })
    ).text;
    const answer = chosenAnswer(reply, step.choices);
    this.probes.push(
      scoring.record({
        index,
        step,
        turn: this.turn,
        context,
        loadMs,
        answer,
        keepsVerbatim: this.deps.keepsVerbatim !== false,
      }),
    );
  }
}
