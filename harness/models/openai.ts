/**
 * The `openai` provider (docs/design.md §4): chat and embeddings through the official SDK against any
 * OpenAI-compatible endpoint: request bodies and response decoding here; bounded concurrency,
 * retries, timeouts and key-free error messages in endpoint.ts.
 */
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { AIMessage, ChatMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { MembenchError } from '../core/errors.js';
import { messageText } from '../core/tokens.js';
import {
  displayUrl,
  Endpoint,
  MalformedResponse,
  MAX_RESPONSE_BYTES,
  positiveInteger,
  type EndpointOptions,
} from './endpoint.js';
import type { ChatModel, ChatRequest, ChatResponse, Embedder } from './types.js';
import { isRecord } from '../core/guards.js';
import { shownValue } from '../core/user-input.js';
import { collapseWhitespace, shortenText } from '../core/text.js';
import { MAX_ANSWER_CHARS } from '../core/numbers.js';

/** Dimensions of well-known embedding models, so `dimensions` is right before the first call. */
const KNOWN_DIMENSIONS: Readonly<Record<string, number>> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
};

/** Everything the provider can be told by flags, config or tests; unset fields fall back to env, then defaults. */
export interface OpenAIProviderOptions extends EndpointOptions {
  /** Sampling temperature; unset leaves the endpoint's default. Part of the cache key. */
  temperature?: number;
  /** Embedder: vector size to request (text-embedding-3 models) and to expect. */
  dimensions?: number;
  /** Embedder: vector size to expect without requesting it (`openai:NAME:DIM` for models that take no `dimensions` parameter). */
  expectedDimensions?: number;
  /** Embedder: texts per request (default 128). */
  batchSize?: number;
}

/** Live-provider settings that travel to agent processes as plain data (the key only over IPC). */
export type LiveProviderSettings = Pick<
  OpenAIProviderOptions,
  'baseUrl' | 'apiKey' | 'concurrency' | 'timeoutMs' | 'maxRetries' | 'temperature'
>;

/** Converts LangChain messages to chat-completions messages: tool calls with JSON string arguments, results with `tool_call_id`. */
export function toChatMessages(messages: readonly BaseMessage[]): ChatCompletionMessageParam[] {
  return messages.map((message): ChatCompletionMessageParam => {
    const content = messageText(message);
    if (AIMessage.isInstance(message)) {
      const calls = message.tool_calls ?? [];
      if (calls.length === 0) return { role: 'assistant', content };
      return {
        role: 'assistant',
        content: content.length > 0 ? content : null,
        tool_calls: calls.map((call, index) => ({
          id: call.id ?? `call_${index}`,
          type: 'function' as const,
          function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
        })),
      };
    }
    if (ToolMessage.isInstance(message)) return { role: 'tool', tool_call_id: message.tool_call_id, content };
    const type = message.getType();
    if (type === 'human') return { role: 'user', content };
    if (type === 'system') return { role: 'system', content };
    if (ChatMessage.isInstance(message)) {
      const role = message.role === 'human' ? 'user' : message.role === 'ai' ? 'assistant' : message.role;
      if (role === 'user' || role === 'assistant' || role === 'system' || role === 'developer')
        return { role, content };
    }
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `openai: cannot send a "${type}" message to a chat-completions endpoint`,
    );
  });
}

/** Appended to a cut answer: the count of what was dropped follows it. */
export const TRUNCATION_MARK = ` [membench: answer truncated at ${MAX_ANSWER_CHARS} characters, `;

/** Whether an answer was cut at MAX_ANSWER_CHARS (also when it comes back from the response cache). */
export function isTruncatedAnswer(text: string): boolean {
  return text.length > MAX_ANSWER_CHARS && text.lastIndexOf(TRUNCATION_MARK) === MAX_ANSWER_CHARS;
}

/** `text`, or its first MAX_ANSWER_CHARS characters and how many were dropped. */
export function boundAnswer(text: string): string {
  if (text.length <= MAX_ANSWER_CHARS) return text;
  return `${text.slice(0, MAX_ANSWER_CHARS)}${TRUNCATION_MARK}${text.length - MAX_ANSWER_CHARS} more dropped]`;
}

/**
 * A 200 whose JSON is an error (`{"error": {"message": …}}`, as some proxies and servers answer):
 * its words, which the shape check ("no choices[0].message") would have dropped.
 */
function refuseErrorBody(response: unknown): void {
  if (!isRecord(response) || response.error === undefined || response.error === null) return;
  const detail = isRecord(response.error) ? response.error.message : response.error;
  const words =
    typeof detail === 'string' ? shortenText(collapseWhitespace(detail), 200) : shownValue(response.error, 200);
  throw new MalformedResponse(`status 200 with an error body: ${words}`, 'error');
}

/** A completion's text, and whether the endpoint stopped it at the output token limit (`finish_reason: "length"`). */
interface Completion {
  text: string;
  cut: boolean;
}

