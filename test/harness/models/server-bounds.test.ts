/**
 * The local endpoint bounds its work per request: a text it cannot count in bounded time is refused
 * before any work, and `membench serve`'s large requests are answered in a worker thread while its
 * own thread answers small ones.
 */
import { HumanMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { HashedEmbedder, OfflineModel } from '../../../harness/models/index.js';
import {
  MAX_EMBEDDING_INPUTS,
  MAX_UNSPACED_CHARS,
  OFFLOAD_FROM_BYTES,
  startModelServer,
  type ModelServer,
} from '../../../harness/models/server.js';

let server: ModelServer;
const tokens = new TokenCounter('offline');
/** Resolvers of the next large requests handed to the worker, in order. */
let offloaded: (() => void)[] = [];
const nextOffload = (): Promise<void> => new Promise((resolve) => offloaded.push(resolve));

beforeAll(async () => {
  server = await startModelServer({
    model: new OfflineModel(),
    embedder: new HashedEmbedder(64),
    tokens,
    offload: { embedder: 'hashed:64' },
    onOffload: () => offloaded.shift()?.(),
  });
});
afterAll(() => server.close());

/** What the tests read of a response body. */
interface Reply {
  usage: { prompt_tokens: number };
  choices: { message: { content: string } }[];
  data: { embedding: number[] }[];
  error: { message: string; param: string | null };
}
const json = async (response: Response): Promise<Reply> => (await response.json()) as Reply;

const post = (route: string, body: unknown): Promise<Response> =>
  fetch(`${server.baseUrl}/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const EIGHT_MB = 8 * 1024 * 1024;
/** 8 MB of ordinary prose: words, spaces, sentences. */
function ordinaryText(): string {
  const sentence = 'My sister planted tomatoes in the raised beds, and I moved my savings to the new account. ';
  return sentence.repeat(Math.ceil(EIGHT_MB / sentence.length)).slice(0, EIGHT_MB);
}

/**
 * Sends `huge`, waits until the server has handed it to the worker, then sends a small question
 * and returns the order in which the two replies arrived.
 */
async function smallDuringHuge(route: string, huge: unknown): Promise<{ order: string[]; big: Response }> {
  const order: string[] = [];
  const handedOver = nextOffload();
  const big = post(route, huge).then((response) => {
    order.push('big');
    return response;
  });
  await handedOver;
  const small = await post('chat/completions', {
    model: 'offline',
    messages: [{ role: 'user', content: 'Where is my locker?' }],
  });
  order.push('small');
  expect(small.status).toBe(200);
  expect((await json(small)).usage.prompt_tokens).toBeGreaterThan(0);
  return { order, big: await big };
}

describe('membench serve under a huge request', () => {
  it('answers a small request while an 8 MB request of ordinary text is answered in the worker', async () => {
    const calls = tokens.encodeCalls;
    const text = ordinaryText();
    const { order, big } = await smallDuringHuge('chat/completions', {
      model: 'offline',
      messages: [{ role: 'user', content: text }],
    });
    expect(order).toEqual(['small', 'big']);
    expect(big.status).toBe(200);
    const answered = await json(big);
    // The worker counted the 8 MB prompt as this thread would have.
    expect(answered.usage.prompt_tokens).toBe(tokens.countMessages([new HumanMessage(text)]));
    expect(answered.choices[0]!.message.content.length).toBeGreaterThan(0);
    expect(server.counts.chat).toBeGreaterThanOrEqual(2);
    // This thread counted the small request only (its role, its text and the reply), and the check above.
    expect(tokens.encodeCalls - calls).toBeLessThanOrEqual(4 + 2);
  });

  it('answers a small request while a large embeddings input is embedded in the worker', async () => {
    const input = ordinaryText().slice(0, 4 * OFFLOAD_FROM_BYTES);
    const { order, big } = await smallDuringHuge('embeddings', { model: 'hashed', input: [input] });
    expect(order).toEqual(['small', 'big']);
    expect(big.status).toBe(200);
  });

  it('refuses an 8 MB single word with 413, naming the run, and answers a small request meanwhile', async () => {
    const { big } = await smallDuringHuge('chat/completions', {
      model: 'offline',
      messages: [{ role: 'user', content: 'a'.repeat(EIGHT_MB) }],
    });
    expect(big.status).toBe(413);
    const { error } = await json(big);
    expect(error.message).toContain('messages[0].content: a run of 8388608 characters without white space');
    expect(error.param).toBe('messages[0].content');
  });

  it('refuses more texts in one embeddings request than the OpenAI API takes, and answers as many', async () => {
    const over = await post('embeddings', {
      model: 'hashed',
      input: Array.from({ length: MAX_EMBEDDING_INPUTS + 1 }, () => 'a'),
    });
    expect(over.status).toBe(400);
    expect((await json(over)).error.message).toBe(
      `input: ${MAX_EMBEDDING_INPUTS + 1} texts in one request, over ${MAX_EMBEDDING_INPUTS} (the OpenAI API's limit): send them in batches`,
    );
    const full = await post('embeddings', {
      model: 'hashed',
      input: Array.from({ length: MAX_EMBEDDING_INPUTS }, () => 'a'),
    });
    expect(full.status).toBe(200);
    expect((await json(full)).data).toHaveLength(MAX_EMBEDDING_INPUTS);
  });

  it('refuses such a run, or one of white space, in a small request too, and counts a long text of ordinary words', async () => {
    const refused = await post('embeddings', { model: 'hashed', input: ['fine', 'x'.repeat(MAX_UNSPACED_CHARS + 1)] });
    expect(refused.status).toBe(413);
    expect((await json(refused)).error.param).toBe('input[1]');
    const spaces = await post('embeddings', { model: 'hashed', input: [`a${' '.repeat(MAX_UNSPACED_CHARS + 1)}b`] });
    expect(spaces.status).toBe(413);
    expect((await json(spaces)).error.message).toContain(
      `a run of ${MAX_UNSPACED_CHARS + 1} characters of white space`,
    );
    const words = 'the quick brown fox jumps over the lazy dog '.repeat(5_000);
    expect(words.length).toBeLessThan(OFFLOAD_FROM_BYTES);
    const answered = await post('embeddings', { model: 'hashed', input: [words, 'y'.repeat(MAX_UNSPACED_CHARS)] });
    expect(answered.status).toBe(200);
    expect((await json(answered)).usage.prompt_tokens).toBe(
      tokens.countText(words) + tokens.countText('y'.repeat(MAX_UNSPACED_CHARS)),
    );
  });
  it.each([
    [
      'an unspaced string in a tool call',
      { function: { name: 'lookup', arguments: JSON.stringify({ blob: 'x'.repeat(MAX_UNSPACED_CHARS) }) } },
      'messages[1].tool_calls[0].function.arguments',
    ],
    [
      // Spaced as sent, but counted as JSON.stringify writes it back: without a space.
      'spaced JSON, counted without its spaces',
      {
        function: { name: 'lookup', arguments: `{"ids": [${Array.from({ length: 4_000 }, (_, i) => i).join(', ')}]}` },
      },
      'messages[1].tool_calls[0].function.arguments',
    ],
    [
      "a tool's name",
      { function: { name: 'n'.repeat(MAX_UNSPACED_CHARS + 1), arguments: '{}' } },
      'messages[1].tool_calls[0].function.name',
    ],
  ])('refuses a long run in every text it counts, not only contents: %s', async (_, call, param) => {
    const answered = server.counts.chat ?? 0;
    const refused = await post('chat/completions', {
      model: 'offline',
      messages: [
        { role: 'user', content: 'Find it.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', ...call }] },
        { role: 'tool', tool_call_id: 'call_0', content: 'found' },
      ],
    });
    expect(refused.status).toBe(413);
    const { error } = await json(refused);
    expect(error.param).toBe(param);
    expect(error.message.startsWith(`${param}: a run of `)).toBe(true);
    expect(error.message).toContain('characters without white space');
    expect(server.counts.chat ?? 0).toBe(answered);
  });

  it('refuses a long run in a tool message as in any content', async () => {
    const refused = await post('chat/completions', {
      model: 'offline',
      messages: [
        { role: 'user', content: 'Find it.' },
        { role: 'tool', tool_call_id: 'call_0', content: 'y'.repeat(MAX_UNSPACED_CHARS + 1) },
      ],
    });
    expect(refused.status).toBe(413);
    expect((await json(refused)).error.param).toBe('messages[1].content');
  });

  it('answers large requests sent one after another, each in a new worker, though the idle one before it exits meanwhile', async () => {
    const prose = ordinaryText().slice(0, OFFLOAD_FROM_BYTES + 1024);
    // Two rounds: the first worker, retired idle, exits while the second (started by the second request) answers.
    for (let round = 0; round < 2; round++) {
      const handedOver = nextOffload();
      const reply = post('chat/completions', { model: 'offline', messages: [{ role: 'user', content: prose }] });
      await handedOver;
      // The reply is sent as soon as the worker answers; the worker, idle, is told to stop and exits later.
      expect((await reply).status).toBe(200);
    }
  });
});
