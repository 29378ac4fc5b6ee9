/** The local OpenAI-compatible endpoint, driven by the `openai` client itself over real HTTP. */
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HashedEmbedder, OfflineModel } from '../../../harness/models/index.js';
import { startModelServer, type ModelServer } from '../../../harness/models/server.js';

let server: ModelServer;
let client: OpenAI;
const embedder = new HashedEmbedder(64);

beforeAll(async () => {
  server = await startModelServer({ model: new OfflineModel(), embedder });
  client = new OpenAI({ baseURL: server.baseUrl, apiKey: 'unused', maxRetries: 0 });
});
afterAll(() => server.close());

/** Sends `raw` bytes to the endpoint and resolves with everything it answers until it closes. */
function rawExchange(raw: string): Promise<string> {
  const { port } = new URL(server.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(raw));
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
  });
}

/** The `error` object of a raw HTTP reply's JSON body. */
const errorOf = (reply: string): { message: string; type: string } =>
  (JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as { error: { message: string; type: string } }).error;

/** A user prompt laid out as mem0ai 3.x lays out its fact extraction (its section headers, in its order). */
function mem0Prompt(newMessages: string): string {
  return [
    '## Summary\n',
    '## Last k Messages\n[]',
    '## Recently Extracted Memories\n[]',
    '## Existing Memories\n[]',
    `## New Messages\n${newMessages}`,
    '## Observation Date\n2026-01-01',
    '## Current Date\n2026-01-01',
    '# Output:',
  ].join('\n\n');
}

