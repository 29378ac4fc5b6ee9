/** Resolves `--model` / `--embedder` provider names to providers, and meters what each call costs. */
import { MembenchError } from '../core/errors.js';
import { checkNumber } from '../core/numbers.js';
import { kindOf } from '../core/user-input.js';
import type { TokenCounter } from '../core/tokens.js';
import { CachedChatModel, CachedEmbedder, ResponseCache } from './cache.js';
import { HASHED_DIMENSIONS, HashedEmbedder } from './hashed-embedder.js';
import { OfflineModel } from './offline.js';
import { isTruncatedAnswer, OpenAIChatModel, OpenAIEmbedder, type OpenAIProviderOptions } from './openai.js';
import {
  MAINTENANCE_TASKS,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type Embedder,
  type ModelTask,
} from './types.js';

export * from './types.js';
export { OfflineModel } from './offline.js';
export { HashedEmbedder } from './hashed-embedder.js';
export { extractEntities } from './offline-entities.js';
export { ConcurrencyLimit, type RetryEvent } from './endpoint.js';
export { OpenAIChatModel, OpenAIEmbedder, toChatMessages, type OpenAIProviderOptions } from './openai.js';
export { ResponseCache, CachedChatModel, CachedEmbedder, canonicalJson, requestKey } from './cache.js';

/** Which cache file (opened here, kept open for the process) or open store (shared, closed by its owner), and which trial. */
export type CacheSelection = { file: string; trial?: number } | { store: ResponseCache; trial?: number };

/** Settings for live providers (flags, env, tests); the offline model and hashed embedder ignore them. */
export interface ProviderOptions extends OpenAIProviderOptions {
  /** The response cache (`--cache`); absent or `false` (`--no-cache`): every call goes to the endpoint. */
  cache?: CacheSelection | false;
}

function cacheStore(selection: CacheSelection): ResponseCache {
  return 'store' in selection ? selection.store : ResponseCache.open(selection.file);
}

/** Whether a model or embedder provider name calls a provider over the network (`openai:NAME`); `offline` and `hashed` never do. */
export function isLiveProvider(provider: string): boolean {
  return provider.startsWith('openai:');
}

/** The NAME of `openai:NAME`, or undefined for another provider. */
function openaiName(provider: string, kind: 'model' | 'embedder'): string | undefined {
  if (!isLiveProvider(provider)) return undefined;
  const name = provider.slice('openai:'.length).trim();
  if (!name)
    throw new MembenchError('INVALID_ARGUMENT', `${kind} "${provider}": expected openai:NAME, e.g. openai:gpt-4o-mini`);
  return name;
}

/** Refuses a provider name that is no string (a program's mistake: a TypeError from inside said nothing). */
function expectName(what: string, provider: unknown, expected: string): void {
  if (typeof provider !== 'string')
    throw new MembenchError('INVALID_ARGUMENT', `${what}: expected ${expected}, got ${kindOf(provider)}`);
}

/** What a model provider name asks for: the offline model, or the NAME of `openai:NAME`. Throws on any other name. */
function parseModelName(provider: string): { offline: true } | { offline: false; name: string } {
  if (provider === 'offline') return { offline: true };
  const name = openaiName(provider, 'model');
  if (name !== undefined) return { offline: false, name };
  throw new MembenchError('INVALID_ARGUMENT', `unknown model "${provider}": expected "offline" or "openai:NAME"`);
}

/** `offline` (default) or `openai:NAME`. */
export function createModel(provider: string, options: ProviderOptions = {}): ChatModel {
  expectName('createModel', provider, '"offline" or "openai:NAME"');
  const parsed = parseModelName(provider);
  if (parsed.offline) return new OfflineModel();
  const model = new OpenAIChatModel(parsed.name, options);
  if (!options.cache) return model;
  return new CachedChatModel(model, cacheStore(options.cache), {
    trial: options.cache.trial ?? 0,
    describe: (request) => model.requestBody(request),
  });
}

/** Models that take a `dimensions` request parameter (OpenAI's text-embedding-3 family); others are only told what to expect. */
const TAKES_DIMENSIONS = /^text-embedding-3/u;

type EmbedderName =
  | { hashed: true; dimensions: number }
  | { hashed: false; name: string; dimensions: number | undefined };

/**
 * What an embedder provider name asks for: `hashed` (default, 256 dimensions), `hashed:DIM`,
 * `openai:NAME` (the dimension learned from the first response) or `openai:NAME:DIM` (the dimension
 * known up front; a name may itself hold colons, as Ollama's `nomic-embed-text:latest`: only an
 * all-digit last part is a dimension). Throws on any other name or a dimension out of range.
 */
function parseEmbedderName(provider: string): EmbedderName {
  const hashed = /^hashed(?::(\d+))?$/u.exec(provider);
  if (hashed)
    return {
      hashed: true,
      dimensions: hashed[1]
        ? checkNumber(`embedder "${provider}": the dimension`, Number(hashed[1]), HASHED_DIMENSIONS)
        : 256,
    };
  const given = openaiName(provider, 'embedder');
  if (given === undefined)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `unknown embedder "${provider}": expected "hashed", "hashed:DIM", "openai:NAME" or "openai:NAME:DIM"`,
    );
  const sized = /^(.+):(\d+)$/u.exec(given);
  const dimensions = sized ? Number(sized[2]) : undefined;
  if (dimensions === 0)
    throw new MembenchError('INVALID_ARGUMENT', `embedder "${provider}": the dimension must be at least 1`);
  return { hashed: false, name: sized ? sized[1]! : given, dimensions };
}