function completionText(response: unknown): Completion {
  if (typeof response === 'string')
    throw new MalformedResponse(`got a non-JSON body: ${shownValue(response, 80)}`, 'json');
  if (!(isRecord(response) && Array.isArray(response.choices))) refuseErrorBody(response);
  const choice: unknown = isRecord(response) && Array.isArray(response.choices) ? response.choices[0] : undefined;
  const message = isRecord(choice) ? choice.message : undefined;
  if (!isRecord(message)) throw new MalformedResponse('no choices[0].message');
  const cut = isRecord(choice) && choice.finish_reason === 'length';
  return { text: messageContent(message), cut };
}

/** Part types whose `text` is an answer's text: chat completions' `text`, the Responses API's `output_text`. */
const TEXT_PARTS = new Set(['text', 'output_text']);

/**
 * The text of `choices[0].message`: its `content` as a string, or as a list of parts (some
 * compatible servers answer so) joined; a refusal's words where there is no content; "" for none.
 */
function messageContent(message: Record<string, unknown>): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(partText).join('');
  if (typeof message.refusal === 'string') return message.refusal;
  if (content === null || content === undefined) return '';
  throw new MalformedResponse(
    `choices[0].message.content is ${shownValue(content, 40)}: expected a string or a list of text parts`,
  );
}

function partText(part: unknown, index: number): string {
  const where = `choices[0].message.content[${index}]`;
  if (!isRecord(part)) throw new MalformedResponse(`${where} is ${shownValue(part, 40)}, not a part object`);
  if (part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
  if (!TEXT_PARTS.has(String(part.type)))
    throw new MalformedResponse(
      `${where} is a part of type ${shownValue(part.type, 40)}: membench reads text parts only`,
    );
  if (typeof part.text !== 'string')
    throw new MalformedResponse(`${where}.text is ${shownValue(part.text, 40)}, not a string`);
  return part.text;
}

/** Standard or URL-safe base64, padded or not. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/u;

/**
 * data[position].embedding as floats, refused unless it is a direction: at least one value, every
 * value finite as a float32 (1e308 and 1e400 are not), not all zero (its cosine with any vector is
 * NaN). A vector that is none of these ranked every memory by NaN, in silence.
 */
function decodeVector(embedding: unknown, position: number): Float32Array {
  const where = `data[${position}].embedding`;
  let vector: Float32Array;
  if (Array.isArray(embedding)) {
    const bad = embedding.findIndex((value) => typeof value !== 'number');
    if (bad >= 0) throw new MalformedResponse(`${where}[${bad}] is ${shownValue(embedding[bad], 40)}, not a number`);
    vector = Float32Array.from(embedding as number[]);
  } else if (typeof embedding === 'string') {
    const bytes = Buffer.from(embedding, 'base64');
    if (!BASE64.test(embedding) || bytes.length % 4 !== 0)
      throw new MalformedResponse(
        `${where} is a string that is not base64 of float32 values: ${shownValue(embedding, 40)}`,
      );
    vector = new Float32Array(new Uint8Array(bytes).buffer, 0, bytes.length / 4);
  } else {
    throw new MalformedResponse(`${where} is neither a list of numbers nor base64: ${shownValue(embedding, 40)}`);
  }
  if (vector.length === 0) throw new MalformedResponse(`${where} is empty (a vector of no dimension)`);
  const infinite = vector.findIndex((value) => !Number.isFinite(value));
  if (infinite >= 0) {
    const sent = Array.isArray(embedding) ? embedding[infinite] : vector[infinite];
    throw new MalformedResponse(`${where}[${infinite}] is ${String(sent)}, not a finite float32`);
  }
  if (vector.every((value) => value === 0))
    throw new MalformedResponse(`${where} is all zeros (no direction: its cosine with any vector is undefined)`);
  return vector;
}

function embeddingVectors(response: unknown, expected: number): Float32Array[] {
  if (typeof response === 'string')
    throw new MalformedResponse(`got a non-JSON body: ${shownValue(response, 80)}`, 'json');
  if (!isRecord(response) || !Array.isArray(response.data)) {
    refuseErrorBody(response);
    throw new MalformedResponse('no data[]');
  }
  if (response.data.length !== expected)
    throw new MalformedResponse(`${response.data.length} embeddings for ${expected} inputs`);
  const vectors = new Array<Float32Array | undefined>(expected);
  response.data.forEach((item: unknown, position) => {
    if (!isRecord(item)) throw new MalformedResponse(`data[${position}] is ${shownValue(item, 40)}, not an object`);
    const index = item.index === undefined ? position : item.index;
    // A fraction or a string index filled no slot: the vector strategy then found no vector for a message.
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= expected)
      throw new MalformedResponse(
        `data[${position}].index ${shownValue(index, 40)}: expected a whole number from 0 to ${expected - 1}`,
      );
    if (vectors[index]) throw new MalformedResponse(`data[${position}].index ${index} is given twice`);
    vectors[index] = decodeVector(item.embedding, position);
  });
  return vectors.map((vector) => vector!);
}

