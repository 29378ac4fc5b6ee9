/** `membench serve` as a user runs it: the built CLI on a free port, driven by the openai client, stopped by a signal. */
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { membench, startMembench, until } from './helpers.js';

describe('membench serve', () => {
  it('serves the offline model and the hashed embedder until SIGTERM, then exits 0', async () => {
    const running = startMembench(['serve', '--port', '0', '--embedder', 'hashed:32']);
    await until(() => /at http:\/\/127\.0\.0\.1:\d+\/v1/u.test(running.stdout()), running);
    const baseURL = /(http:\/\/127\.0\.0\.1:\d+\/v1)/u.exec(running.stdout())![1]!;
    const client = new OpenAI({ baseURL, apiKey: 'unused', maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'offline',
      messages: [{ role: 'user', content: '你好' }],
    });
    expect(completion.choices[0]!.message.content).toBe('好的。');
    const embedding = await client.embeddings.create({ model: 'hashed', input: 'hello world' });
    expect(embedding.data[0]!.embedding).toHaveLength(32);
    running.child.kill('SIGTERM');
    expect(await running.exited).toEqual({ code: 0, signal: null });
  });

  it('refuses a bad port or embedder with exit code 2 and no stack trace', async () => {
    const port = await membench(['serve', '--port', '70000']);
    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port 70000');
    const embedder = await membench(['serve', '--embedder', 'openai:text-embedding-3-small']);
    expect(embedder.code).toBe(2);
    expect(embedder.stderr).toMatch(/hashed embedder only/u);
    expect(embedder.stderr).not.toMatch(/\n\s+at /u);
  });
});
