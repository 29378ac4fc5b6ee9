/**
 * A local OpenAI-compatible endpoint over a membench chat model and embedder: what peer
 * libraries (mem0) call when they are pointed at `baseURL`. It speaks the chat-completions and
 * embeddings wire format of the `openai` package (JSON and base64 embeddings, `response_format`,
 * `usage`), on 127.0.0.1 by default. `membench serve` runs one over the offline model and the
 * hashed embedder; the mem0 adapter runs one per strategy over the cell's metered model, so the
 * harness counts what the library spends. Tool definitions are accepted and never called: the
 * requests the adapters make need none. What a request is answered with is answers.ts's; this
 * file is HTTP, and the worker thread that answers `membench serve`'s large requests.
 */
import { existsSync } from 'node:fs';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { TokenCounter } from '../core/tokens.js';
import { type AnswerRoute, createAnswerer, parseBody, refusal, RequestError } from './answers.js';
import type { ChatModel, Embedder } from './types.js';

export { MAX_EMBEDDING_INPUTS, MAX_UNSPACED_CHARS } from './answers.js';

/** A request body larger than this is refused (a peer's prompt is a few kB; a batch of embeddings well under this). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
/** Bodies from this size on are answered in the worker thread, when there is one (`offload`). */
export const OFFLOAD_FROM_BYTES = 256 * 1024;
/** Large requests the worker holds at once (each up to MAX_BODY_BYTES); one more is refused with 503. */
const MAX_OFFLOADED = 4;

export interface ModelServerOptions {
  model: ChatModel;
  embedder: Embedder;
  /** Default 127.0.0.1: the endpoint has no authentication. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Counts `usage` in responses (default: the offline tokenizer). */
  tokens?: TokenCounter;
  /**
   * `model` is the offline model and `embedder` the one `createEmbedder(embedder)` makes: bodies of
   * `fromBytes` (default OFFLOAD_FROM_BYTES) or more are answered in a worker thread over the same
   * model and embedder, one after another, while this thread answers the others; the worker starts
   * with a large request and stops when none is left, and its memory goes with it.
   */
  offload?: { embedder: string; fromBytes?: number };
  /** Called when a large request is handed to the worker (tests wait on it instead of sleeping). */
  onOffload?: () => void;
  /** How long a request may take to arrive, headers and body (default REQUEST_TIMEOUT_MS); then 408. */
  requestTimeoutMs?: number;
}

/**
 * A request's headers and body arrive within this, or it is answered 408 and its connection closed:
 * one whose body never came was held for Node's default, five minutes. A 16 MB body over the
 * loopback takes milliseconds.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** A running endpoint. */
export interface ModelServer {
  /** Base URL ending in `/v1`, as `OPENAI_BASE_URL` and the SDK's `baseURL` take it. */
  readonly baseUrl: string;
  readonly port: number;
  /** Requests answered, by kind (`chat`, `mem0-extract`, `embeddings`, `models`, `error`). */
  readonly counts: Readonly<Record<string, number>>;
  close(): Promise<void>;
}

/** What the worker is asked: a route and the raw body (parsed there: parsing 16 MB takes a while too). */
export interface WorkerRequest {
  id: number;
  route: AnswerRoute;
  body: Uint8Array;
}

