/**
 * The strategy contract (docs/design.md §3): a memory stores what happens and, before each model call,
 * assembles the messages the model sees. Few required methods, optional ones, capability flags.
 */
import type { BaseMessage } from '@langchain/core/messages';
import type { z } from 'zod';
import type { ChatModel, Embedder } from '../harness/models/types.js';
import type { CrashPoint } from '../harness/scenarios/format.js';
import type { TokenCounter } from '../harness/core/tokens.js';
import type { DurabilityMode } from '../harness/core/durability-mode.js';
import type { Ranking, Storage, StrategyKind, StrategyTraits } from '../harness/core/strategy-traits.js';

export { DURABILITY_MODES, type DurabilityMode } from '../harness/core/durability-mode.js';

/** `langchain:NAME` names LangChain's classic memories (the adapter loads only when one is asked for). */
export const LANGCHAIN_PREFIX = 'langchain:';

/** A finished message: user, assistant (possibly with tool calls) or tool result. */
export interface MemoryEvent {
  message: BaseMessage;
  /** Index of the user turn this message belongs to (1-based). */
  turn: number;
  /**
   * An opaque id of the step the message belongs to (`s12`), when the step has ids: the same for a
   * user message and its reply, and the one to report in `RetrievedItem.stepIds`. Never the
   * scenario's own id, which may name the evidence; the harness maps it back.
   */
  stepId?: string;
  /** ISO time of the message, when the scenario gives one (dataset sessions). */
  timestamp?: string;
  /**
   * The conversation session the message was said in: the count of session boundaries before it
   * (0 before the first). A number, never a dataset's session id; `unit=session` retrievers join a
   * session's messages into one document by it.
   */
  session?: number;
  /**
   * The message as a paper's retrieval corpus holds it, when that differs from the message's text
   * (LoCoMo's RAG indexes an utterance as `SPEAKER said, "TEXT"`; LongMemEval's a turn's content
   * untrimmed). Only rankers reproducing a paper's corpus read it (`bm25` with `ranker: okapi-paper`).
   */
  indexText?: string;
}

/** What the next model call is about: vector and entity strategies retrieve with it. */
export interface LoadInput {
  query: string;
  turn: number;
  timestamp?: string;
  /**
   * Rank at least this many candidates into `retrieved` (when the store holds them), beyond the
   * `k` the context uses: the harness asks on probes, for retrieval metrics at several k.
   */
  rankDepth?: number;
}

/** One item a retrieving strategy ranked for a query, with the scenario steps it came from. */
export interface RetrievedItem {
  /** The (opaque) step ids of the messages the item holds (or was derived from), as `save` received them; may be empty. */
  stepIds: string[];
  /** The strategy's own score (higher ranks first); comparable only within one ranking. */
  score: number;
}

export interface LoadResult {
  messages: BaseMessage[];
  /**
   * Strategies that retrieve: what they ranked for this query, best first, not cut to the `k`
   * that went into the context (at least `rankDepth` items when they have them). When
   * `rankDepth` is given, everything stored competes, recent items included verbatim too (as
   * retrieval benchmarks rank the whole history). Retrieval metrics (recall@k, NDCG@k) are
   * judged on it.
   */
  retrieved?: RetrievedItem[];
}

/** Something the user explicitly asked the agent to keep. */
export interface MemoryItem {
  content: string;
  /** A stable name for the memory; strategies derive one from the content when absent. */
  name?: string;
  type?: 'user' | 'feedback' | 'project' | 'reference';
  scope?: 'global' | 'project';
  priority?: 'high' | 'normal' | 'low';
  /** One line for an index (file-index: at most 150 characters). */
  description?: string;
  /** ISO date after which the memory no longer counts. */
  expires?: string;
  /** The opaque id of the step that asked for it, when the step has an id (retrieval metrics trace a memory back to it). */
  stepId?: string;
}

/** Returned once the memory is as durable as the strategy's mode promises. */
export interface RememberAck {
  name: string;
}

