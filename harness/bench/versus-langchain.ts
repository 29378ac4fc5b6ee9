/**
 * membench's `window` and `summary-buffer` side by side with LangChain's BufferWindowMemory and
 * ConversationSummaryBufferMemory (through the `langchain:` adapter), in one process, on the same
 * seeded conversation, with the same offline model and the same kind of token counter: the time
 * per turn, the model calls, and the largest context each one sends against its limit.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { langchainDefinition } from '../../strategies/langchain.js';
import { summaryBuffer } from '../../strategies/summary-buffer.js';
import type { DurabilityMode, StrategyDefinition } from '../../strategies/types.js';
import { window } from '../../strategies/window.js';
import { distribution } from '../core/metrics.js';
import { measure, type Timing } from './measure.js';
import { conversation, makeRig, playTurn } from './rig.js';

/** Sizes of the comparison: turns played and the shared limits. */
export interface VersusOptions {
  turns: number;
  /** k of both window memories. */
  windowK: number;
  /** maxTokenLimit of both summary-buffer memories. */
  maxTokenLimit: number;
  /** Wall-time budget of one memory's run: a memory whose turns keep getting slower stops early (its turns played are reported). */
  budgetMs: number;
  onProgress?: (line: string) => void;
}

/** The bound a memory is configured with: k exchanges, or a token limit for the whole context. */
export type ContextLimit = { kind: 'exchanges'; value: number } | { kind: 'tokens'; value: number };

/** One memory over the whole conversation. */
export interface VersusRun {
  strategy: string;
  durability: DurabilityMode;
  /** Turns played: fewer than asked when the run hit its time budget. */
  turnsPlayed: number;
  /** Mean wall time per turn over the turns every run of its pair played (the fair comparison when one run stopped early). */
  commonMeanMs: number;
  /** Per turn (save user + load + save reply), wall time: model calls included. */
  turn: Timing;
  /** Per turn, model time excluded. */
  withoutModelP50Ms: number;
  totalMs: number;
  modelCalls: number;
  modelShare: number;
  limit: ContextLimit;
  /** Tokens of the context sent to the model (counted as billed), largest and mean over turns. */
  maxContextTokens: number;
  meanContextTokens: number;
  /** Earlier exchanges in the context besides the current user message (window memories). */
  maxEarlierExchanges: number;
  /** Turns whose context broke the limit (tokens only: an exchange limit is a setting, not a bound on tokens). */
  turnsOverLimit: number;
}

/** A membench strategy (in its default `sync` and in `none`, LangChain's in-memory equivalent) against its LangChain anchor. */
export interface VersusPair {
  title: string;
  ours: VersusRun[];
  langchain: VersusRun;
  /** Turns every run of the pair played: `commonMeanMs` is over these. */
  commonTurns: number;
}

/** A run with its per-turn wall times, until the pair's common turn count is known. */
type PlayedRun = Omit<VersusRun, 'commonMeanMs'> & { perTurnMs: number[] };

/** The run with its mean over the first `turns` turns, per-turn samples dropped. */
function withCommonMean({ perTurnMs, ...run }: PlayedRun, turns: number): VersusRun {
  const first = perTurnMs.slice(0, turns);
  return { ...run, commonMeanMs: first.length > 0 ? first.reduce((sum, ms) => sum + ms, 0) / first.length : NaN };
}

/** Both pairs, or why they could not run. */
export interface VersusResult {
  turns: number;
  pairs: VersusPair[];
  skipped?: string;
}

const earlierExchanges = (messages: readonly BaseMessage[]): number =>
  Math.max(0, messages.filter((message) => message.getType() === 'human').length - 1);

