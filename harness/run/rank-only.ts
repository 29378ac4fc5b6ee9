/**
 * The ranking-only cell: what `--protocol` needs of a retrieving strategy, and nothing else. A
 * protocol's figures are the rankings a strategy returns at each question, so a cell that only
 * feeds them replays the scenario's messages into the strategy with its stores in memory (mode
 * `none`: no commit, no fsync), never assembles the context of a scripted turn (and records no
 * turn: no context tokens, no save latency), asks no model for an answer, does not count the
 * conversation's tokens for the evidence's distance, and leaves out the question's context figures
 * (the context's tokens, answer recall, evidence coverage: a token count and a segmentation of
 * everything loaded). At each
 * question it loads exactly as the full cell does (same query, same turn, same rank depth), so the
 * rankings, and every retrieval figure scored on them, are the full cell's.
 *
 * It takes a cell only when that holds: the run has a protocol, the strategy ranks (`ranks` in its
 * definition) and offers mode `none`, and every step is a scripted message, a session boundary or
 * a question (a replayed dataset). A session boundary keeps the strategy open and only moves the
 * session number it is told, as a replayed dataset's boundaries keep a `sync` store open in the
 * full cell. `--protocol-full` (ProviderSettings.protocolFull) runs the full cell instead.
 */
import { cellClock } from '../process/cell-session.js';
import { checkedLoad, checkedStrategy } from '../agent/strategy-contract.js';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { DURABILITY_MODES } from '../core/durability-mode.js';
import { datedText, withoutLeadingNote } from '../core/text.js';
import { TokenCounter } from '../core/tokens.js';
import { emptyUsage } from '../models/index.js';
import { cellPaths } from '../process/protocol.js';
import type { CellRecords } from '../results/cell-result.js';
import { ProbeScoring, type ProbeScoringInput } from '../results/probe-record.js';
import { emptyPhases, type ProbeRecord, type SkippedWork } from '../results/schema.js';
import type { Scenario, Step } from '../scenarios/format.js';
import { messageIds, opaqueStepId } from '../scenarios/step-ids.js';
import type { ChatModel, Embedder } from '../models/types.js';
import type { MemoryEvent, MemoryStrategy, StrategyDefinition } from '../../strategies/types.js';
import { errorMessage } from '../core/errors.js';

/** What a ranking-only cell reads of its plan (cell.ts's CellPlan). */
export interface RankOnlyPlan {
  scenario: Scenario;
  definition: StrategyDefinition;
  strategy: { source: string; options: Record<string, unknown> };
  seed: number;
  trial: number;
}

/** What it reads of the run's settings and providers (cell.ts's Providers). */
export interface RankOnlySettings {
  protocol?: string | undefined;
  protocolFull?: boolean | undefined;
  isolate: boolean;
  crashFuzz?: number | undefined;
}
export interface RankOnlyProviders {
  tokenizerModel: string;
  modelFor: (trial: number) => ChatModel;
  embedder: Embedder;
  /** An ISO instant the strategies' clock stands still at (tests); absent: the system clock. */
  clock?: string;
}

/** What a ranking-only cell leaves out, as its result says (`skipped`). */
export const RANK_ONLY_SKIPS: readonly SkippedWork[] = [
  'answers',
  'turns',
  'durability',
  'distance',
  'context figures',
];

/** A step the ranking-only replay can take: a scripted message, a session boundary or a question. */
function replayable(step: Step): boolean {
  switch (step.kind) {
    case 'user':
      return step.assistant !== undefined || step.reply === false;
    case 'assistant':
    case 'session':
    case 'probe':
      return true;
    default:
      return false;
  }
}

/** Whether the run's settings let a cell rank only: a protocol, not forced whole, no isolation, no crash fuzzing. */
export function rankOnlySettings(settings: RankOnlySettings): boolean {
  return (
    settings.protocol !== undefined &&
    settings.protocolFull !== true &&
    !settings.isolate &&
    (settings.crashFuzz ?? 0) === 0
  );
}

/** Whether a strategy can rank only: it ranks, and keeps its stores in memory (mode `none`). */
export function ranksInMemory(definition: Pick<StrategyDefinition, 'ranks' | 'durabilityModes'>): boolean {
  return definition.ranks !== undefined && (definition.durabilityModes ?? DURABILITY_MODES).includes('none');
}

/** What a ranking-only cell makes in its cell dir (relative to it): its strategy's dir, which its in-memory stores leave empty. */
export const RANK_ONLY_DIRS: readonly string[] = [path.relative('.', cellPaths('.').strategyDir)];

