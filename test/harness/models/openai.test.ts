/**
 * The openai provider through the real SDK over real HTTP, against a local server speaking the
 * OpenAI wire format: conversion, auth, retries, timeouts, broken bodies, refused connections,
 * the concurrency limit, and the response cache in front of it.
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { MAX_ANSWER_CHARS } from '../../../harness/core/numbers.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import {
  CachedChatModel,
  createEmbedder,
  createModel,
  MeteredModel,
  OpenAIChatModel,
  OpenAIEmbedder,
  ResponseCache,
  type OpenAIProviderOptions,
} from '../../../harness/models/index.js';
import {
  closedPort,
  fakeEmbedding,
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../helpers/fake-openai-server.js';

const KEY = 'sk-test-SECRET-0123456789abcdef';
const ask = (text: string) => ({ task: 'reply' as const, messages: [new HumanMessage(text)] });

let server: FakeOpenAIServer;
let scratch: string;

beforeAll(async () => {
  server = await startFakeOpenAIServer();
  scratch = await mkdtemp(path.join(os.tmpdir(), 'membench-openai-'));
});
afterAll(async () => {
  await server.close();
  await rm(scratch, { recursive: true, force: true });
});
afterEach(() => {
  server.requests.length = 0;
  server.holdInGroupsOf(undefined);
});

/** Records the waits instead of sleeping: retries are checked without wall-clock time. */
function recordingSleep(): { sleeps: number[]; sleep: (ms: number) => Promise<void> } {
  const sleeps: number[] = [];
  return { sleeps, sleep: async (ms) => void sleeps.push(ms) };
}

function chatModel(options: OpenAIProviderOptions = {}): OpenAIChatModel {
  return new OpenAIChatModel('test-model', { baseUrl: server.baseUrl, apiKey: KEY, env: {}, ...options });
}

async function modelError(promise: Promise<unknown>): Promise<MembenchError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MembenchError);
  expect((error as MembenchError).code).toBe('MODEL_ERROR');
  expect((error as MembenchError).message).not.toContain(KEY);
  return error as MembenchError;
}

