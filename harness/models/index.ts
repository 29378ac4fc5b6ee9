/** Resolves `--model` / `--embedder` specs to providers, and meters what each call costs. */
import { MembenchError } from '../errors.js';
import type { TokenCounter } from '../tokens.js';
import { HashedEmbedder, OfflineModel } from './offline.js';
import { MAINTENANCE_TASKS, type ChatModel, type ChatRequest, type ChatResponse, type Embedder, type ModelTask } from './types.js';

export * from './types.js';
export { OfflineModel, HashedEmbedder, extractEntities } from './offline.js';

/** `offline` (default) or `openai:NAME`. */
export function createModel(spec: string): ChatModel {
  if (spec === 'offline') return new OfflineModel();
  if (spec.startsWith('openai:')) {
    throw new MembenchError('NOT_SUPPORTED', `model "${spec}": the openai provider is not supported yet; use --model offline`);
  }
  throw new MembenchError('INVALID_ARGUMENT', `unknown model "${spec}": expected "offline" or "openai:NAME"`);
}

/** `hashed` (default, 256 dimensions), `hashed:DIM`, or `openai:NAME`. */
export function createEmbedder(spec: string): Embedder {
  const hashed = /^hashed(?::(\d+))?$/u.exec(spec);
  if (hashed) return new HashedEmbedder(hashed[1] ? Number(hashed[1]) : 256);
  if (spec.startsWith('openai:')) {
    throw new MembenchError('NOT_SUPPORTED', `embedder "${spec}": the openai provider is not supported yet; use --embedder hashed`);
  }
  throw new MembenchError('INVALID_ARGUMENT', `unknown embedder "${spec}": expected "hashed", "hashed:DIM" or "openai:NAME"`);
}

/** Tokens spent on model calls, split the way reports show them. */
export interface ModelUsage {
  maintenanceCalls: number;
  maintenanceTokens: number;
  answerTokens: number;
  replyTokens: number;
  cachedCalls: number;
}

export function emptyUsage(): ModelUsage {
  return { maintenanceCalls: 0, maintenanceTokens: 0, answerTokens: 0, replyTokens: 0, cachedCalls: 0 };
}

/**
 * Wraps a model so every call's input + output tokens are counted by the harness, not by the
 * strategy: a strategy cannot under-report its maintenance cost.
 */
export class MeteredModel implements ChatModel {
  readonly id: string;
  readonly offline: boolean;
  readonly usage: ModelUsage = emptyUsage();

  constructor(
    private readonly inner: ChatModel,
    private readonly tokens: TokenCounter,
  ) {
    this.id = inner.id;
    this.offline = inner.offline;
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const response = await this.inner.chat(request);
    this.record(request.task, this.tokens.countMessages(request.messages) + this.tokens.countText(response.text), response.cached);
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
