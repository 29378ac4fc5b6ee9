/**
 * What the local OpenAI-compatible endpoint answers, apart from HTTP: a chat-completions or
 * embeddings request body in, the response body (or a RequestError with its status) out. The
 * server (server.ts) answers small requests with it on its own thread, and `membench serve`'s
 * large ones in a worker thread (server-worker.ts) over the same model and embedder.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { inRange, type NumberRange, outsideRange } from '../core/numbers.js';
import { LONE_SURROGATE_PROBLEM, loneSurrogatesIn } from '../core/text.js';
import { countedTexts, TokenCounter } from '../core/tokens.js';
import { describeInput, formatPath } from '../core/user-input.js';
import { classifyPeerRequest } from './peer-requests.js';
import type { ChatModel, Embedder } from './types.js';
import { errorMessage } from '../core/errors.js';

/**
 * The longest run of characters without white space, or of white space, a text may hold. Token
 * counting merges one such run (a base64 blob, a minified file, Chinese without spaces) as a whole,
 * in n log n with a large constant (about a second per 100,000 characters), so a longer run is
 * refused (413) before any work. Text of ordinary words is counted in linear time, whatever its
 * length.
 */
export const MAX_UNSPACED_CHARS = 16_384;
/** Texts one embeddings request may hold: the OpenAI API's limit (2,048 inputs a request). */
export const MAX_EMBEDDING_INPUTS = 2048;
const LONG_RUN = /[^\p{White_Space}]+|\p{White_Space}+/gu;

/** Refuses a text holding a run without white space (or of white space) longer than MAX_UNSPACED_CHARS (one linear scan). */
export function refuseUnboundedText(text: string, where: string): void {
  if (text.length <= MAX_UNSPACED_CHARS) return;
  LONG_RUN.lastIndex = 0;
  for (let run = LONG_RUN.exec(text); run !== null; run = LONG_RUN.exec(text)) {
    if (run[0].length <= MAX_UNSPACED_CHARS) continue;
    const what = /\p{White_Space}/u.test(run[0][0]!) ? 'of white space' : 'without white space';
    throw new RequestError(
      413,
      `${where}: a run of ${run[0].length} characters ${what} at character ${run.index}; this endpoint counts tokens of runs up to ${MAX_UNSPACED_CHARS} characters (one run is merged as a whole, in more than linear time)`,
      where,
    );
  }
}

/** A request the endpoint refuses, with the status and the OpenAI-style error it answers. */
export class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

/**
 * A request body as JSON text, else a 400: bytes that are not UTF-8 (never read with U+FFFD in their
 * place), text that is not JSON, and a string or key holding a lone surrogate (`"\ud800"`, an escape
 * no text holds), named by its field as the scenario loader names one.
 */
export function parseBody(body: Buffer | Uint8Array): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new RequestError(400, 'the body is not UTF-8 text');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new RequestError(400, 'the body is not JSON');
  }
  const [at] = loneSurrogatesIn(value, 1).paths;
  if (at) {
    const where = at.length > 0 ? formatPath(at) : undefined;
    throw new RequestError(400, `${where ?? 'the body'}: ${LONE_SURROGATE_PROBLEM}`, where);
  }
  return value;
}