/** Whether the cell takes the ranking-only path (see the module comment). */
export function ranksOnly(plan: Pick<RankOnlyPlan, 'definition' | 'scenario'>, settings: RankOnlySettings): boolean {
  return rankOnlySettings(settings) && ranksInMemory(plan.definition) && plan.scenario.steps.every(replayable);
}

/** Replays the scenario's messages into the strategy (mode `none`) and scores each question's ranking; no model is called. */
export async function runRankOnly(
  plan: RankOnlyPlan,
  providers: RankOnlyProviders,
  dir: string,
  scoring: ProbeScoringInput,
  onPhase: (phase: string) => void,
): Promise<CellRecords> {
  const paths = cellPaths(dir);
  await mkdir(paths.strategyDir, { recursive: true });
  const tokens = new TokenCounter(providers.tokenizerModel);
  const { definition } = plan;
  const phases = emptyPhases();
  const probes: ProbeRecord[] = [];
  const scorer = new ProbeScoring({ ...scoring, distances: false, contextFigures: false }, tokens);
  let strategy: MemoryStrategy | undefined;
  let error: string | undefined;
  let peakRss = 0;
  try {
    onPhase('open');
    let started = performance.now();
    strategy = checkedStrategy(
      `strategy ${plan.strategy.source}`,
      definition.create(
        {
          dir: paths.strategyDir,
          tokens,
          model: providers.modelFor(plan.trial),
          embedder: providers.embedder,
          durability: 'none',
          seed: plan.seed,
          now: cellClock(providers.clock),
        },
        plan.strategy.options,
      ),
    );
    await strategy.open();
    phases.openMs = performance.now() - started;
    started = performance.now();
    onPhase(`steps 0–${plan.scenario.steps.length - 1} (ranking only)`);
    const replay = new RankOnlyReplay(strategy, plan.scenario);
    for (const [index, step] of plan.scenario.steps.entries()) {
      if (step.kind !== 'probe') {
        await replay.step(step, index);
        continue;
      }
      // As the agent loop asks at a question: the question without its date note, the next turn, the scorer's depth.
      const asked = performance.now();
      const context = checkedLoad(
        strategy,
        await strategy.load({
          query: withoutLeadingNote(step.probe),
          turn: replay.turn + 1,
          rankDepth: scorer.rankDepth,
        }),
      );
      const loadMs = performance.now() - asked;
      probes.push(
        scorer.record({
          index,
          step,
          turn: replay.turn,
          context,
          loadMs,
          keepsVerbatim: definition.keepsVerbatim !== false,
        }),
      );
    }
    phases.replayMs = performance.now() - started;
    peakRss = process.memoryUsage.rss();
    started = performance.now();
    onPhase('close');
    await strategy.close();
    phases.closeMs = performance.now() - started;
  } catch (caught) {
    error = errorMessage(caught);
    await strategy?.close().catch(() => undefined);
  }
  return {
    turns: [],
    probes,
    usage: emptyUsage(),
    modelLatencies: [],
    effects: { effects: 0, effectsDuplicated: 0, effectsRefused: 0 },
    phases,
    peakRssKb: peakRss / 1024,
    skipped: [...RANK_ONLY_SKIPS],
    ...(error !== undefined ? { error } : {}),
  };
}

/** Saves a scenario's scripted messages as the agent loop saves them (dated text, opaque step ids, turn and session numbers), with no load between them and no turn record. */
class RankOnlyReplay {
  turn = 0;
  private session = 0;

  constructor(
    private readonly strategy: MemoryStrategy,
    private readonly scenario: Scenario,
  ) {}

  async step(step: Step, index: number): Promise<void> {
    const stepId = messageIds(step).length > 0 ? opaqueStepId(index) : undefined;
    const event = (
      message: MemoryEvent['message'],
      turn: number,
      at: string | undefined,
      indexText: string | undefined,
    ): MemoryEvent => ({
      message,
      turn,
      stepId,
      timestamp: at,
      session: this.session,
      ...(indexText !== undefined ? { indexText } : {}),
    });
    switch (step.kind) {
      case 'user': {
        const turn = ++this.turn;
        await this.strategy.save(event(new HumanMessage(datedText(step.user, step.at)), turn, step.at, step.indexText));
        if (step.reply !== false && step.assistant !== undefined)
          await this.strategy.save(
            event(new AIMessage(datedText(step.assistant, step.at)), turn, step.at, step.replyIndexText),
          );
        return;
      }
      case 'assistant':
        await this.strategy.save(
          event(new AIMessage(datedText(step.assistant, step.at)), Math.max(this.turn, 1), step.at, step.indexText),
        );
        return;
      case 'session':
        this.session++;
        return;
      default:
        throw new Error(`${this.scenario.name}: step ${index} (${step.kind}) reached the ranking-only replay`);
    }
  }
}