/** What the worker answers: the status, the kind counted, and the response body as JSON text. */
export interface WorkerReply {
  id: number;
  status: number;
  kind: string;
  text: string;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new RequestError(413, `request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The routes served and the methods each answers, as a 405's `Allow` header says them (HEAD is GET without the body). */
const ROUTES = new Map([
  ['/v1/chat/completions', 'POST'],
  ['/v1/embeddings', 'POST'],
  ['/v1/models', 'GET, HEAD'],
]);

function send(response: ServerResponse, status: number, text: string, allow: string | undefined): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...(allow ? { allow } : {}),
  });
  // Node writes no body in answer to HEAD.
  response.end(text);
}

/**
 * A request Node's HTTP parser refused before any handler saw it (headers over Node's limit, a
 * malformed request line or chunked body, a request that did not arrive in time): answered, as
 * every other refusal, with an OpenAI-shaped error body — Node's own answer has none, and a client
 * reading `error.message` got nothing. Written to the socket itself (there is no response object),
 * unless a response on it has begun or the client is gone.
 */
function answerClientError(
  error: NodeJS.ErrnoException,
  socket: Duplex,
  requestTimeout: number,
  count: (kind: string) => void,
): void {
  // Node's own check, before it writes its answer: a response already under way is not interrupted.
  const started = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (error.code === 'ECONNRESET' || !socket.writable || started) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? "request headers too large (over Node.js's limit, 16 KB by default)"
      : status === 408
        ? `the request's headers and body did not arrive within ${requestTimeout} ms`
        : `malformed HTTP request: ${error.code === undefined ? error.message : `${error.code}${'reason' in error ? ` (${String(error.reason)})` : ''}`}`;
  count('error');
  const text = JSON.stringify(refusal(new RequestError(status, message)).body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** Starts the worker: the compiled JS beside this file, else (tests on the sources) the TS through tsx's loader. */
function startWorker(workerData: unknown): Worker {
  const js = new URL('./server-worker.js', import.meta.url);
  if (existsSync(js)) return new Worker(js, { workerData });
  const ts = new URL('./server-worker.ts', import.meta.url).href;
  const boot = `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(ts)}, ${JSON.stringify(ts)}))`;
  return new Worker(boot, { eval: true, workerData });
}

/** The worker thread answering large requests: started on demand, stopped when idle. */
class OffloadWorker {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, (reply: WorkerReply) => void>();
  private sequence = 0;

  constructor(private readonly embedder: string) {}

  get busy(): number {
    return this.waiting.size;
  }

  answer(route: AnswerRoute, body: Buffer): Promise<WorkerReply> {
    const id = ++this.sequence;
    const worker = (this.worker ??= this.start());
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      const bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
      const transfer = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength ? [body.buffer] : [];
      worker.postMessage({ id, route, body: bytes } satisfies WorkerRequest, transfer as ArrayBuffer[]);
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  private start(): Worker {
    const worker = startWorker({ embedder: this.embedder });
    worker.on('message', (reply: WorkerReply) => {
      const resolve = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      resolve?.(reply);
      // Nothing left: the worker goes, and the heap a 16 MB request grew with it.
      if (this.waiting.size === 0 && this.worker === worker) {
        this.worker = undefined;
        void worker.terminate();
      }
    });
    // Only the current worker holds requests: one retired when idle can exit after the next request
    // started its successor, and that exit must not fail the successor's requests.
    const fail = (message: string): void => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      const text = JSON.stringify(refusal(new Error(message)).body);
      for (const [id, resolve] of this.waiting) resolve({ id, status: 500, kind: 'error', text });
      this.waiting.clear();
    };
    worker.on('error', (error) => fail(`the worker answering large requests failed: ${error.message}`));
    worker.on('exit', (code) => {
      if (this.waiting.size > 0) fail(`the worker answering large requests exited (code ${code})`);
    });
    return worker;
  }
}

/** Starts an endpoint; resolves once it listens. */
export async function startModelServer(options: ModelServerOptions): Promise<ModelServer> {
  const { model, embedder } = options;
  const answerer = createAnswerer({ model, embedder, tokens: options.tokens ?? new TokenCounter('offline') });
  const offload = options.offload ? new OffloadWorker(options.offload.embedder) : undefined;
  const offloadFrom = options.offload?.fromBytes ?? OFFLOAD_FROM_BYTES;
  const counts: Record<string, number> = {};
  const count = (kind: string) => (counts[kind] = (counts[kind] ?? 0) + 1);

  async function respond(
    path: string,
    request: IncomingMessage,
  ): Promise<{ status: number; kind: string; text: string }> {
    const allowed = ROUTES.get(path);
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    if (!allowed || !allowed.split(', ').includes(method ?? '')) {
      throw new RequestError(
        allowed ? 405 : 404,
        `${allowed ? 'method' : 'no route'} ${request.method} ${path || '/'}${allowed ? ' not allowed' : ''}: this endpoint serves POST /v1/chat/completions, POST /v1/embeddings and GET /v1/models`,
      );
    }
    if (path === '/v1/models') {
      const data = [model.id, embedder.id].map((id) => ({ id, object: 'model', created: 0, owned_by: 'membench' }));
      return { status: 200, kind: 'models', text: JSON.stringify({ object: 'list', data }) };
    }
    const route: AnswerRoute = path === '/v1/embeddings' ? 'embeddings' : 'chat';
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (encoding && encoding !== 'identity')
      throw new RequestError(
        415,
        `Content-Encoding ${encoding}: this endpoint reads bodies as sent (no decompression): send the JSON uncompressed`,
      );
    const body = await readBody(request);
    if (offload && body.length >= offloadFrom) {
      if (offload.busy >= MAX_OFFLOADED)
        throw new RequestError(
          503,
          `${offload.busy} large requests (${offloadFrom} bytes or more) are being answered: send this one again when one is done`,
        );
      const reply = offload.answer(route, body);
      options.onOffload?.();
      return reply;
    }
    const answer = await answerer.answer(route, parseBody(body));
    return { status: 200, kind: answer.kind, text: JSON.stringify(answer.body) };
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0]!.replace(/\/+$/u, '');
    let reply: { status: number; kind: string; text: string };
    try {
      reply = await respond(path, request);
    } catch (error) {
      const refused = refusal(error);
      reply = { status: refused.status, kind: 'error', text: JSON.stringify(refused.body) };
    }
    count(reply.status === 200 ? reply.kind : 'error');
    send(response, reply.status, reply.text, reply.status === 405 ? ROUTES.get(path) : undefined);
  }

  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server: Server = createServer(
    // Node checks the timeouts every connectionsCheckingInterval (30 s by default): a second at most.
    { requestTimeout, headersTimeout: requestTimeout, connectionsCheckingInterval: Math.min(1000, requestTimeout) },
    (request, response) => void handle(request, response),
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, requestTimeout, count),
  );
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
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
      await offload?.close();
    },
  };
}
