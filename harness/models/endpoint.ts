/**
 * One OpenAI-compatible endpoint as the `openai` provider uses it (docs/design.md §4): the SDK client,
 * a concurrency limit, retries with backoff on 429/5xx and dropped connections (honouring
 * Retry-After), a per-attempt timeout that covers the body, and failures classified into
 * messages that name the URL and the reason but never the API key.
 */
import { createRequire } from 'node:module';
import type OpenAI from 'openai';
import type { APIError } from 'openai';
import { MembenchError, errorMessage } from '../core/errors.js';
import { collapseWhitespace, shortenText } from '../core/text.js';
import { checkSecretLength, maskSecrets, registerSecret } from '../core/secrets.js';

type Sdk = typeof import('openai');
let sdkLoading: Promise<Sdk> | undefined;
/**
 * The SDK loads on the first live call: offline runs, and every agent process start, never pay for
 * it. By require(), not import(): an agent process runs its bundle from a startup snapshot or a
 * vm.Script, where Node 20 has no dynamic import ("A dynamic import callback was not specified").
 */
const loadSdk = (): Promise<Sdk> =>
  (sdkLoading ??= Promise.resolve().then(() => createRequire(import.meta.url)('openai') as Sdk));

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** What a live endpoint does when not told otherwise: requests in flight, per-request timeout, retries (the run settings' defaults, harness/run/settings.ts, are these). */
export const ENDPOINT_DEFAULTS = { concurrency: 4, timeoutMs: 60_000, maxRetries: 3 } as const;
/** Sent when no key is configured: local servers (Ollama, vLLM, llama.cpp) ignore auth, and the SDK refuses an empty key. */
const NO_KEY = 'membench-no-key';
/** Dropped connections worth another attempt, in words. */
const RETRYABLE_CONNECTION_CODES: ReadonlyMap<string, string> = new Map([
  ['ECONNRESET', 'connection reset'],
  ['EPIPE', 'connection reset'],
  ['UND_ERR_SOCKET', 'connection closed by the server'],
  ['UND_ERR_CLOSED', 'connection closed by the server'],
  ['ETIMEDOUT', 'connect timed out'],
  ['EAI_AGAIN', 'DNS lookup failed (EAI_AGAIN)'],
]);

/** The connection settings of an endpoint; unset fields fall back to env, then defaults. */
export interface EndpointOptions {
  /** Defaults to `OPENAI_BASE_URL`, then https://api.openai.com/v1. */
  baseUrl?: string;
  /** Defaults to `OPENAI_API_KEY`; never stored, logged or shown. */
  apiKey?: string;
  /** Requests in flight at once, per provider instance (default 4). */
  concurrency?: number;
  /** Per attempt, covering connect, headers and body (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt on 408/429/5xx, timeouts and dropped connections (default 3). */
  maxRetries?: number;
  /** First backoff step; doubles per retry, with jitter (default 500). */
  retryBaseMs?: number;
  /** Cap on one wait (default 30 000); a Retry-After above it fails the call at once, saying the wait. */
  retryMaxMs?: number;
  /** The most bytes of one response body read before the attempt fails (default MAX_RESPONSE_BYTES). */
  maxResponseBytes?: number;
  /** Where `OPENAI_*` variables are read (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Injected for tests: the wait between attempts, and the jitter source. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** Told before each retry (the key is already redacted); default: a line on stderr (retryNotice). */
  onRetry?: (event: RetryEvent) => void;
}

/** One retry about to happen. */
export interface RetryEvent {
  url: string;
  attempt: number;
  reason: string;
  delayMs: number;
}

/** Checks a whole-number setting (at least `minimum`), or returns the default when it is unset. */
export function positiveInteger(name: string, value: number | undefined, fallback: number, minimum = 1): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < minimum) {
    throw new MembenchError('INVALID_ARGUMENT', `openai: ${name} ${value}: expected a whole number >= ${minimum}`);
  }
  return value;
}

/** The URL as shown in messages: origin and path only, so nothing secret can ride along. */
export function displayUrl(baseUrl: string, path: string): string {
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  return url ? `${url.origin}${url.pathname.replace(/\/+$/u, '')}${path}` : `${baseUrl}${path}`;
}

/**
 * A base URL is a scheme, host and path. Credentials (`user:key@`) or a query would be sent
 * or shown where a key must never be; the SDK also appends paths after a query. Refused.
 */