/** `openai:NAME` chat model. */
export class OpenAIChatModel implements ChatModel {
  readonly id: string;
  readonly offline = false;
  private readonly endpoint: Endpoint;
  private readonly temperature: number | undefined;

  constructor(
    readonly name: string,
    options: OpenAIProviderOptions = {},
  ) {
    this.id = `openai:${name}`;
    this.endpoint = new Endpoint(options);
    this.temperature = options.temperature;
  }

  /** The exact body sent (never the key): also what the response cache hashes. */
  requestBody(request: ChatRequest): ChatCompletionCreateParamsNonStreaming {
    const body: ChatCompletionCreateParamsNonStreaming = {
      model: this.name,
      messages: toChatMessages(request.messages),
    };
    // o-series and gpt-5 models reject max_tokens; compatible servers still expect it.
    if (request.maxOutputTokens !== undefined) {
      if (/^(o\d|gpt-5)/u.test(this.name)) body.max_completion_tokens = request.maxOutputTokens;
      else body.max_tokens = request.maxOutputTokens;
    }
    if (this.temperature !== undefined) body.temperature = this.temperature;
    return body;
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const body = this.requestBody(request);
    const { value, latencyMs } = await this.endpoint.request('/chat/completions', async (options) =>
      completionText(await (await this.endpoint.client()).chat.completions.create(body, options)),
    );
    // An endpoint (or a proxy) echoing the request's headers must not put the key into memories, results or the cache.
    const text = boundAnswer(this.endpoint.redact(value.text));
    return value.cut ? { text, cached: false, latencyMs, cut: true } : { text, cached: false, latencyMs };
  }
}

/** `openai:NAME` embedder: batched `embeddings.create`, vectors as Float32Array. */
export class OpenAIEmbedder implements Embedder {
  readonly id: string;
  private readonly endpoint: Endpoint;
  private readonly requestedDimensions: number | undefined;
  private readonly batchSize: number;
  private knownDimensions: number;
  /** Where `knownDimensions` came from, for the error that names both sizes. */
  private dimensionSource: string;

  constructor(
    readonly name: string,
    options: OpenAIProviderOptions = {},
  ) {
    this.id = `openai:${name}`;
    this.batchSize = positiveInteger('batchSize', options.batchSize, 128);
    // A batch's body grows with the batch: room for 512 KiB of JSON per input (4,096 dimensions take ~90 KB).
    this.endpoint = new Endpoint({
      maxResponseBytes: Math.max(MAX_RESPONSE_BYTES, this.batchSize * 512 * 1024),
      ...options,
    });
    this.requestedDimensions =
      options.dimensions === undefined ? undefined : positiveInteger('dimensions', options.dimensions, 0);
    const expected =
      options.expectedDimensions === undefined
        ? undefined
        : positiveInteger('expectedDimensions', options.expectedDimensions, 0);
    this.knownDimensions = this.requestedDimensions ?? expected ?? KNOWN_DIMENSIONS[name] ?? 0;
    this.dimensionSource =
      this.requestedDimensions !== undefined
        ? 'as requested'
        : expected !== undefined
          ? `as given in openai:${name}:${expected}`
          : this.knownDimensions > 0
            ? `as ${name} embeds`
            : 'as its first response did';
  }

  /** From the options, the known-model table, or the first response; 0 until then for an unknown model. */
  get dimensions(): number {
    return this.knownDimensions;
  }

  /** What besides the text decides a vector: the response cache hashes it. */
  get parameters(): Record<string, unknown> {
    return { model: this.name, dimensions: this.requestedDimensions ?? null };
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const batches: string[][] = [];
    // Endpoints reject empty inputs; a single space embeds "nothing" the same way every time.
    for (let start = 0; start < texts.length; start += this.batchSize) {
      batches.push(texts.slice(start, start + this.batchSize).map((text) => (text.length > 0 ? text : ' ')));
    }
    const results = await Promise.all(
      batches.map(async (input) => {
        const { value } = await this.endpoint.request('/embeddings', async (options) => {
          const response = await (await this.endpoint.client()).embeddings.create(
            {
              model: this.name,
              input,
              encoding_format: 'float',
              ...(this.requestedDimensions ? { dimensions: this.requestedDimensions } : {}),
            },
            options,
          );
          return embeddingVectors(response, input.length);
        });
        return value;
      }),
    );
    const vectors = results.flat();
    for (const vector of vectors) {
      if (this.knownDimensions === 0) this.knownDimensions = vector.length;
      if (vector.length !== this.knownDimensions) {
        throw new MembenchError(
          'MODEL_ERROR',
          `openai: POST ${displayUrl(this.endpoint.baseUrl, '/embeddings')} returned a ${vector.length}-dimension vector for ${this.id}; expected ${this.knownDimensions} (${this.dimensionSource})`,
        );
      }
    }
    return vectors;
  }
}
