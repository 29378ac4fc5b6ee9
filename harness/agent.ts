/**
 * The agent loop: replays scenario steps against one strategy and records what each turn cost.
 * All state lives in the Session object and the strategy's dir, so a later release can run it
 * in a child process that is killed and restarted at any step.
 */
import { performance } from 'node:perf_hooks';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatModel } from './models/types.js';
import { answerPrompt, replyPrompt } from './prompts.js';
import { contextText, judgeAnswer, judgeContext } from './metrics.js';
import { hasCjk } from './text.js';
import type { TokenCounter } from './tokens.js';
import type { ProbeStep, Step } from './scenario.js';
import type { MemoryStrategy } from '../strategies/types.js';

/** One conversational step: what was loaded and how long load and save took. */
export interface TurnRecord {
  step: number;
  turn: number;
  kind: 'user' | 'tool' | 'remember' | 'forget';
  /** Tokens the strategy loaded for the model call; null when the step made no model call. */
  contextTokens: number | null;
  loadMs: number | null;
  saveMs: number;
}

export interface ProbeRecord {
  step: number;
  turn: number;
  id?: string;
  category: ProbeStep['category'];
  question: string;
  contextTokens: number;
  contextRecall: boolean | undefined;
  staleExposure: boolean;
  answer: string;
  answerCorrect: boolean;
  loadMs: number;
}

export interface SessionDeps {
  /** Builds a fresh strategy on the cell's dir (called again at every session boundary). */
  createStrategy: () => MemoryStrategy;
  model: ChatModel;
  tokens: TokenCounter;
}

const timed = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
};

/** Replays steps in order; `session` steps close the strategy and reopen it on the same dir. */
export class AgentSession {
  readonly turns: TurnRecord[] = [];
  readonly probes: ProbeRecord[] = [];
  private strategy: MemoryStrategy | undefined;
  private turn = 0;
  private toolCalls = 0;

  constructor(private readonly deps: SessionDeps) {}

  async start(): Promise<void> {
    this.strategy = this.deps.createStrategy();
    await this.strategy.open();
  }

  private get memory(): MemoryStrategy {
    if (!this.strategy) throw new Error('AgentSession.start() was not called');
    return this.strategy;
  }

  async run(steps: readonly Step[]): Promise<void> {
    for (const [index, step] of steps.entries()) await this.step(step, index);
  }

  async step(step: Step, index: number): Promise<void> {
    switch (step.kind) {
      case 'user':
        return this.exchange(index, 'user', new HumanMessage(step.user), step.assistant, step.id, step.at);
      case 'remember':
        return this.rememberStep(index, step.remember, step);
      case 'forget':
        return this.forgetStep(index, step.forget, step.id);
      case 'tool':
        return this.toolStep(index, step.tool, step.args, step.result, step.id);
      case 'probe':
        return this.probe(index, step);
      case 'session':
        await this.memory.close();
        return this.start();
      default:
        throw new Error(`step kind "${step.kind}" reached the agent loop; the runner should have refused it`);
    }
  }

  async finish(): Promise<void> {
    await this.memory.flush?.();
    await this.memory.close();
  }

  /** A user message, then the model call on the loaded context, then the reply. */
  private async exchange(index: number, kind: TurnRecord['kind'], user: BaseMessage, scripted: string | undefined, stepId?: string, timestamp?: string): Promise<void> {
    this.turn++;
    const turn = this.turn;
    // The user's input is saved before any model call (DESIGN §6, invariant 2).
    const [, saveUserMs] = await timed(() => this.memory.save({ message: user, turn, stepId, timestamp }));
    const [context, loadMs] = await timed(() => this.memory.load({ query: String(user.content), turn, timestamp }));
    const reply = scripted ?? (await this.deps.model.chat({ task: 'reply', messages: replyPrompt(context.messages) })).text;
    const [, saveReplyMs] = await timed(() => this.memory.save({ message: new AIMessage(reply), turn, timestamp }));
    this.turns.push({ step: index, turn, kind, contextTokens: this.deps.tokens.countMessages(context.messages), loadMs, saveMs: saveUserMs + saveReplyMs });
  }

  private async rememberStep(index: number, content: string, step: { id?: string; name?: string; type?: 'user' | 'feedback' | 'project' | 'reference'; priority?: 'high' | 'normal' | 'low' }): Promise<void> {
    const memory = this.memory;
    if (memory.remember) {
      this.turn++;
      const [, saveMs] = await timed(() => memory.remember!({ content, name: step.name, type: step.type, priority: step.priority }));
      this.turns.push({ step: index, turn: this.turn, kind: 'remember', contextTokens: null, loadMs: null, saveMs });
      return;
    }
    const zh = hasCjk(content);
    const ack = zh ? '好的，我记住了。' : "OK, I'll remember that.";
    return this.exchange(index, 'remember', new HumanMessage(zh ? `请记住：${content}` : `Please remember: ${content}`), ack, step.id);
  }

  private async forgetStep(index: number, target: string, stepId?: string): Promise<void> {
    const memory = this.memory;
    if (memory.forget) {
      this.turn++;
      const [, saveMs] = await timed(() => memory.forget!(target));
      this.turns.push({ step: index, turn: this.turn, kind: 'forget', contextTokens: null, loadMs: null, saveMs });
      return;
    }
    const zh = hasCjk(target);
    const ack = zh ? '好的，已经忘掉了。' : 'OK, forgotten.';
    return this.exchange(index, 'forget', new HumanMessage(zh ? `请忘掉：${target}` : `Please forget: ${target}`), ack, stepId);
  }

  /** The assistant calls a scripted tool: the call and its result are saved as a pair. */
  private async toolStep(index: number, name: string, args: Record<string, unknown>, result: unknown, stepId?: string): Promise<void> {
    const turn = Math.max(this.turn, 1);
    const callId = `call_${++this.toolCalls}`;
    const call = new AIMessage({ content: '', tool_calls: [{ id: callId, name, args, type: 'tool_call' }] });
    const output = new ToolMessage({ content: typeof result === 'string' ? result : JSON.stringify(result ?? null), tool_call_id: callId, name });
    const [, saveCallMs] = await timed(() => this.memory.save({ message: call, turn, stepId }));
    const [, saveResultMs] = await timed(() => this.memory.save({ message: output, turn, stepId }));
    this.turns.push({ step: index, turn, kind: 'tool', contextTokens: null, loadMs: null, saveMs: saveCallMs + saveResultMs });
  }

  /** A question answered from memory: context recall is judged on what load() returned. */
  private async probe(index: number, step: ProbeStep): Promise<void> {
    const [context, loadMs] = await timed(() => this.memory.load({ query: step.probe, turn: this.turn + 1 }));
    const verdict = judgeContext(contextText(context.messages), step.expect, step.forbid);
    // The model sees only the context and the question: never `expect`, `forbid` or `evidence`.
    const answer = (await this.deps.model.chat({ task: 'answer', messages: answerPrompt(context.messages, step.probe) })).text;
    this.probes.push({
      step: index,
      turn: this.turn,
      ...(step.id !== undefined ? { id: step.id } : {}),
      category: step.category,
      question: step.probe,
      contextTokens: this.deps.tokens.countMessages(context.messages),
      ...verdict,
      answer,
      answerCorrect: judgeAnswer(answer, step.expect, step.forbid),
      loadMs,
    });
  }
}
