/**
 * A local HTTP server that speaks the OpenAI chat-completions and embeddings wire format, so
 * tests drive the real `openai` SDK over real HTTP. Replies are scripted per request (errors,
 * hangs, broken bodies) and every request is recorded with its headers and parsed body.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server received it. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** How to answer one request; `default` is a well-formed answer. */
export type Reply =
  | { kind: 'default' }
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status?: number; body: string; contentType?: string; headers?: Record<string, string> }
  /** Never answers. */
  | { kind: 'hang' }
  /** Sends the headers and half a body, then nothing. */
  | { kind: 'hang-body' }
  /** Drops the connection without a response. */
  | { kind: 'reset' }
  /** Sends the headers and half a body, then drops the connection. */
  | { kind: 'reset-body' }
  /** Sends the headers, then a body without end (64 KiB chunks of spaces, as fast as the client reads) until the client goes. */
  | { kind: 'endless' }
  /** A well-formed chat completion whose message is `content` (a judge's "yes", "Yes.", "no"...; null: no text, as some endpoints send). */
  | { kind: 'chat'; content: string | null; finishReason?: string };

/** The running server and what it saw. */
export interface FakeOpenAIServer {
  /** Base URL, ending in `/v1`. */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** Most requests ever in flight at once. */
  readonly maxInFlight: number;
  /** Replies used, in order, before falling back to `default`. */
  enqueue(...replies: Reply[]): void;
  /**
   * Holds requests until `size` are in flight, waits `settleMs` for any extra request (a broken
   * limit shows up as more than `size` in flight), then releases the group. A correct limit is
   * thus always reached and never exceeded; the total sent must be a multiple of `size`.
   */
  holdInGroupsOf(size: number | undefined, settleMs?: number): void;
  close(): Promise<void>;
}

/** Deterministic vector for a text: bytes of its SHA-256 scaled to [-1, 1]. */
export function fakeEmbedding(text: string, dimensions: number): number[] {
  const digest = createHash('sha256').update(text).digest();
  return Array.from({ length: dimensions }, (_, index) => (digest[index % digest.length]! - 127.5) / 127.5);
}

function defaultBody(path: string, body: unknown, dimensions: number, echoed: string): unknown {
  const request = (body ?? {}) as { model?: string; messages?: Array<{ content?: unknown }>; input?: unknown };
  if (path.endsWith('/embeddings')) {
    const inputs = Array.isArray(request.input) ? request.input : [request.input];
    return {
      object: 'list',
      model: request.model,
      data: inputs.map((input, index) => ({
        object: 'embedding',
        index,
        embedding: fakeEmbedding(String(input), dimensions),
      })),
      usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
    };
  }
  const last = request.messages?.at(-1)?.content;
  return completion(body, `echo: ${String(last ?? '')}${echoed}`);
}

/** A chat completion answering `content`. */
function completion(body: unknown, content: string | null, finishReason = 'stop'): unknown {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 0,
    model: (body as { model?: string } | null)?.model,
    choices: [{ index: 0, finish_reason: finishReason, message: { role: 'assistant', content, refusal: null } }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
}

/** A `chat` option's answer as a reply: its text, or its text and finish reason. */
function chatReply(answer: string | null | { content: string | null; finishReason: string }): Reply {
  return answer !== null && typeof answer === 'object'
    ? { kind: 'chat', ...answer }
    : { kind: 'chat', content: answer };
}

/** The last user message of a chat request (what a judge reads), or '' for another request. */
export function lastMessage(body: unknown): string {
  const messages = (body as { messages?: Array<{ content?: unknown }> } | null)?.messages;
  return String(messages?.at(-1)?.content ?? '');
}

/**
 * Starts the server on 127.0.0.1 with an OS-chosen port. `chat` (optional) answers chat requests
 * no queued reply is waiting for: a judge played by a rule over the prompt, say. `echoAuthorization`:
 * every default chat answer repeats the request's Authorization header and the bare token, as a
 * proxy or a debugging endpoint that echoes headers would, then the token in upper and lower case,
 * base64 (standard, URL-safe, inside a Basic credential) and URL-encoded.
 */
export async function startFakeOpenAIServer(
  options: {
    embeddingDimensions?: number;
    echoAuthorization?: boolean;
    chat?: (body: unknown) => string | null | { content: string | null; finishReason: string };
  } = {},
): Promise<FakeOpenAIServer> {
  const dimensions = options.embeddingDimensions ?? 8;
  const echoOf = (headers: IncomingHttpHeaders): string => {
    if (!options.echoAuthorization) return '';
    const authorization = headers.authorization ?? '';
    const key = authorization.replace(/^Bearer /u, '');
    const encoded = [
      key.toUpperCase(),
      key.toLowerCase(),
      Buffer.from(key).toString('base64'),
      Buffer.from(key).toString('base64url'),
      encodeURIComponent(key),
      `Basic ${Buffer.from(`user:${key}`).toString('base64')}`,
    ];
    return ` (you sent Authorization: ${authorization}; your key is ${key}; headers ${JSON.stringify({ authorization })}; encoded ${encoded.join(' ')})`;
  };
  const requests: RecordedRequest[] = [];
  const queue: Reply[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let groupSize: number | undefined;
  let settleMs = 50;
  let held: Array<() => void> = [];
  let settleTimer: NodeJS.Timeout | undefined;

  function releaseHeld(): void {
    clearTimeout(settleTimer);
    settleTimer = undefined;
    const group = held;
    held = [];
    group.forEach((release) => release());
  }

  function send(
    response: ServerResponse,
    reply: Reply,
    path: string,
    body: unknown,
    headers: IncomingHttpHeaders,
  ): void {
    switch (reply.kind) {
      case 'hang':
        return;
      case 'reset':
        response.socket?.destroy();
        return;
      case 'reset-body':
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        response.write('{"id":"chatcmpl-fake","choices":[', () => response.socket?.destroy());
        return;
      case 'endless': {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"choices":[{"message":{"role":"assistant","content":"');
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = (): void => {
          while (!response.destroyed && response.write(chunk)) {
            // until the socket's buffer is full
          }
        };
        response.on('drain', pump);
        pump();
        return;
      }
      case 'hang-body':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"id":"chatcmpl-fake","choices":[');
        return;
      case 'raw':
        response.writeHead(reply.status ?? 200, {
          'content-type': reply.contentType ?? 'application/json',
          ...reply.headers,
        });
        response.end(reply.body);
        return;
      case 'chat':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(completion(body, reply.content, reply.finishReason)));
        return;
      case 'json':
        response.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        response.end(JSON.stringify(reply.body));
        return;
      case 'default':
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(defaultBody(path, body, dimensions, echoOf(headers))));
    }
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // kept as text
      }
      const path = (request.url ?? '/').split('?')[0]!;
      requests.push({ method: request.method ?? '', path, headers: request.headers, body });
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      response.on('close', () => inFlight--);
      const reply: Reply =
        queue.shift() ??
        (options.chat && path.endsWith('/chat/completions') ? chatReply(options.chat(body)) : { kind: 'default' });
      const answer = (): void => send(response, reply, path, body, request.headers);
      if (groupSize === undefined) return answer();
      held.push(answer);
      if (held.length > groupSize) releaseHeld();
      else if (held.length === groupSize) settleTimer = setTimeout(releaseHeld, settleMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    enqueue: (...replies) => void queue.push(...replies),
    holdInGroupsOf: (size, settle = 50) => {
      groupSize = size;
      settleMs = settle;
    },
    close: async () => {
      clearTimeout(settleTimer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A port nothing listens on: bound by the OS, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