export function checkBaseUrl(baseUrl: string): void {
  const url = URL.canParse(baseUrl) ? new URL(baseUrl) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `openai: base URL ${JSON.stringify(baseUrl.replace(/\/\/[^/]*@/u, '//***@'))} is not an http(s) URL`,
    );
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `openai: base URL ${displayUrl(baseUrl, '')} must not carry credentials, a query or a fragment; pass the key as the API key (OPENAI_API_KEY)`,
    );
  }
}

/**
 * A response the SDK accepted but that membench cannot use: a body that is not JSON (`json`), JSON
 * of another shape or with a wrong value (`shape`), or a status 200 whose JSON is an error (`error`,
 * said in the server's words alone).
 */
export class MalformedResponse extends Error {
  constructor(
    message: string,
    readonly kind: 'json' | 'shape' | 'error' = 'shape',
  ) {
    super(message);
  }
}

/** How a refused response is said after "failed: ". */
function malformedReason(error: MalformedResponse | SyntaxError): string {
  if (error instanceof SyntaxError || error.kind === 'json') return `malformed JSON response (${error.message})`;
  return error.kind === 'error' ? error.message : `unexpected response (${error.message})`;
}

/**
 * The most bytes of one response body read by default: far above any answer kept (MAX_ANSWER_CHARS)
 * or a batch of 128 embeddings of 4,096 dimensions (~12 MB of JSON). A body that never ends (an
 * endpoint streaming garbage) was buffered until the timeout: 4 GB in 15 s, 16 GB by the default 60 s.
 */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** A response body over the endpoint's byte bound: not retried, the endpoint would send it again. */
class ResponseTooLarge extends Error {}

/** `fetch`, with every response body cut off (the read fails with ResponseTooLarge) once it passes `maxBytes`. */
function boundedFetch(maxBytes: number): typeof fetch {
  const tooLarge = (what: string): ResponseTooLarge =>
    new ResponseTooLarge(
      `the response body ${what}, the most membench reads from an endpoint (an endpoint sending without end?)`,
    );
  return async (input, init) => {
    const response = await fetch(input, init);
    const declared = Number(response.headers.get('content-length') ?? Number.NaN);
    if (declared > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw tooLarge(`is ${declared} bytes (Content-Length), over ${formatBytes(maxBytes)}`);
    }
    if (!response.body) return response;
    let seen = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(tooLarge(`passed ${formatBytes(maxBytes)}`));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(counted, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** 64 MiB, 512 KiB, 300 bytes. */
function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}

/** One failed attempt, classified. */
interface Failure {
  reason: string;
  retryable: boolean;
  retryAfterMs?: number;
}

/** At most `limit` calls run at once; the others wait in arrival order. */
export class ConcurrencyLimit {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active < this.limit) this.active++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await task();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === 'object'; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    current = (current as { cause?: unknown }).cause;
  }
  return codes;
}

/** A dropped connection worth another attempt, in words, from the codes of an error's cause chain. */
function connectionReason(codes: readonly string[]): string | undefined {
  return codes.map((code) => RETRYABLE_CONNECTION_CODES.get(code)).find((words) => words !== undefined);
}

/** An error and its causes, outermost first (the SDK's "Connection error.", fetch's "fetch failed", undici's "redirect count exceeded"). */
function causeChain(error: unknown): Error[] {
  const chain: Error[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    chain.push(current);
    current = current.cause;
  }
  return chain;
}

/** The messages of an error's causes, outermost first, the error's own left out. */
function causeMessages(error: unknown): string[] {
  return causeChain(error)
    .slice(1)
    .map((cause) => cause.message);
}

/** 1.5 s, 99999 s: a wait in words. */
const seconds = (ms: number): string => `${Number((ms / 1000).toFixed(1))} s`;

/**
 * A retry said on stderr, when nothing else listens (`onRetry` unset): a rate-limited or failing
 * endpoint otherwise held a run in silence for up to 30 s a wait. Pool workers and agent processes
 * write to the run's own stderr.
 */
function retryNotice(event: RetryEvent, maxRetries: number): void {
  process.stderr.write(
    `membench: openai: POST ${event.url}: ${event.reason}: attempt ${event.attempt} of ${maxRetries + 1} failed, trying again in ${seconds(event.delayMs)}\n`,
  );
}

