/**
 * A local OpenAI-compatible endpoint over a membench chat model and embedder: what peer
 * libraries (mem0) call when they are pointed at `baseURL`. It speaks the chat-completions and
 * embeddings wire format of the `openai` package (JSON and base64 embeddings, `response_format`,
 * `usage`), on 127.0.0.1 by default. `membench serve` runs one over the offline model and the
 * hashed embedder; the mem0 adapter runs one per strategy over the cell's metered model, so the
 * harness counts what the library spends. Tool definitions are accepted and never called: the
 * requests the adapters make need none.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { messageText, TokenCounter } from '../core/tokens.js';
import { classifyPeerRequest } from './peer-requests.js';
import type { ChatModel, Embedder } from './types.js';

/** A request body larger than this is refused (a peer's prompt is a few kB; a batch of embeddings well under this). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/**
 * The longest run of characters without white space a text may hold. Token counting merges one
 * such run (a base64 blob, a minified file, Chinese without spaces) as a whole, in n log n with a
 * large constant: about a second per 100,000 characters, and this endpoint answers one request at
 * a time, so a longer run is refused (413) before any work rather than stalling every other
 * request. Text of ordinary words is counted in linear time, whatever its length.
 */
export const MAX_UNSPACED_CHARS = 16_384;
const UNSPACED_RUN = /[^\p{White_Space}]+/gu;

/** Refuses a text holding a run without white space longer than MAX_UNSPACED_CHARS (one linear scan). */
function refuseUnboundedText(text: string, where: string): void {
  if (text.length <= MAX_UNSPACED_CHARS) return;
  UNSPACED_RUN.lastIndex = 0;
  for (let run = UNSPACED_RUN.exec(text); run !== null; run = UNSPACED_RUN.exec(text)) {
    if (run[0].length > MAX_UNSPACED_CHARS)
      throw new RequestError(
        413,
        `${where}: a run of ${run[0].length} characters without white space at character ${run.index}; this endpoint counts tokens of runs up to ${MAX_UNSPACED_CHARS} characters (one run is merged as a whole, in more than linear time)`,
        where,
      );
  }
}

export interface ModelServerOptions {
  model: ChatModel;
  embedder: Embedder;
  /** Default 127.0.0.1: the endpoint has no authentication. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Counts `usage` in responses (default: the offline tokenizer). */
  tokens?: TokenCounter;
}

/** A running endpoint. */
export interface ModelServer {
  /** Base URL ending in `/v1`, as `OPENAI_BASE_URL` and the SDK's `baseURL` take it. */
  readonly baseUrl: string;
  readonly port: number;
  /** Requests answered, by kind (`chat`, `mem0-extract`, `embeddings`, `models`, `error`). */
  readonly counts: Readonly<Record<string, number>>;
  close(): Promise<void>;
}

/** A request the endpoint refuses, with the status and the OpenAI-style error it answers. */
class RequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
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