describe('openai chat model', () => {
  it('sends converted messages, the model name and the key, and returns the text', async () => {
    const model = chatModel({ temperature: 0 });
    const messages = [
      new SystemMessage('Be brief.'),
      new HumanMessage('Order the usual.'),
      new AIMessage({
        content: '',
        tool_calls: [{ id: 'call_1', name: 'place_order', args: { dish: '红烧肉', qty: 2 }, type: 'tool_call' }],
      }),
      new ToolMessage({ content: '{"ok":true}', tool_call_id: 'call_1', name: 'place_order' }),
      new AIMessage('Done.'),
      new HumanMessage('谢谢'),
    ];
    const response = await model.chat({ task: 'reply', messages, maxOutputTokens: 64 });

    expect(response).toMatchObject({ text: 'echo: 谢谢', cached: false });
    expect(response.latencyMs).toBeGreaterThanOrEqual(0);
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request!.body).toEqual({
      model: 'test-model',
      max_tokens: 64,
      temperature: 0,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Order the usual.' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'place_order', arguments: '{"dish":"红烧肉","qty":2}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '{"ok":true}' },
        { role: 'assistant', content: 'Done.' },
        { role: 'user', content: '谢谢' },
      ],
    });
  });

  it('takes the base URL and key from OPENAI_BASE_URL / OPENAI_API_KEY', async () => {
    const model = createModel('openai:env-model', { env: { OPENAI_BASE_URL: server.baseUrl, OPENAI_API_KEY: KEY } });
    expect(model).toMatchObject({ id: 'openai:env-model', offline: false });
    await model.chat(ask('hi'));
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[0]!.body).toMatchObject({ model: 'env-model' });
  });

  it('retries a 429 after the Retry-After the server asked for', async () => {
    const { sleeps, sleep } = recordingSleep();
    server.enqueue({
      kind: 'json',
      status: 429,
      body: { error: { message: 'Rate limit reached' } },
      headers: { 'retry-after': '1' },
    });
    const said: string[] = [];
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      said.push(String(chunk));
      return true;
    });
    const response = await chatModel({ sleep }).chat(ask('again'));
    stderr.mockRestore();
    expect(response.text).toBe('echo: again');
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([1000]);
    // The wait is said (no one else listens here): a rate-limited run does not wait in silence.
    expect(said).toEqual([
      `membench: openai: POST ${server.baseUrl}/chat/completions: 429 Rate limit reached: attempt 1 of 4 failed, trying again in 1 s\n`,
    ]);
  });

  it('fails at once, saying the wait, when the Retry-After asked for is longer than membench waits', async () => {
    const { sleeps, sleep } = recordingSleep();
    server.enqueue({
      kind: 'json',
      status: 429,
      body: { error: { message: 'Rate limit reached' } },
      headers: { 'retry-after': '99999' },
    });
    const error = await modelError(chatModel({ sleep, maxRetries: 3 }).chat(ask('later')));
    expect(error.message).toBe(
      `openai: POST ${server.baseUrl}/chat/completions failed: 429 Rate limit reached: the endpoint asks to wait 99999 s before another attempt (Retry-After), longer than membench waits between attempts (30 s): run again when its limit has reset`,
    );
    expect(server.requests).toHaveLength(1);
    expect(sleeps).toEqual([]);
  });

  it('really waits a small Retry-After before retrying', async () => {
    server.enqueue({
      kind: 'json',
      status: 429,
      body: { error: { message: 'slow down' } },
      headers: { 'retry-after-ms': '80' },
    });
    const retries: number[] = [];
    const started = performance.now();
    await chatModel({ onRetry: (event) => retries.push(event.delayMs) }).chat(ask('wait'));
    expect(retries).toEqual([80]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(75);
    expect(server.requests).toHaveLength(2);
  });

  it('backs off exponentially with jitter on 5xx, then gives up with the URL and the reason', async () => {
    const { sleeps, sleep } = recordingSleep();
    server.enqueue(
      ...Array.from({ length: 4 }, () => ({ kind: 'raw' as const, status: 500, body: '', contentType: 'text/plain' })),
    );
    const error = await modelError(
      chatModel({ sleep, maxRetries: 3, retryBaseMs: 100, random: () => 1 }).chat(ask('x')),
    );
    expect(error.message).toBe(
      `openai: POST ${server.baseUrl}/chat/completions failed after 4 attempts: 500 Internal Server Error`,
    );
    expect(server.requests).toHaveLength(4);
    expect(sleeps).toEqual([100, 200, 400]);

    const jittered = recordingSleep();
    server.enqueue(
      ...Array.from({ length: 3 }, () => ({
        kind: 'json' as const,
        status: 503,
        body: { error: { message: 'overloaded' } },
      })),
    );
    const second = await modelError(
      chatModel({ sleep: jittered.sleep, maxRetries: 2, retryBaseMs: 100, random: () => 0 }).chat(ask('x')),
    );
    expect(second.message).toMatch(/failed after 3 attempts: 503 overloaded$/u);
    expect(jittered.sleeps).toEqual([50, 100]);

    server.enqueue({ kind: 'raw', status: 502, body: '<html><body>nginx</body></html>', contentType: 'text/html' });
    const proxy = await modelError(chatModel({ maxRetries: 0 }).chat(ask('x')));
    expect(proxy.message).toMatch(/failed: 502 Bad Gateway$/u);
  });

  it('retries a dropped connection', async () => {
    const { sleeps, sleep } = recordingSleep();
    const reasons: string[] = [];
    server.enqueue({ kind: 'reset' });
    const model = chatModel({
      sleep,
      retryBaseMs: 10,
      random: () => 1,
      onRetry: (event) => reasons.push(event.reason),
    });
    expect((await model.chat(ask('still there?'))).text).toBe('echo: still there?');
    expect(server.requests).toHaveLength(2);
    expect(sleeps).toEqual([10]);
    expect(reasons).toEqual(['connection closed by the server']);
  });

  it('retries a connection dropped half way through the body, and says so', async () => {
    const { sleep } = recordingSleep();
    const reasons: string[] = [];
    server.enqueue({ kind: 'reset-body' });
    const model = chatModel({
      sleep,
      retryBaseMs: 10,
      random: () => 1,
      onRetry: (event) => reasons.push(event.reason),
    });
    expect((await model.chat(ask('whole?'))).text).toBe('echo: whole?');
    expect(server.requests).toHaveLength(2);
    expect(reasons).toEqual(['connection closed by the server while the response body was read']);

    server.enqueue({ kind: 'reset-body' }, { kind: 'reset-body' });
    const error = await modelError(chatModel({ sleep, maxRetries: 1, retryBaseMs: 0 }).chat(ask('x')));
    expect(error.message).toBe(
      `openai: POST ${server.baseUrl}/chat/completions failed after 2 attempts: connection closed by the server while the response body was read`,
    );
  });

  it('gives up on a redirect loop at once, saying so', async () => {
    const looping = createServer((request, response) => {
      request.resume();
      response.writeHead(307, { location: request.url ?? '/' });
      response.end();
    });
    await new Promise<void>((resolve) => looping.listen(0, '127.0.0.1', resolve));
    try {
      const baseUrl = `http://127.0.0.1:${(looping.address() as AddressInfo).port}/v1`;
      const retries: string[] = [];
      const model = new OpenAIChatModel('m', {
        baseUrl,
        apiKey: KEY,
        env: {},
        maxRetries: 3,
        onRetry: (event) => retries.push(event.reason),
      });
      const error = await modelError(model.chat(ask('x')));
      expect(error.message).toBe(
        `openai: POST ${baseUrl}/chat/completions failed: too many redirects (the URL redirects in a loop? check the base URL)`,
      );
      expect(retries).toEqual([]);
    } finally {
      looping.closeAllConnections();
      await new Promise<void>((resolve) => looping.close(() => resolve()));
    }
  });

  it('times out a server that never answers, on every attempt', async () => {
    server.enqueue({ kind: 'hang' }, { kind: 'hang' });
    const error = await modelError(chatModel({ timeoutMs: 300, maxRetries: 1, retryBaseMs: 0 }).chat(ask('x')));
    expect(error.message).toBe(
      `openai: POST ${server.baseUrl}/chat/completions failed after 2 attempts: timed out after 300 ms`,
    );
    expect(server.requests).toHaveLength(2);
  });

  it('times out a body that stops half way (past the SDK timeout, which ends at the headers)', async () => {
    server.enqueue({ kind: 'hang-body' });
    const error = await modelError(chatModel({ timeoutMs: 300, maxRetries: 0 }).chat(ask('x')));
    expect(error.message).toBe(`openai: POST ${server.baseUrl}/chat/completions failed: timed out after 300 ms`);
  });

  it('stops reading a body past the byte bound, before the timeout, without retrying', async () => {
    server.enqueue({ kind: 'endless' });
    const error = await modelError(chatModel({ maxResponseBytes: 256 * 1024, timeoutMs: 30_000 }).chat(ask('x')));
    expect(error.message).toBe(
      `openai: POST ${server.baseUrl}/chat/completions failed: the response body passed 256 KiB, the most membench reads from an endpoint (an endpoint sending without end?)`,
    );
    expect(server.requests).toHaveLength(1);

    // A declared length over the bound is refused before the body is read.
    const padded = `{"pad":"${' '.repeat(300 * 1024)}"}`;
    server.enqueue({ kind: 'raw', body: padded, headers: { 'content-length': String(padded.length) } });
    expect((await modelError(chatModel({ maxResponseBytes: 256 * 1024 }).chat(ask('x')))).message).toMatch(
      /failed: the response body is 307210 bytes \(Content-Length\), over 256 KiB, the most membench reads/u,
    );
    // Within the bound, error bodies and answers read as before.
    expect((await chatModel({ maxResponseBytes: 256 * 1024 }).chat(ask('small'))).text).toBe('echo: small');
  });

  it('joins an answer given as a list of text parts, and refuses a part that is not text, naming it', async () => {
    const answer = (content: unknown, finish = 'stop') => ({
      kind: 'json' as const,
      body: { choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content } }] },
    });
    server.enqueue(
      answer([
        { type: 'text', text: 'Tofu ' },
        { type: 'output_text', text: 'curry.' },
      ]),
    );
    expect(await chatModel().chat(ask('x'))).toMatchObject({ text: 'Tofu curry.', cached: false });
    server.enqueue(answer([{ type: 'refusal', refusal: 'I cannot say.' }]));
    expect((await chatModel().chat(ask('x'))).text).toBe('I cannot say.');
    server.enqueue(answer([]));
    expect((await chatModel().chat(ask('x'))).text).toBe('');
    server.enqueue(
      answer([
        { type: 'text', text: 'a' },
        { type: 'image_url', image_url: { url: 'data:' } },
      ]),
    );
    expect((await modelError(chatModel().chat(ask('x')))).message).toBe(
      `openai: POST ${server.baseUrl}/chat/completions failed: unexpected response (choices[0].message.content[1] is a part of type "image_url": membench reads text parts only)`,
    );
    server.enqueue(answer([{ type: 'text', text: 7 }]));
    expect((await modelError(chatModel().chat(ask('x')))).message).toMatch(
      /unexpected response \(choices\[0\]\.message\.content\[0\]\.text is 7, not a string\)$/u,
    );
    server.enqueue(answer(42));
    expect((await modelError(chatModel().chat(ask('x')))).message).toMatch(
      /unexpected response \(choices\[0\]\.message\.content is 42: expected a string or a list of text parts\)$/u,
    );
  });

  it('says an answer the endpoint stopped at the output token limit is cut (finish_reason "length"), and counts it', async () => {
    const answer = (content: string, finish: string) => ({
      kind: 'json' as const,
      body: { choices: [{ index: 0, finish_reason: finish, message: { role: 'assistant', content } }] },
    });
    const metered = new MeteredModel(chatModel(), new TokenCounter('gpt-4o'));
    server.enqueue(answer('The dish was', 'length'), answer('Tofu.', 'stop'), answer('The', 'length'));
    expect(await metered.chat({ ...ask('x'), maxOutputTokens: 3 })).toMatchObject({ text: 'The dish was', cut: true });
    expect((await metered.chat(ask('y'))).cut).toBeUndefined();
    await metered.chat(ask('z'));
    expect(metered.usage.cutAnswers).toBe(2);
  });

  it('reports a malformed JSON body without retrying', async () => {
    server.enqueue({ kind: 'raw', body: '{"choices": [' });
    const error = await modelError(chatModel().chat(ask('x')));
    expect(error.message).toMatch(
      new RegExp(`^openai: POST ${server.baseUrl}/chat/completions failed: malformed JSON response \\(.+\\)$`, 'u'),
    );
    expect(server.requests).toHaveLength(1);

    server.enqueue({ kind: 'json', body: { unexpected: true } });
    // Valid JSON of another shape is not called malformed JSON.
    expect((await modelError(chatModel().chat(ask('x')))).message).toMatch(
      /failed: unexpected response \(no choices\[0\]\.message\)$/u,
    );
    // A 200 carrying an error object (some proxies and servers): its words, not only the missing shape, key masked.
    server.enqueue({ kind: 'json', body: { error: { message: `model "x" not loaded\n(key ${KEY})`, code: 404 } } });
    expect((await modelError(chatModel().chat(ask('x')))).message).toMatch(
      /failed: status 200 with an error body: model "x" not loaded \(key \*\*\*\)$/u,
    );
    server.enqueue({ kind: 'json', body: { error: 'embedding model missing' } });
    const embedder = new OpenAIEmbedder('e', { baseUrl: server.baseUrl, apiKey: KEY, env: {} });
    expect((await modelError(embedder.embed(['a']))).message).toMatch(
      /embeddings failed: status 200 with an error body: embedding model missing$/u,
    );
    server.enqueue({ kind: 'raw', body: '<html>proxy error</html>', contentType: 'text/html' });
    expect((await modelError(chatModel().chat(ask('x')))).message).toMatch(
      /malformed JSON response \(got a non-JSON body: .*proxy error/u,
    );
  });

  it('fails a wrong key at once (401, no retry) and never shows the key, even when the server echoes it', async () => {
    server.enqueue({
      kind: 'json',
      status: 401,
      body: { error: { message: `invalid API key: ${KEY}`, code: 'invalid_api_key' } },
    });
    const retries: string[] = [];
    const error = await modelError(
      chatModel({ maxRetries: 3, onRetry: (event) => retries.push(event.reason) }).chat(ask('x')),
    );
    expect(error.message).toBe(`openai: POST ${server.baseUrl}/chat/completions failed: 401 invalid API key: ***`);
    expect(server.requests).toHaveLength(1);
    expect(retries).toEqual([]);
  });

  it('sends a placeholder when no key is set (local servers need none) and says so on a 401', async () => {
    server.enqueue({ kind: 'json', status: 401, body: { error: { message: 'missing key' } } });
    const error = await modelError(createModel('openai:m', { baseUrl: server.baseUrl, env: {} }).chat(ask('x')));
    expect(error.message).toMatch(/failed: 401 missing key \(no API key was given: set OPENAI_API_KEY or pass one\)$/u);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer membench-no-key');
  });

  it('says so when the connection is refused', async () => {
    const port = await closedPort();
    const model = new OpenAIChatModel('m', {
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKey: KEY,
      env: {},
      maxRetries: 2,
    });
    const error = await modelError(model.chat(ask('x')));
    expect(error.message).toBe(
      `openai: POST http://127.0.0.1:${port}/v1/chat/completions failed: connection refused (is the server running?)`,
    );
  });

  it('refuses a base URL carrying credentials or a query, without echoing them', () => {
    for (const baseUrl of [
      `http://user:${KEY}@127.0.0.1:1/v1`,
      `http://127.0.0.1:1/v1?key=${KEY}`,
      `ftp://user:${KEY}@host/`,
    ]) {
      let caught: unknown;
      try {
        new OpenAIChatModel('m', { baseUrl, apiKey: 'other-key-0123', env: {} });
      } catch (error) {
        caught = error;
      }
      expect(caught).toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect((caught as Error).message).not.toContain(KEY);
    }
  });

  it('never has more requests in flight than the concurrency limit', async () => {
    server.holdInGroupsOf(3);
    const model = chatModel({ concurrency: 3 });
    const replies = await Promise.all(Array.from({ length: 9 }, (_, index) => model.chat(ask(`q${index}`))));
    expect(replies.map((reply) => reply.text)).toEqual(Array.from({ length: 9 }, (_, index) => `echo: q${index}`));
    expect(server.requests).toHaveLength(9);
    expect(server.maxInFlight).toBe(3);
  });

  it('rejects bad options and specs with INVALID_ARGUMENT', () => {
    expect(() => chatModel({ concurrency: 0 })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => createModel('openai:')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => createModel('openai:m', { baseUrl: 'not a url', env: {} })).toThrow(
      expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
    );
  });
});