/** Wait asked by the server: `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date. */
function retryAfterMs(headers: Headers | undefined, now: number): number | undefined {
  const millis = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(millis) && millis >= 0) return millis;
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number.parseFloat(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/** What went wrong with an HTTP status, in the server's words when it gave any. */
function statusReason(error: APIError, status: number): string {
  const body: unknown = error.error;
  let detail: string | undefined;
  if (typeof body === 'string') detail = body;
  else if (body !== null && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    detail = (body as { message: string }).message;
  } else {
    const text = error.message.replace(new RegExp(`^${status}\\s*`, 'u'), '');
    if (text && text !== 'status code (no body)') detail = text;
  }
  // An HTML error page from a proxy says less than the status line.
  if (detail !== undefined && /^\s*</u.test(detail)) detail = undefined;
  detail = collapseWhitespace(detail ?? statusText(status) ?? 'error');
  return `${status} ${shortenText(detail, 201)}`;
}

/** The status line's text ("Too Many Requests"), from node:http when an error needs it (an agent process's startup snapshot cannot load node:http). */
function statusText(status: number): string | undefined {
  return (createRequire(import.meta.url)('node:http') as typeof import('node:http')).STATUS_CODES[status];
}

/** One endpoint's client, concurrency limit and retry policy, shared by every call a provider makes. */
export class Endpoint {
  private sdk: Sdk | undefined;
  private clientInstance: OpenAI | undefined;
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly limit: ConcurrencyLimit;
  private readonly timeoutMs: number;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxResponseBytes: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly onRetry: EndpointOptions['onRetry'];

  constructor(options: EndpointOptions) {
    const env = options.env ?? process.env;
    this.baseUrl = options.baseUrl || env.OPENAI_BASE_URL || DEFAULT_BASE_URL;
    this.apiKey = options.apiKey || env.OPENAI_API_KEY || undefined;
    // Refused before any request: a key too short to mask without erasing words ("none", "sync").
    if (this.apiKey !== undefined) checkSecretLength(this.apiKey, options.apiKey ? '--api-key' : 'OPENAI_API_KEY');
    registerSecret(this.apiKey);
    checkBaseUrl(this.baseUrl);
    this.limit = new ConcurrencyLimit(
      positiveInteger('concurrency', options.concurrency, ENDPOINT_DEFAULTS.concurrency),
    );
    this.timeoutMs = positiveInteger('timeoutMs', options.timeoutMs, ENDPOINT_DEFAULTS.timeoutMs);
    this.maxRetries = positiveInteger('maxRetries', options.maxRetries, ENDPOINT_DEFAULTS.maxRetries, 0);
    this.retryBaseMs = positiveInteger('retryBaseMs', options.retryBaseMs, 500, 0);
    this.retryMaxMs = positiveInteger('retryMaxMs', options.retryMaxMs, 30_000, 0);
    this.maxResponseBytes = positiveInteger('maxResponseBytes', options.maxResponseBytes, MAX_RESPONSE_BYTES);
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.onRetry = options.onRetry ?? ((event) => retryNotice(event, this.maxRetries));
  }

  /** The SDK client, created on first use. Retries and timeouts are ours (one policy for every failure, attempts counted in the message). */
  async client(): Promise<OpenAI> {
    this.sdk ??= await loadSdk();
    this.clientInstance ??= new this.sdk.default({
      apiKey: this.apiKey ?? NO_KEY,
      baseURL: this.baseUrl,
      maxRetries: 0,
      timeout: this.timeoutMs,
      fetch: boundedFetch(this.maxResponseBytes),
    });
    return this.clientInstance;
  }

  /** Runs `send` under the concurrency limit, retrying what is worth retrying; returns its value and the wall time. */
  async request<T>(
    path: string,
    send: (options: { signal: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<{ value: T; latencyMs: number }> {
    const url = displayUrl(this.baseUrl, path);
    return this.limit.run(async () => {
      const started = performance.now();
      for (let attempt = 1; attempt <= this.maxRetries + 1; attempt++) {
        const outcome = await this.attempt(send);
        if ('value' in outcome) return { value: outcome.value, latencyMs: performance.now() - started };
        const { failure } = outcome;
        const attempts = attempt > 1 ? ` after ${attempt} attempts` : '';
        if (!failure.retryable || attempt > this.maxRetries) {
          throw new MembenchError(
            'MODEL_ERROR',
            this.redact(`openai: POST ${url} failed${attempts}: ${failure.reason}`),
          );
        }
        // A wait asked for above the cap: an attempt sooner than the server said meets the same
        // refusal, and waiting the cap each time hid the server's own wait (99999 s: 90 s of silence).
        if (failure.retryAfterMs !== undefined && failure.retryAfterMs > this.retryMaxMs)
          throw new MembenchError(
            'MODEL_ERROR',
            this.redact(
              `openai: POST ${url} failed${attempts}: ${failure.reason}: the endpoint asks to wait ${seconds(failure.retryAfterMs)} before another attempt (Retry-After), longer than membench waits between attempts (${seconds(this.retryMaxMs)}): run again when its limit has reset`,
            ),
          );
        const delayMs = Math.min(this.retryMaxMs, failure.retryAfterMs ?? this.backoff(attempt));
        this.onRetry?.({ url, attempt, reason: this.redact(failure.reason), delayMs });
        await this.sleep(delayMs);
      }
      throw new Error('unreachable: the retry loop always returns or throws');
    });
  }

  /** Exponential backoff with "equal jitter": half the step fixed, half random, so clients spread out. */
  private backoff(attempt: number): number {
    const step = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (attempt - 1));
    return Math.round(step / 2 + (step / 2) * this.random());
  }

  private async attempt<T>(
    send: (options: { signal: AbortSignal; timeout: number }) => Promise<T>,
  ): Promise<{ value: T } | { failure: Failure }> {
    // Our own timer covers the body too: the SDK's timeout stops once the headers have arrived.
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, this.timeoutMs);
    try {
      return { value: await send({ signal: controller.signal, timeout: this.timeoutMs }) };
    } catch (error) {
      if (timedOut || (this.sdk && error instanceof this.sdk.APIConnectionTimeoutError)) {
        return { failure: { reason: `timed out after ${this.timeoutMs} ms`, retryable: true } };
      }
      return { failure: this.classify(error) };
    } finally {
      clearTimeout(timer);
    }
  }

  private classify(error: unknown): Failure {
    const tooLarge = causeChain(error).find((cause) => cause instanceof ResponseTooLarge);
    if (tooLarge) return { reason: tooLarge.message, retryable: false };
    if (error instanceof MalformedResponse || error instanceof SyntaxError) {
      return { reason: malformedReason(error), retryable: false };
    }
    const sdk = this.sdk;
    if (!sdk) return { reason: errorMessage(error), retryable: false };
    if (error instanceof sdk.APIUserAbortError) return { reason: 'aborted', retryable: false };
    if (error instanceof sdk.APIConnectionError) {
      const codes = errorCodes(error);
      if (codes.includes('ECONNREFUSED'))
        return { reason: 'connection refused (is the server running?)', retryable: false };
      if (codes.includes('ENOTFOUND')) return { reason: 'host not found (ENOTFOUND)', retryable: false };
      const known = connectionReason(codes);
      const causes = causeMessages(error);
      // fetch follows 20 redirects, then gives up: the base URL (or a proxy) redirects in a loop; again would loop again.
      if (causes.includes('redirect count exceeded'))
        return { reason: 'too many redirects (the URL redirects in a loop? check the base URL)', retryable: false };
      return { reason: known ?? `connection failed (${causes.at(-1) ?? error.message})`, retryable: true };
    }
    if (error instanceof sdk.APIError && typeof error.status === 'number') {
      const status = error.status;
      let reason = statusReason(error, status);
      if (status === 401 && this.apiKey === undefined)
        reason += ' (no API key was given: set OPENAI_API_KEY or pass one)';
      const retryable = status === 408 || status === 429 || status >= 500;
      const wait = retryable ? retryAfterMs(error.headers, Date.now()) : undefined;
      return { reason, retryable, ...(wait !== undefined ? { retryAfterMs: wait } : {}) };
    }
    // The connection dropped after the headers: fetch rejects the body's read with TypeError('terminated'), no SDK class.
    const dropped = connectionReason(errorCodes(error));
    if (dropped) return { reason: `${dropped} while the response body was read`, retryable: true };
    return { reason: errorMessage(error), retryable: false };
  }

  /** The key never leaves this object: scrubbed (with any Authorization value) from anything we show or keep, even if a server echoes it. */
  redact(text: string): string {
    return maskSecrets(text);
  }
}