export interface StrategyCapabilities {
  /** State survives close + reopen on the same dir. */
  persistent: boolean;
  /** Implements remember / forget itself (otherwise the agent loop records them as messages). */
  explicitMemory: boolean;
  /** Does work off the hot path (flush() finishes it). */
  backgroundWork: boolean;
  /**
   * Keeps a compressed form of what it is told (a summary): an acknowledged memory can be
   * summarised away with no crash at all, so the durability checks count such losses apart
   * ("compressed away") instead of as violations of invariants 1 and 5.
   */
  lossy?: boolean;
  /**
   * What `remember` keeps lives in process memory (a peer's in-memory store) even though the
   * messages persist: remembered items survive no reopen and no crash, by design of the library.
   */
  volatileMemories?: boolean;
}

export interface MemoryStrategy {
  readonly capabilities: StrategyCapabilities;
  /** Opens (or reopens after a crash) what was persisted in the context dir. */
  open(): Promise<void>;
  save(event: MemoryEvent): Promise<void>;
  load(input: LoadInput): Promise<LoadResult>;
  remember?(item: MemoryItem): Promise<RememberAck>;
  forget?(nameOrContent: string): Promise<boolean>;
  /** Finishes background work. */
  flush?(): Promise<void>;
  /** Clean shutdown: persists what `exit` mode promised, releases files. */
  close(): Promise<void>;
  /**
   * A session boundary on the open strategy, without closing its stores: the harness calls it in
   * replayed dataset scenarios (~50 boundaries a LongMemEval question) instead of close() and a
   * fresh instance's open(). It must leave the strategy as that reopen would (what it holds in
   * process equals what it persisted, and it forgets what a fresh instance would not know), and
   * returns false, doing nothing, where it cannot (a mode that holds writes back): the harness
   * then closes and reopens it. Scripted scenarios and crash cells always reopen.
   */
  newSession?(): Promise<boolean>;
  /**
   * Everything the strategy has persisted, as texts (memories, messages, summaries). Used only
   * by the durability checks after a crash ("is the acknowledged memory still there?"), never on
   * the hot path. Without it the checks fall back to load().
   */
  snapshot?(): Promise<string[]>;
  /** Integrity of the persisted store: torn or unparsable files, index/file disagreements. */
  verify?(): Promise<StoreCheck>;
  /** Background jobs queued and not yet finished (durable queues report what survived a crash). */
  pendingJobs?(): number;
  /**
   * Stored items it found but could not read (a torn or garbage memory file), and so left out
   * of what load() returns, as `file: reason`. The runner records them in the cell's result and
   * fails the cell, so nothing is dropped in silence.
   */
  unreadable?(): string[];
}

/** What `verify()` found wrong with a strategy's files. */
export interface StoreCheck {
  /** Files or records that do not parse. */
  torn: number;
  /** Disagreements between an index (e.g. MEMORY.md) and what it indexes. */
  indexMismatches: number;
  details: string[];
}

/** Everything a strategy may use; no hidden globals, so a fresh process can rebuild it. */
export interface StrategyContext {
  /** The strategy's own directory; the same dir is handed over again after a session boundary or crash. */
  dir: string;
  tokens: TokenCounter;
  model: ChatModel;
  embedder: Embedder;
  durability: DurabilityMode;
  seed: number;
  now: () => Date;
  /**
   * Called by a strategy at its named crash points (e.g. `mid_memory_write` between a temp file
   * and its rename, `mid_summary` inside a background job). In an agent process with that point
   * armed it kills the process with SIGKILL; elsewhere it does nothing.
   */
  checkpoint?: (point: CrashPoint) => void;
}