/** The status and OpenAI-style error body answered for an error (a RequestError's own status, else 500). */
export function refusal(error: unknown): { status: number; body: unknown } {
  const known = error instanceof RequestError;
  return {
    status: known ? error.status : 500,
    body: {
      error: {
        message: errorMessage(error),
        type: known ? 'invalid_request_error' : 'server_error',
        param: known ? (error.param ?? null) : null,
        code: null,
      },
    },
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The text of a chat message's content: a string, or the text parts of a list. */
function contentText(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (Array.isArray(content)) {
    return content
      .map((part, index) => {
        if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') return part.text;
        throw new RequestError(400, `${where}.content[${index}]: only text parts are supported`, `${where}.content`);
      })
      .join('');
  }
  throw new RequestError(400, `${where}.content: expected a string or a list of text parts`, `${where}.content`);
}

/** Chat-completions messages as LangChain messages (what membench models take). */
export function fromChatMessages(messages: unknown): BaseMessage[] {
  if (!Array.isArray(messages) || messages.length === 0)
    throw new RequestError(400, 'messages: expected a non-empty list', 'messages');
  return messages.map((message: unknown, index) => {
    const where = `messages[${index}]`;
    if (!isRecord(message)) throw new RequestError(400, `${where}: expected an object`, where);
    const content = contentText(message.content, where);
    switch (message.role) {
      case 'system':
      case 'developer':
        return new SystemMessage(content);
      case 'user':
        return new HumanMessage(content);
      case 'assistant': {
        const calls = Array.isArray(message.tool_calls) ? message.tool_calls : [];
        return new AIMessage({
          content,
          tool_calls: calls.map((call: unknown, callIndex) => {
            const fn = isRecord(call) && isRecord(call.function) ? call.function : undefined;
            if (!fn || typeof fn.name !== 'string')
              throw new RequestError(
                400,
                `${where}.tool_calls[${callIndex}]: expected {function: {name, arguments}}`,
                `${where}.tool_calls`,
              );
            let args: unknown = {};
            try {
              args = typeof fn.arguments === 'string' && fn.arguments ? JSON.parse(fn.arguments) : {};
            } catch {
              throw new RequestError(
                400,
                `${where}.tool_calls[${callIndex}].function.arguments: not JSON`,
                `${where}.tool_calls`,
              );
            }
            return {
              id: isRecord(call) && typeof call.id === 'string' ? call.id : `call_${callIndex}`,
              name: fn.name,
              args: isRecord(args) ? args : {},
            };
          }),
        });
      }
      case 'tool':
        return new ToolMessage({
          content,
          tool_call_id: typeof message.tool_call_id === 'string' ? message.tool_call_id : '',
        });
      default:
        throw new RequestError(
          400,
          `${where}.role: expected system, developer, user, assistant or tool`,
          `${where}.role`,
        );
    }
  });
}

/** What `n`, `max_tokens` and `max_completion_tokens` may be, as the OpenAI API takes them: 0, -5, 1.5 and "3" are refused. */
const POSITIVE_WHOLE: NumberRange = { whole: true, min: 1, max: Number.MAX_SAFE_INTEGER };

/** `body[name]` when it is a whole number >= 1, undefined when absent or null, else a 400 naming it. */
function positiveWhole(body: Record<string, unknown>, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (!inRange(value, POSITIVE_WHOLE))
    throw new RequestError(400, `${name}: ${outsideRange(value, POSITIVE_WHOLE)}, got ${describeInput(value)}`, name);
  return value;
}

/**
 * Refuses what this endpoint cannot honour rather than answering something else: `stream` (true, or
 * not a boolean), `n` above 1, a `max_tokens` or `n` that is no whole number >= 1, a `tool_choice`
 * that asks for a tool call (it never makes one), `tools` that are no tool list. Returns the output
 * limit asked for (`max_completion_tokens`, else `max_tokens`).
 */
function checkChatOptions(body: Record<string, unknown>): number | undefined {
  const stream = body.stream;
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean')
    throw new RequestError(400, `stream: expected true or false, got ${describeInput(stream)}`, 'stream');
  if (stream === true) throw new RequestError(400, 'stream: streaming is not supported by this endpoint', 'stream');
  const n = positiveWhole(body, 'n');
  if (n !== undefined && n > 1)
    throw new RequestError(
      400,
      `n: this endpoint answers with one choice per request, not ${n}: send ${n} requests`,
      'n',
    );
  const maxTokens = positiveWhole(body, 'max_tokens');
  const maxOutputTokens = positiveWhole(body, 'max_completion_tokens') ?? maxTokens;
  const choice = body.tool_choice;
  if (choice !== undefined && choice !== null && choice !== 'none' && choice !== 'auto')
    throw new RequestError(
      400,
      `tool_choice: this endpoint never calls a tool (its model is not given the tools), so it cannot honour ${isRecord(choice) ? 'a named tool' : describeInput(choice)}: send "auto" or "none"`,
      'tool_choice',
    );
  checkTools(body.tools);
  return maxOutputTokens;
}

/** Refuses `tools` that are no list of `{type: "function", function: {name}}` (they are accepted, never called). */
function checkTools(tools: unknown): void {
  if (tools === undefined || tools === null) return;
  if (!Array.isArray(tools))
    throw new RequestError(
      400,
      `tools: expected a list of {type: "function", function: {name}}, got ${typeof tools}`,
      'tools',
    );
  tools.forEach((tool: unknown, index) => {
    const where = `tools[${index}]`;
    if (!isRecord(tool) || tool.type !== 'function')
      throw new RequestError(400, `${where}: expected {type: "function", function: {name}}`, 'tools');
    const fn = tool.function;
    if (!isRecord(fn) || typeof fn.name !== 'string' || fn.name.length === 0)
      throw new RequestError(400, `${where}.function.name: expected the tool's name (a non-empty string)`, 'tools');
    if (fn.parameters !== undefined && !isRecord(fn.parameters))
      throw new RequestError(400, `${where}.function.parameters: expected a JSON schema object`, 'tools');
  });
}

/** What an answer is: the kind of request it answered (the server's counts) and the response body. */
export interface Answer {
  kind: string;
  body: unknown;
}

/** The two routes answered by an Answerer. */
export type AnswerRoute = 'chat' | 'embeddings';

/** Answers request bodies over one model, embedder and token counter. */
export interface Answerer {
  answer(route: AnswerRoute, body: unknown): Promise<Answer>;
}

/** An answerer over `model` and `embedder`, metering `usage` with `tokens`. */
export function createAnswerer(options: {
  model: ChatModel;
  embedder: Embedder;
  tokens: TokenCounter;
  /** Chat completion ids: this prefix, then a sequence number (default `chatcmpl-membench-`). */
  idPrefix?: string;
}): Answerer {
  const { model, embedder, tokens } = options;
  const idPrefix = options.idPrefix ?? 'chatcmpl-membench-';
  let sequence = 0;

  async function chat(body: Record<string, unknown>): Promise<Answer> {
    const maxTokens = checkChatOptions(body);
    const format = isRecord(body.response_format) ? body.response_format.type : undefined;
    if (format !== undefined && format !== 'text' && format !== 'json_object' && format !== 'json_schema') {
      throw new RequestError(
        400,
        `response_format.type: expected text, json_object or json_schema, got ${JSON.stringify(format)}`,
        'response_format',
      );
    }
    const messages = fromChatMessages(body.messages);
    // Every text the usage count below reads: contents, tool calls' names and arguments.
    messages.forEach((message, index) => {
      for (const { field, text } of countedTexts(message)) refuseUnboundedText(text, `messages[${index}].${field}`);
    });
    const jsonRequested = format === 'json_object' || format === 'json_schema';
    const request = classifyPeerRequest(messages, { jsonRequested, offline: model.offline });
    if (jsonRequested && request.kind === 'chat' && model.offline) {
      throw new RequestError(
        400,
        'response_format: the offline model answers JSON only for the requests it recognises (mem0 fact extraction); this one is not one of them',
        'response_format',
      );
    }
    const answer = await model.chat({
      task: request.task,
      messages: request.messages,
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
    });
    const text = request.adaptAnswer(answer.text);
    const promptTokens = tokens.countMessages(messages);
    const completionTokens = tokens.countText(text);
    const response = {
      id: `${idPrefix}${++sequence}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : model.id,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text, refusal: null },
          // The limit is the model's to honour: nothing here cuts the answer, nor learns that a live model did (docs/failing-loudly.md).
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: {
        prompt_tokens: promptTokens,
        completion_tokens: completionTokens,
        total_tokens: promptTokens + completionTokens,
      },
    };
    return { kind: request.kind, body: response };
  }

  async function embeddings(body: Record<string, unknown>): Promise<Answer> {
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.length === 0 || !input.every((item) => typeof item === 'string')) {
      throw new RequestError(
        400,
        'input: expected a string or a non-empty list of strings (token arrays are not supported)',
        'input',
      );
    }
    // OpenAI's own limit per request: 200,000 inputs took ~8 s and answered 120 MB of JSON.
    if (input.length > MAX_EMBEDDING_INPUTS)
      throw new RequestError(
        400,
        `input: ${input.length} texts in one request, over ${MAX_EMBEDDING_INPUTS} (the OpenAI API's limit): send them in batches`,
        'input',
      );
    if (body.dimensions !== undefined && body.dimensions !== embedder.dimensions) {
      throw new RequestError(
        400,
        `dimensions: this embedder (${embedder.id}) gives ${embedder.dimensions}, not ${JSON.stringify(body.dimensions)}`,
        'dimensions',
      );
    }
    (input as string[]).forEach((text, index) => {
      const where = typeof body.input === 'string' ? 'input' : `input[${index}]`;
      // The OpenAI API refuses an empty input too; a text of no words still has its vector (hashed-embedder.ts).
      if (text === '') throw new RequestError(400, `${where}: an empty string has no embedding`, where);
      refuseUnboundedText(text, where);
    });
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64')
      throw new RequestError(400, 'encoding_format: expected float or base64', 'encoding_format');
    const vectors = await embedder.embed(input as string[]);
    const used = (input as string[]).reduce((sum, text) => sum + tokens.countText(text), 0);
    const response = {
      object: 'list',
      model: typeof body.model === 'string' ? body.model : embedder.id,
      data: vectors.map((vector, index) => ({
        object: 'embedding',
        index,
        embedding:
          format === 'base64'
            ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
            : Array.from(vector),
      })),
      usage: { prompt_tokens: used, total_tokens: used },
    };
    return { kind: 'embeddings', body: response };
  }

  return {
    answer: async (route, body) => {
      if (!isRecord(body)) throw new RequestError(400, 'the body is not a JSON object');
      return route === 'embeddings' ? embeddings(body) : chat(body);
    },
  };
}