describe('openai embedder', () => {
  it('embeds in batches, in order, and learns the dimensions from the first response', async () => {
    const embedder = new OpenAIEmbedder('embed-model', { baseUrl: server.baseUrl, apiKey: KEY, env: {}, batchSize: 2 });
    expect(embedder.dimensions).toBe(0);
    const texts = ['红烧肉', 'vegetarian', '', 'tofu', 'rice'];
    const vectors = await embedder.embed(texts);
    expect(server.requests).toHaveLength(3);
    expect(server.requests.map((request) => (request.body as { input: string[] }).input)).toEqual([
      ['红烧肉', 'vegetarian'],
      [' ', 'tofu'],
      ['rice'],
    ]);
    expect(server.requests[0]!.body).toMatchObject({ model: 'embed-model', encoding_format: 'float' });
    expect(vectors.every((vector) => vector instanceof Float32Array && vector.length === 8)).toBe(true);
    expect(Array.from(vectors[3]!)).toEqual(Array.from(Float32Array.from(fakeEmbedding('tofu', 8))));
    expect(embedder.dimensions).toBe(8);
    expect(await embedder.embed([])).toEqual([]);
  });

  it('sends and checks requested dimensions', async () => {
    const embedder = createEmbedder('openai:embed-model', {
      baseUrl: server.baseUrl,
      apiKey: KEY,
      env: {},
      dimensions: 4,
    });
    expect(embedder.dimensions).toBe(4);
    const error = await modelError(embedder.embed(['a']));
    expect(server.requests[0]!.body).toMatchObject({ dimensions: 4 });
    expect(error.message).toContain('returned a 8-dimension vector for openai:embed-model; expected 4 (as requested)');
  });

  it('refuses a vector that is no direction, and an index that names no input, without retrying', async () => {
    const embedder = new OpenAIEmbedder('embed-model', { baseUrl: server.baseUrl, apiKey: KEY, env: {} });
    const list = (...items: unknown[]): string => JSON.stringify({ object: 'list', data: items });
    const item = (index: unknown, embedding: unknown) => ({ object: 'embedding', index, embedding });
    const cases: Array<[string, string]> = [
      // JSON.parse reads 1e400 as Infinity; 1e308 is finite as a double, Infinity as a float32.
      [
        list(item(0, [0.5, 0.5]), item(1, [0.5, 0.5])).replace('[0.5,0.5]', '[0.5,1e400]'),
        'data[0].embedding[1] is Infinity, not a finite float32',
      ],
      [list(item(0, [0.5, 1e308]), item(1, [0.5, 0.5])), 'data[0].embedding[1] is 1e+308, not a finite float32'],
      [list(item(0, [0.5, 0.5]), item(1, [0, 0])), 'data[1].embedding is all zeros (no direction'],
      [list(item(0, []), item(1, [])), 'data[0].embedding is empty (a vector of no dimension)'],
      [list(item(0, [0.5, 'NaN']), item(1, [0.5, 0.5])), 'data[0].embedding[1] is "NaN", not a number'],
      [
        list(item(0, 'abc'), item(1, 'abc')),
        'data[0].embedding is a string that is not base64 of float32 values: "abc"',
      ],
      [
        list(item(0, Buffer.from(new Float32Array([Number.NaN, 1]).buffer).toString('base64')), item(1, [1, 1])),
        'data[0].embedding[0] is NaN, not a finite float32',
      ],
      [list(item(0.5, [1, 1]), item(1.5, [1, 1])), 'data[0].index 0.5: expected a whole number from 0 to 1'],
      [list(item('0', [1, 1]), item(1, [1, 1])), 'data[0].index "0": expected a whole number from 0 to 1'],
      [list(item(0, [1, 1]), item(0, [1, 1])), 'data[1].index 0 is given twice'],
      [list(null, item(1, [1, 1])), 'data[0] is null, not an object'],
    ];
    for (const [body, reason] of cases) {
      server.requests.length = 0;
      server.enqueue({ kind: 'raw', body });
      const error = await modelError(embedder.embed(['a', 'b']));
      expect(error.message).toContain(`${server.baseUrl}/embeddings failed: unexpected response (${reason}`);
      expect(server.requests).toHaveLength(1);
    }
    expect(embedder.dimensions).toBe(0);
    // Out of order but each index once: put back in order.
    server.enqueue({ kind: 'raw', body: list(item(1, [0, 1]), item(0, [1, 0])) });
    expect((await embedder.embed(['a', 'b'])).map((vector) => Array.from(vector))).toEqual([
      [1, 0],
      [0, 1],
    ]);
  });
});

