/** The local endpoint bounds its work per request: a text it cannot count in bounded time is refused before any work, and a small request is answered meanwhile. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { HashedEmbedder, OfflineModel } from '../../../harness/models/index.js';
import { MAX_UNSPACED_CHARS, startModelServer, type ModelServer } from '../../../harness/models/server.js';

let server: ModelServer;
const tokens = new TokenCounter('offline');

beforeAll(async () => {
  server = await startModelServer({ model: new OfflineModel(), embedder: new HashedEmbedder(64), tokens });
});
afterAll(() => server.close());

/** What the tests read of a response body. */
interface Reply {
  usage: { prompt_tokens: number };
  error: { message: string; param: string | null };
}
const json = async (response: Response): Promise<Reply> => (await response.json()) as Reply;

const post = (route: string, body: unknown): Promise<Response> =>
  fetch(`${server.baseUrl}/${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('membench serve under a huge request', () => {
  it('refuses an 8 MB single word with 413 before counting it, and answers a small request sent after it', async () => {
    const calls = tokens.encodeCalls;
    const huge = post('chat/completions', {
      model: 'offline',
      messages: [{ role: 'user', content: 'a'.repeat(8 * 1024 * 1024) }],
    });
    const small = await post('chat/completions', {
      model: 'offline',
      messages: [{ role: 'user', content: 'Where is my locker?' }],
    });
    expect(small.status).toBe(200);
    expect((await json(small)).usage.prompt_tokens).toBeGreaterThan(0);
    const refused = await huge;
    expect(refused.status).toBe(413);
    const { error } = await json(refused);
    expect(error.message).toContain('messages[0].content: a run of 8388608 characters without white space');
    expect(error.param).toBe('messages[0].content');
    // Only the small request was counted (its role and its text, and the reply).
    expect(tokens.encodeCalls - calls).toBeLessThanOrEqual(4);
  });

  it('refuses such a run in an embeddings input, and counts a long text of ordinary words', async () => {
    const refused = await post('embeddings', { model: 'hashed', input: ['fine', 'x'.repeat(MAX_UNSPACED_CHARS + 1)] });
    expect(refused.status).toBe(413);
    expect((await json(refused)).error.param).toBe('input[1]');
    const words = 'the quick brown fox jumps over the lazy dog '.repeat(20_000);
    const answered = await post('embeddings', { model: 'hashed', input: [words, 'y'.repeat(MAX_UNSPACED_CHARS)] });
    expect(answered.status).toBe(200);
    expect((await json(answered)).usage.prompt_tokens).toBe(
      tokens.countText(words) + tokens.countText('y'.repeat(MAX_UNSPACED_CHARS)),
    );
  });
});