describe('membench serve endpoint', () => {
  it('listens on 127.0.0.1 and lists its model and embedder', async () => {
    expect(server.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/u);
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(['offline', 'hashed-64']);
  });

  it('answers a chat completion with the offline model, with usage', async () => {
    const completion = await client.chat.completions.create({
      model: 'offline',
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(completion.choices[0]!.message.content).toBe('OK.');
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(completion.usage!.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
  });

  it('embeds as the hashed embedder does, in floats and in base64 (the client default)', async () => {
    const texts = ['my cat is called Miso', '我住在杭州'];
    const expected = (await embedder.embed(texts)).map((vector) => Array.from(vector));
    const floats = await client.embeddings.create({ model: 'hashed', input: texts, encoding_format: 'float' });
    expect(floats.data.map((item) => item.embedding)).toEqual(expected);
    const decoded = await client.embeddings.create({ model: 'hashed', input: texts });
    expect(decoded.data.map((item) => item.embedding)).toEqual(expected);
  });

  it('answers mem0 fact extraction in the shape mem0 parses, from the new messages only', async () => {
    const completion = await client.chat.completions.create({
      model: 'offline',
      response_format: { type: 'json_object' },
      messages: [
        { role: 'system', content: 'You extract memories.' },
        { role: 'user', content: mem0Prompt('user: I am allergic to peanuts.\nassistant: Noted, no peanuts.') },
      ],
    });
    const parsed = JSON.parse(completion.choices[0]!.message.content!) as {
      memory: { id: string; text: string; attributed_to: string }[];
    };
    expect(parsed.memory).toEqual([{ id: '0', text: 'I am allergic to peanuts.', attributed_to: 'user' }]);
    const empty = await client.chat.completions.create({
      model: 'offline',
      response_format: { type: 'json_object' },
      messages: [{ role: 'user', content: mem0Prompt('user: What time is it?') }],
    });
    expect(JSON.parse(empty.choices[0]!.message.content!)).toEqual({ memory: [] });
    expect(server.counts['mem0-extract']).toBe(2);
  });

  it('refuses JSON mode for a request it does not recognise, and bad requests, with an OpenAI error', async () => {
    const refused = client.chat.completions.create({
      model: 'offline',
      response_format: { type: 'json_object' },
      messages: [{ role: 'user', content: 'give me JSON' }],
    });
    await expect(refused).rejects.toMatchObject({ status: 400, message: expect.stringContaining('recognises') });
    await expect(client.chat.completions.create({ model: 'offline', messages: [] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('messages'),
    });
    await expect(client.embeddings.create({ model: 'hashed', input: 'x', dimensions: 3 })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('64'),
    });
  });

  /** POSTs a raw chat body (past the client's own types) and returns the status and the error. */
  async function rawChat(
    body: Record<string, unknown>,
  ): Promise<{ status: number; error?: { message: string; param: string | null } }> {
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'offline', messages: [{ role: 'user', content: 'hi' }], ...body }),
    });
    return {
      status: response.status,
      ...((await response.json()) as { error?: { message: string; param: string | null } }),
    };
  }

  it.each([
    [{ n: 5 }, 'n', 'n: this endpoint answers with one choice per request, not 5: send 5 requests'],
    [{ n: 0 }, 'n', 'n: expected a whole number >= 1, got 0'],
    [{ n: '2' }, 'n', 'n: expected a whole number >= 1, got "2"'],
    [{ tools: 'bad' }, 'tools', 'tools: expected a list of {type: "function", function: {name}}, got string'],
    [
      { tools: [{ type: 'function' }] },
      'tools',
      "tools[0].function.name: expected the tool's name (a non-empty string)",
    ],
    [
      { tools: [{ type: 'retrieval', function: { name: 'x' } }] },
      'tools',
      'tools[0]: expected {type: "function", function: {name}}',
    ],
    [
      { tools: [{ type: 'function', function: { name: 'x', parameters: 'none' } }] },
      'tools',
      'tools[0].function.parameters: expected a JSON schema object',
    ],
    [{ max_tokens: -5 }, 'max_tokens', 'max_tokens: expected a whole number >= 1, got -5'],
    [{ max_tokens: 0 }, 'max_tokens', 'max_tokens: expected a whole number >= 1, got 0'],
    [{ max_tokens: 1.5 }, 'max_tokens', 'max_tokens: expected a whole number >= 1, got 1.5'],
    [
      { max_tokens: 1e308 },
      'max_tokens',
      'max_tokens: too large: the largest accepted is 9007199254740991, got 1e+308',
    ],
    [{ max_tokens: 'abc' }, 'max_tokens', 'max_tokens: expected a whole number >= 1, got "abc"'],
    [
      { max_tokens: 5, max_completion_tokens: 0 },
      'max_completion_tokens',
      'max_completion_tokens: expected a whole number >= 1, got 0',
    ],
    [{ stream: 'true' }, 'stream', 'stream: expected true or false, got "true"'],
    [{ stream: true }, 'stream', 'stream: streaming is not supported by this endpoint'],
    [
      { tool_choice: 'required' },
      'tool_choice',
      'tool_choice: this endpoint never calls a tool (its model is not given the tools), so it cannot honour "required": send "auto" or "none"',
    ],
    [
      { tool_choice: { type: 'function', function: { name: 'lookup' } } },
      'tool_choice',
      'tool_choice: this endpoint never calls a tool (its model is not given the tools), so it cannot honour a named tool: send "auto" or "none"',
    ],
    [
      { messages: [{ role: 'user', content: '\ud800abc' }] },
      'messages[0].content',
      'messages[0].content: holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair): not text',
    ],
    [
      { metadata: { '\udfff': 'x' } },
      'metadata.\udfff',
      'metadata.\udfff: holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair): not text',
    ],
  ])('refuses what it cannot honour, %j, with a 400 naming the field', async (body, param, message) => {
    const answered = server.counts.chat ?? 0;
    expect(await rawChat(body)).toEqual({ status: 400, error: expect.objectContaining({ message, param }) });
    expect(server.counts.chat ?? 0).toBe(answered);
  });

  it('names an unknown route as asked (/ included) and a wrong method on a known one (405, with Allow)', async () => {
    const root = await fetch(server.baseUrl.replace(/\/v1$/u, '/'));
    expect(root.status).toBe(404);
    expect(((await root.json()) as { error: { message: string } }).error.message).toMatch(
      /^no route GET \/: this endpoint serves/u,
    );
    const get = await fetch(`${server.baseUrl}/chat/completions`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(((await get.json()) as { error: { message: string } }).error.message).toMatch(
      /^method GET \/v1\/chat\/completions not allowed: this endpoint serves POST/u,
    );
    const post = await fetch(`${server.baseUrl}/models`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers HEAD on GET /v1/models as GET, without the body', async () => {
    const get = await fetch(`${server.baseUrl}/models`);
    const head = await fetch(`${server.baseUrl}/models`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    expect(await head.text()).toBe('');
  });

  it('refuses a body that is not UTF-8 (it was read with U+FFFD and answered)', async () => {
    const body = Buffer.concat([
      Buffer.from('{"model":"offline","messages":[{"role":"user","content":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}]}'),
    ]);
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      'the body is not UTF-8 text',
    );
  });

  it('refuses an empty embeddings input as the OpenAI API does, naming it, and embeds a text of no words as the library does', async () => {
    const refuse = async (input: unknown, param: string): Promise<void> => {
      const response = await fetch(`${server.baseUrl}/embeddings`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'hashed', input }),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string; param: string } }).error).toMatchObject({
        message: `${param}: an empty string has no embedding`,
        param,
      });
    };
    await refuse('', 'input');
    await refuse(['a', 'b', 'c', ''], 'input[3]');
    const texts = ['!!!', ' ', 'it is', '???'];
    const answered = await client.embeddings.create({ model: 'hashed', input: texts, encoding_format: 'float' });
    const vectors = answered.data.map((item) => item.embedding);
    expect(vectors).toEqual((await embedder.embed(texts)).map((vector) => Array.from(vector)));
    const dot = (a: number[], b: number[]): number => a.reduce((sum, value, index) => sum + value * b[index]!, 0);
    for (const vector of vectors) expect(dot(vector, vector)).toBeCloseTo(1, 5);
  });

  it('answers 408 to a request whose body never arrives, and closes it', async () => {
    const quick = await startModelServer({ model: new OfflineModel(), embedder, requestTimeoutMs: 200 });
    try {
      const { port } = new URL(quick.baseUrl);
      const reply = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write(
            'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{',
          ),
        );
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', reject);
      });
      expect(reply).toMatch(/^HTTP\/1\.1 408/u);
      expect(errorOf(reply)).toMatchObject({ message: "the request's headers and body did not arrive within 200 ms" });
    } finally {
      await quick.close();
    }
  });

  it("answers what Node's parser refuses (a malformed request, headers over its limit) with an OpenAI error body, not an empty one", async () => {
    const malformed = await rawExchange('GARBAGE\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/u);
    expect(errorOf(malformed)).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringMatching(/^malformed HTTP request: HPE_/u),
    });
    const huge = await rawExchange(`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`);
    expect(huge).toMatch(/^HTTP\/1\.1 431 /u);
    expect(errorOf(huge).message).toMatch(/^request headers too large/u);
    // The endpoint still answers.
    expect((await client.models.list()).data).toHaveLength(2);
  });

  it('refuses a compressed body with 415, naming the encoding (it was read as "not JSON")', async () => {
    const response = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify({ model: 'offline', messages: [{ role: 'user', content: 'hi' }] })),
    });
    expect(response.status).toBe(415);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe(
      'Content-Encoding gzip: this endpoint reads bodies as sent (no decompression): send the JSON uncompressed',
    );
    const identity = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
      body: JSON.stringify({ model: 'offline', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(identity.status).toBe(200);
  });

  it('accepts n: 1, well-formed tools (never calling them), tool_choice auto or none, stream false and an output limit', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }];
    expect((await rawChat({ n: 1, tools })).status).toBe(200);
    expect((await rawChat({ tools, tool_choice: 'auto', stream: false, max_tokens: 1 })).status).toBe(200);
    expect((await rawChat({ tool_choice: 'none', stream: null, max_completion_tokens: 2 ** 31 })).status).toBe(200);
  });
});
