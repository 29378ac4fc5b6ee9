/**
 * What the strategy benchmarks share: a strategy built the way the runner builds it (its
 * definition's factory, a StrategyContext on a temp dir, the offline model behind the metered
 * wrapper, the hashed embedder) but with stopwatches on the model and the embedder, and a seeded
 * conversation played one agent turn at a time.
 */
import { rm } from 'node:fs/promises';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { generateFiller, type FillerExchange } from '../scenarios/filler.js';
import { HashedEmbedder, MeteredModel, OfflineModel } from '../models/index.js';
import { TokenCounter } from '../core/tokens.js';
import type { DurabilityMode, MemoryStrategy, StrategyContext, StrategyDefinition } from '../../strategies/types.js';
import { Stopwatch, TimedEmbedder, TimedModel } from './measure.js';
import { benchTempDir } from './scratch.js';

/** The tokenizer the runner uses for the offline model (`--tokenizer` default): cl100k_base. */
export const BENCH_TOKENIZER = 'offline';
/** Dimensions of the hashed embedder, as `--embedder hashed` gives them. */
export const BENCH_EMBED_DIMENSIONS = 256;
const FIXED_NOW = new Date('2026-01-01T00:00:00Z');

/** One strategy under test: its dir, its counters, and a factory for each durability mode. */
export interface Rig {
  dir: string;
  tokens: TokenCounter;
  model: TimedModel;
  embedder: TimedEmbedder;
  create(durability: DurabilityMode): MemoryStrategy;
  /** Removes the dir. */
  dispose(): Promise<void>;
}

/** A rig for `definition` with its default options (or `options`), in a fresh temp dir. */
export async function makeRig(
  definition: StrategyDefinition,
  options: Record<string, unknown> = {},
  seed = 7,
): Promise<Rig> {
  const dir = await benchTempDir(`membench-bench-${definition.name.replace(/[^a-z0-9-]/giu, '-')}-`);
  const tokens = new TokenCounter(BENCH_TOKENIZER);
  const model = new TimedModel(new MeteredModel(new OfflineModel(), tokens), new Stopwatch());
  const embedder = new TimedEmbedder(new HashedEmbedder(BENCH_EMBED_DIMENSIONS), new Stopwatch());
  const parsed = definition.options.parse(options) as Record<string, unknown>;
  const context = (durability: DurabilityMode): StrategyContext => ({
    dir,
    tokens,
    model,
    embedder,
    durability,
    seed,
    now: () => FIXED_NOW,
  });
  return {
    dir,
    tokens,
    model,
    embedder,
    create: (durability) => definition.create(context(durability), parsed),
    dispose: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The benchmark conversation: seeded small talk in English and Chinese (the filler generator), `count` exchanges. */
export function conversation(count: number, seed = 42): FillerExchange[] {
  return generateFiller(count, { seed, language: 'mixed' });
}

/** What one agent turn cost and returned. */
export interface TurnTiming {
  saveMs: number;
  loadMs: number;
  /** Model time spent inside the turn (part of saveMs + loadMs), metering included. */
  modelMs: number;
  /** Embedder time spent inside the turn (part of saveMs + loadMs). */
  embedMs: number;
  messages: BaseMessage[];
}

/**
 * One agent turn as harness/agent/loop.ts plays it: save the user message, load the context with the
 * user text as the query, save the reply.
 */
export async function playTurn(
  strategy: MemoryStrategy,
  rig: Pick<Rig, 'model' | 'embedder'>,
  turn: number,
  exchange: FillerExchange,
): Promise<TurnTiming> {
  const modelBefore = rig.model.watch.ms;
  const embedBefore = rig.embedder.watch.ms;
  const started = performance.now();
  await strategy.save({ message: new HumanMessage(exchange.user), turn });
  const saved = performance.now();
  const { messages } = await strategy.load({ query: exchange.user, turn });
  const loaded = performance.now();
  await strategy.save({ message: new AIMessage(exchange.assistant), turn });
  const done = performance.now();
  return {
    saveMs: saved - started + (done - loaded),
    loadMs: loaded - saved,
    modelMs: rig.model.watch.ms - modelBefore,
    embedMs: rig.embedder.watch.ms - embedBefore,
    messages,
  };
}
