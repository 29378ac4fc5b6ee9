/** Providers the strategies and the harness call: chat models and embedders (docs/design.md §4). */
import type { BaseMessage } from '@langchain/core/messages';

/**
 * What a model call is for. A live model only reads the messages; the task tells the harness
 * how to account for the call (maintenance vs answer tokens) and lets the offline reference
 * model pick its deterministic behaviour without ever seeing gold data.
 */
export type ModelTask =
  | 'reply'
  | 'answer'
  | 'summarize'
  | 'extract-entities'
  | 'summarize-entity'
  | 'extract-memories'
  | 'extract-facts'
  | 'judge';

/** Tasks whose tokens count as memory maintenance (not conversation). */
export const MAINTENANCE_TASKS: ReadonlySet<ModelTask> = new Set([
  'summarize',
  'extract-entities',
  'summarize-entity',
  'extract-memories',
  'extract-facts',
]);

export interface ChatRequest {
  task: ModelTask;
  messages: BaseMessage[];
  maxOutputTokens?: number;
}

export interface ChatResponse {
  text: string;
  /** True when the answer came from the response cache (its latency is not a model latency). */
  cached: boolean;
  /** Wall time of a live call, retries and backoff included, queueing for a concurrency slot excluded; absent for cache hits and the offline model. */
  latencyMs?: number;
  /** True when the endpoint stopped the text at the request's output token limit (`finish_reason: "length"`): it is cut short. */
  cut?: boolean;
}

export interface ChatModel {
  /** `offline` or `openai:NAME`: printed in every report so offline scores are never mistaken for a live model's. */
  readonly id: string;
  readonly offline: boolean;
  chat(request: ChatRequest): Promise<ChatResponse>;
}

export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}