describe('response cache in front of the openai model', () => {
  it('answers a repeated request from the cache, per trial, and never stores the key', async () => {
    const file = path.join(scratch, 'cache', 'responses.sqlite');
    const store = ResponseCache.open(file);
    const options = { baseUrl: server.baseUrl, apiKey: KEY, env: {} };
    const trial0 = createModel('openai:test-model', { ...options, cache: { store, trial: 0 } });
    expect(trial0).toBeInstanceOf(CachedChatModel);

    const first = await trial0.chat(ask('what did I order?'));
    expect(first).toMatchObject({ text: 'echo: what did I order?', cached: false });
    expect(server.requests).toHaveLength(1);

    const again = await trial0.chat(ask('what did I order?'));
    expect(again).toEqual({ text: 'echo: what did I order?', cached: true });
    expect(again.latencyMs).toBeUndefined();
    expect(server.requests).toHaveLength(1);

    const trial1 = createModel('openai:test-model', { ...options, cache: { store, trial: 1 } });
    expect((await trial1.chat(ask('what did I order?'))).cached).toBe(false);
    expect(server.requests).toHaveLength(2);

    const otherLimit = await trial0.chat({ ...ask('what did I order?'), maxOutputTokens: 10 });
    expect(otherLimit.cached).toBe(false);
    expect(server.requests).toHaveLength(3);

    const embedder = createEmbedder('openai:embed-model', { ...options, cache: { store } });
    await embedder.embed(['红烧肉', 'tofu']);
    await embedder.embed(['tofu', '红烧肉']);
    expect(server.requests).toHaveLength(4);

    for (const name of await readdir(path.dirname(file))) {
      expect((await readFile(path.join(path.dirname(file), name))).includes(KEY)).toBe(false);
    }
    store.close();
    expect((await readFile(file)).includes(KEY)).toBe(false);

    // Reopened (a later run): still a hit, without any endpoint.
    const reopened = ResponseCache.open(file);
    const offlineReplay = createModel('openai:test-model', {
      baseUrl: 'http://127.0.0.1:9/v1',
      env: {},
      cache: { store: reopened, trial: 0 },
    });
    expect(await offlineReplay.chat(ask('what did I order?'))).toEqual({
      text: 'echo: what did I order?',
      cached: true,
    });
    reopened.close();
  });
});