/** A model or embedder provider name as the run reads it (`model: offline`, `embedder: hashed:64`): throws what creating it would, without creating it. */
export function checkProviderName(kind: 'model' | 'embedder', provider: string): void {
  if (kind === 'model') parseModelName(provider);
  else parseEmbedderName(provider);
}

/** Makes the embedder a provider name asks for (parseEmbedderName). */
export function createEmbedder(provider: string, options: ProviderOptions = {}): Embedder {
  expectName('createEmbedder', provider, '"hashed", "hashed:DIM" or "openai:NAME[:DIM]"');
  const parsed = parseEmbedderName(provider);
  if (parsed.hashed) return new HashedEmbedder(parsed.dimensions);
  const { name, dimensions } = parsed;
  const sizing =
    dimensions === undefined ? {} : TAKES_DIMENSIONS.test(name) ? { dimensions } : { expectedDimensions: dimensions };
  const embedder = new OpenAIEmbedder(name, { ...options, ...sizing });
  return options.cache ? new CachedEmbedder(embedder, cacheStore(options.cache), embedder.parameters) : embedder;
}

/** Tokens spent on model calls, split the way reports show them. */
export interface ModelUsage {
  maintenanceCalls: number;
  maintenanceTokens: number;
  answerTokens: number;
  replyTokens: number;
  cachedCalls: number;
  /** Answers cut at MAX_ANSWER_CHARS (absent: none), counted so reports say so. */
  truncatedAnswers?: number;
  /** Answers with no text (an endpoint's `content: null`, or ""), scored as empty (absent: none), counted so reports say so. */
  emptyAnswers?: number;
  /** Calls the endpoint stopped at their output token limit (`finish_reason: "length"`), their text used as it came (absent: none). */
  cutAnswers?: number;
}

export function emptyUsage(): ModelUsage {
  return { maintenanceCalls: 0, maintenanceTokens: 0, answerTokens: 0, replyTokens: 0, cachedCalls: 0 };
}

/** Adds `delta` into `total`, field by field. */
export function addUsage(total: ModelUsage, delta: ModelUsage): void {
  for (const key of usageKeys(total, delta)) total[key] = (total[key] ?? 0) + (delta[key] ?? 0);
}

/** What was used between two readings of the same counter. */
export function usageDelta(now: ModelUsage, before: ModelUsage): ModelUsage {
  const delta = emptyUsage();
  for (const key of usageKeys(now, before)) delta[key] = (now[key] ?? 0) - (before[key] ?? 0);
  if (delta.truncatedAnswers === 0) delete delta.truncatedAnswers;
  if (delta.emptyAnswers === 0) delete delta.emptyAnswers;
  if (delta.cutAnswers === 0) delete delta.cutAnswers;
  return delta;
}

/** The counters either reading holds (an optional one only where it was counted). */
const usageKeys = (a: ModelUsage, b: ModelUsage): (keyof ModelUsage)[] =>
  [...new Set([...Object.keys(a), ...Object.keys(b)])] as (keyof ModelUsage)[];

/**
 * Wraps a model so every call's input + output tokens are counted by the harness, not by the
 * strategy: a strategy cannot under-report its maintenance cost.
 */
export class MeteredModel implements ChatModel {
  readonly id: string;
  readonly offline: boolean;
  readonly usage: ModelUsage = emptyUsage();
  /** Latencies of live calls that reached the endpoint; cache hits and the offline model add none. */
  readonly latencies: number[] = [];

  constructor(
    private readonly inner: ChatModel,
    private readonly tokens: TokenCounter,
  ) {
    this.id = inner.id;
    this.offline = inner.offline;
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const response = await this.inner.chat(request);
    if (!response.cached && response.latencyMs !== undefined) this.latencies.push(response.latencyMs);
    this.record(
      request.task,
      this.tokens.countMessages(request.messages) + this.tokens.countText(response.text),
      response.cached,
    );
    if (isTruncatedAnswer(response.text)) this.usage.truncatedAnswers = (this.usage.truncatedAnswers ?? 0) + 1;
    if (response.text.trim() === '') this.usage.emptyAnswers = (this.usage.emptyAnswers ?? 0) + 1;
    if (response.cut) this.usage.cutAnswers = (this.usage.cutAnswers ?? 0) + 1;
    return response;
  }

  private record(task: ModelTask, tokens: number, cached: boolean): void {
    if (cached) this.usage.cachedCalls++;
    if (MAINTENANCE_TASKS.has(task)) {
      this.usage.maintenanceCalls++;
      this.usage.maintenanceTokens += tokens;
    } else if (task === 'answer') {
      this.usage.answerTokens += tokens;
    } else {
      this.usage.replyTokens += tokens;
    }
  }
}