async function play(
  definition: StrategyDefinition,
  options: Record<string, unknown>,
  durability: DurabilityMode,
  limit: ContextLimit,
  turns: number,
  budgetMs: number,
): Promise<PlayedRun> {
  const rig = await makeRig(definition, options);
  const exchanges = conversation(turns, 1000);
  const strategy = rig.create(durability);
  const contextTokens: number[] = [];
  const withoutModel: number[] = [];
  const perTurnMs: number[] = [];
  let maxEarlier = 0;
  let turn = 0;
  const stop = new AbortController();
  try {
    await strategy.open();
    const deadline = performance.now() + budgetMs;
    const timing = await measure(
      definition.name,
      async () => {
        const played = await playTurn(strategy, rig, turn + 1, exchanges[turn]!);
        turn++;
        contextTokens.push(rig.tokens.countMessages(played.messages));
        maxEarlier = Math.max(maxEarlier, earlierExchanges(played.messages));
        const wallMs = played.saveMs + played.loadMs;
        perTurnMs.push(wallMs);
        withoutModel.push(Math.max(0, wallMs - played.modelMs - played.embedMs));
        if (performance.now() > deadline && turn < turns) stop.abort();
        return { durationMs: wallMs };
      },
      { iterations: turns, signal: stop.signal },
    );
    await strategy.close();
    const context = distribution(contextTokens);
    const totalMs = timing.meanMs * timing.samples;
    return {
      strategy: definition.name,
      durability,
      turnsPlayed: turn,
      perTurnMs,
      turn: timing,
      withoutModelP50Ms: distribution(withoutModel).p50,
      totalMs,
      modelCalls: rig.model.watch.calls,
      modelShare: totalMs > 0 ? rig.model.watch.ms / totalMs : 0,
      limit,
      maxContextTokens: context.max,
      meanContextTokens: context.mean,
      maxEarlierExchanges: maxEarlier,
      turnsOverLimit: limit.kind === 'tokens' ? contextTokens.filter((tokens) => tokens > limit.value).length : 0,
    };
  } finally {
    await rig.dispose();
  }
}

/** Runs both pairs; a missing `@langchain/classic` is reported as a skip, not an error. */
export async function benchVersusLangChain(options: VersusOptions): Promise<VersusResult> {
  let lcWindow: StrategyDefinition;
  let lcSummaryBuffer: StrategyDefinition;
  try {
    [lcWindow, lcSummaryBuffer] = await Promise.all([
      langchainDefinition('buffer-window'),
      langchainDefinition('summary-buffer'),
    ]);
  } catch (error) {
    return { turns: options.turns, pairs: [], skipped: (error as Error).message };
  }
  const windowLimit: ContextLimit = { kind: 'exchanges', value: options.windowK };
  const tokenLimit: ContextLimit = { kind: 'tokens', value: options.maxTokenLimit };
  const pairs: VersusPair[] = [];
  const matchups = [
    {
      title: 'window vs BufferWindowMemory',
      ours: window as StrategyDefinition,
      theirs: lcWindow,
      knobs: { k: options.windowK },
      limit: windowLimit,
    },
    {
      title: 'summary-buffer vs ConversationSummaryBufferMemory',
      ours: summaryBuffer as StrategyDefinition,
      theirs: lcSummaryBuffer,
      knobs: { maxTokenLimit: options.maxTokenLimit },
      limit: tokenLimit,
    },
  ];
  for (const matchup of matchups) {
    options.onProgress?.(`langchain: ${matchup.title}, ${options.turns} turns`);
    const ours: PlayedRun[] = [];
    for (const durability of ['sync', 'none'] as const)
      ours.push(await play(matchup.ours, matchup.knobs, durability, matchup.limit, options.turns, options.budgetMs));
    const langchain = await play(matchup.theirs, matchup.knobs, 'none', matchup.limit, options.turns, options.budgetMs);
    const commonTurns = Math.min(langchain.turnsPlayed, ...ours.map((run) => run.turnsPlayed));
    pairs.push({
      title: matchup.title,
      ours: ours.map((run) => withCommonMean(run, commonTurns)),
      langchain: withCommonMean(langchain, commonTurns),
      commonTurns,
    });
  }
  return { turns: options.turns, pairs };
}