describe('an answer over the size bound', () => {
  const completion = (content: string) => ({
    kind: 'json' as const,
    body: {
      id: 'x',
      object: 'chat.completion',
      created: 0,
      model: 'm',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }],
    },
  });

  it('is cut at MAX_ANSWER_CHARS with the count dropped, counted by the meter, also when it comes back from the cache', async () => {
    const long = 'x'.repeat(MAX_ANSWER_CHARS + 12_345);
    server.enqueue(completion(long), completion('short'));
    const cache = ResponseCache.open(path.join(scratch, 'bounded.sqlite'));
    const cached = new CachedChatModel(chatModel(), cache);
    const meter = new MeteredModel(cached, new TokenCounter('gpt-4o'));
    const first = await meter.chat(ask('write forever'));
    expect(first.text.length).toBeLessThan(MAX_ANSWER_CHARS + 100);
    expect(first.text.startsWith('x'.repeat(MAX_ANSWER_CHARS))).toBe(true);
    expect(first.text.endsWith('answer truncated at 100000 characters, 12345 more dropped]')).toBe(true);
    const again = await meter.chat(ask('write forever'));
    expect(again).toMatchObject({ text: first.text, cached: true });
    expect((await meter.chat(ask('something else'))).text).toBe('short');
    expect(meter.usage.truncatedAnswers).toBe(2);
    cache.close();
  });
});