/** A registry entry: name as on the CLI, knobs as a zod schema with defaults, and a factory. */
export interface StrategyDefinition<Options extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  options: Options;
  /** The durability mode used when the user names none. */
  defaultDurability: DurabilityMode;
  /**
   * The modes the strategy really offers, when not all four (a peer library that commits on every
   * write and has no other setting): other modes are refused before a cell runs, and
   * `--price-durability` prices only these.
   */
  durabilityModes?: readonly DurabilityMode[];
  /** Knobs always shown in a run's label (e.g. `window(k=2)`); swept knobs are shown anyway. */
  labelKnobs?: readonly string[];
  /**
   * Every message it puts into a context is a stored message's own text (the message itself, or a
   * retrieved exchange quoting it): buffer, window, vector, bm25, hybrid. Evidence recall then
   * holds an evidence message only when its text is in the context. `false` declares that it
   * transforms what it keeps (summaries, entity notes, memory files): a message also counts as
   * held when a context message covers its rare terms. Left out (a user strategy that says
   * nothing), the strict rule applies, so no strategy is credited with what it does not show.
   */
  keepsVerbatim?: boolean;
  /**
   * What kind of memory it is (harness/core/strategy-traits.ts): the reports pick the cells a
   * question is about by it (`explain`'s window, summary, retrieval and files questions), the
   * bench its targets (a full history is exempt from the flat target). Left out, the reports
   * treat the strategy as none of the built-in kinds.
   */
  kind?: StrategyKind;
  /** Where it persists; `files` makes the bench compare its turns with a durable file write instead of a SQLite commit. */
  storage?: Storage;
  /** How a `retrieval` strategy ranks. */
  ranks?: Ranking;
  /** Calls the model on every turn by design: the bench reports its per-turn cost against the floor but holds no target to it. */
  callsModelEveryTurn?: boolean;
  /** Crash points inside the strategy it calls `checkpoint` at (the fuzzer aims only at reachable points). */
  crashPoints?: readonly CrashPoint[];
  /**
   * Loads now what the strategy otherwise loads on first use (a native addon, a parser, a
   * dictionary): a spare agent process waiting to recover a crashed cell of this strategy calls
   * it, so the recovery does not. The hint says what the cell's scenario holds, so a strategy
   * loads only what that text will need.
   */
  preload?(hint: PreloadHint): void;
  /**
   * What `preload` can be handed beyond `cjk`, computed once per cell in the process that runs it
   * from the texts its agent processes will be given (user and assistant messages, memories, probe
   * questions; never expected answers): the lexical strategies cut the Chinese in them with jieba
   * there, so an agent process whose Chinese is all among them never loads the dictionary itself.
   * Only for cells whose scenario has CJK text.
   */
  preloadShared?(texts: readonly string[]): Partial<PreloadHint>;
  create(context: StrategyContext, options: z.output<Options>): MemoryStrategy;
}

/** What a spare is told about the cell it will serve, for `preload`. */
export interface PreloadHint {
  /** The scenario has CJK text (a Chinese segmenter's dictionary will be needed). */
  cjk: boolean;
  /** Han text already cut by jieba where the cell runs (the definition's `preloadShared`). */
  jiebaCuts?: readonly JiebaCut[];
}

/** A piece of Han text and jieba's search-mode terms for it (strategies/shared/segmenters.ts). */
export type JiebaCut = readonly [piece: string, terms: readonly string[]];

/** The traits results.json records for a definition (absent when it declares no kind). */
export function traitsOf(definition: StrategyDefinition): StrategyTraits | undefined {
  if (definition.kind === undefined) return undefined;
  return {
    kind: definition.kind,
    keepsVerbatim: definition.keepsVerbatim === true,
    storage: definition.storage ?? 'sqlite',
    ...(definition.ranks !== undefined ? { ranks: definition.ranks } : {}),
    callsModelEveryTurn: definition.callsModelEveryTurn === true,
  };
}

/** Helps a strategy file keep its option types when declaring its definition. */
export function defineStrategy<Options extends z.ZodType>(
  definition: StrategyDefinition<Options>,
): StrategyDefinition<Options> {
  return definition;
}

/** One knob of a strategy: its name, and its default when the schema gives one. */
export interface StrategyKnob {
  name: string;
  default?: unknown;
}

/**
 * The knobs a definition's options schema declares (the keys of an object schema; none for any
 * other schema), each with the value its schema gives when the knob is left out.
 */
export function strategyKnobs(definition: StrategyDefinition): StrategyKnob[] {
  const shape = (definition.options as { shape?: Record<string, z.ZodType> }).shape;
  if (shape === undefined || typeof shape !== 'object') return [];
  return Object.entries(shape).map(([name, schema]) => {
    const fallback = schema.safeParse(undefined);
    return fallback.success && fallback.data !== undefined ? { name, default: fallback.data } : { name };
  });
}