/** Refuses what this endpoint cannot honour rather than answering something else: `n` above 1, `tools` that are no tool list. */
function checkChatOptions(body: Record<string, unknown>): void {
  const n = body.n;
  if (n !== undefined && n !== null) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1)
      throw new RequestError(400, `n: expected a whole number >= 1, got ${JSON.stringify(n)}`, 'n');
    if (n > 1)
      throw new RequestError(
        400,
        `n: this endpoint answers with one choice per request, not ${n}: send ${n} requests`,
        'n',
      );
  }
  const tools = body.tools;
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

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RequestError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new RequestError(400, 'the body is not JSON');
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** Starts an endpoint; resolves once it listens. */
export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const { model, embedder } = options;
  const tokens = options.tokens ?? new TokenCounter('offline');
  const counts: Record<string, number> = {};
  const count = (kind: string) => (counts[kind] = (counts[kind] ?? 0) + 1);
  let sequence = 0;

  async function chat(body: Record<string, unknown>): Promise<unknown> {
    if (body.stream === true)
      throw new RequestError(400, 'stream: streaming is not supported by this endpoint', 'stream');
    checkChatOptions(body);
    const format = isRecord(body.response_format) ? body.response_format.type : undefined;
    if (format !== undefined && format !== 'text' && format !== 'json_object' && format !== 'json_schema') {
      throw new RequestError(
        400,
        `response_format.type: expected text, json_object or json_schema, got ${JSON.stringify(format)}`,
        'response_format',
      );
    }
    const messages = fromChatMessages(body.messages);
    messages.forEach((message, index) => refuseUnboundedText(messageText(message), `messages[${index}].content`));
    const jsonRequested = format === 'json_object' || format === 'json_schema';
    const request = classifyPeerRequest(messages, { jsonRequested, offline: model.offline });
    if (jsonRequested && request.kind === 'chat' && model.offline) {
      throw new RequestError(
        400,
        'response_format: the offline model answers JSON only for the requests it recognises (mem0 fact extraction); this one is not one of them',
        'response_format',
      );
    }
    const maxTokens =
      typeof body.max_completion_tokens === 'number'
        ? body.max_completion_tokens
        : typeof body.max_tokens === 'number'
          ? body.max_tokens
          : undefined;
    const answer = await model.chat({
      task: request.task,
      messages: request.messages,
      ...(maxTokens !== undefined ? { maxOutputTokens: maxTokens } : {}),
    });
    const text = request.adaptAnswer(answer.text);
    count(request.kind);
    const promptTokens = tokens.countMessages(messages);
    const completionTokens = tokens.countText(text);
    return {
      id: `chatcmpl-membench-${++sequence}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: typeof body.model === 'string' ? body.model : model.id,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: text, refusal: null },
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
  }

  async function embeddings(body: Record<string, unknown>): Promise<unknown> {
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (!Array.isArray(input) || input.length === 0 || !input.every((item) => typeof item === 'string')) {
      throw new RequestError(
        400,
        'input: expected a string or a non-empty list of strings (token arrays are not supported)',
        'input',
      );
    }
    if (body.dimensions !== undefined && body.dimensions !== embedder.dimensions) {
      throw new RequestError(
        400,
        `dimensions: this embedder (${embedder.id}) gives ${embedder.dimensions}, not ${JSON.stringify(body.dimensions)}`,
        'dimensions',
      );
    }
    (input as string[]).forEach((text, index) => refuseUnboundedText(text, `input[${index}]`));
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64')
      throw new RequestError(400, 'encoding_format: expected float or base64', 'encoding_format');
    const vectors = await embedder.embed(input as string[]);
    count('embeddings');
    const used = (input as string[]).reduce((sum, text) => sum + tokens.countText(text), 0);
    return {
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
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0]!.replace(/\/+$/u, '');
    try {
      if (request.method === 'GET' && path === '/v1/models') {
        count('models');
        return send(response, 200, {
          object: 'list',
          data: [model.id, embedder.id].map((id) => ({ id, object: 'model', created: 0, owned_by: 'membench' })),
        });
      }
      if (request.method !== 'POST' || (path !== '/v1/chat/completions' && path !== '/v1/embeddings')) {
        throw new RequestError(
          404,
          `no route ${request.method} ${path}: this endpoint serves POST /v1/chat/completions, POST /v1/embeddings and GET /v1/models`,
        );
      }
      const body = await readJson(request);
      if (!isRecord(body)) throw new RequestError(400, 'the body is not a JSON object');
      send(response, 200, path === '/v1/embeddings' ? await embeddings(body) : await chat(body));
    } catch (error) {
      count('error');
      const known = error instanceof RequestError;
      const status = known ? error.status : 500;
      send(response, status, {
        error: {
          message: error instanceof Error ? error.message : String(error),
          type: known ? 'invalid_request_error' : 'server_error',
          param: known ? (error.param ?? null) : null,
          code: null,
        },
      });
    }
  }

  const server: Server = createServer((request, response) => void handle(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    baseUrl: `http://${host}:${address.port}/v1`,
    port: address.port,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
