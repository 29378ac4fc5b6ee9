/** The response cache on its own: keys, trials, persistence, embeddings per text, and token metering of hits. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CachedChatModel,
  CachedEmbedder,
  canonicalJson,
  MeteredModel,
  requestKey,
  ResponseCache,
  type ChatModel,
  type ChatRequest,
  type ChatResponse,
  type Embedder,
} from '../../../harness/models/index.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import Database from 'better-sqlite3';

/** A model that counts its calls and answers with a call number, so a repeated answer proves a hit. */
class CountingModel implements ChatModel {
  readonly id = 'openai:counting';
  readonly offline = false;
  calls = 0;
  async chat(request: ChatRequest): Promise<ChatResponse> {
    this.calls++;
    return { text: `answer ${this.calls} to ${request.messages.length} messages`, cached: false, latencyMs: 12 };
  }
}

/** An embedder that records every batch it is asked for. */
class RecordingEmbedder implements Embedder {
  readonly id = 'openai:recording';
  readonly dimensions = 3;
  readonly batches: string[][] = [];
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.batches.push([...texts]);
    return texts.map((text) => Float32Array.from([text.length, text.codePointAt(0) ?? 0, 0.5]));
  }
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'membench-cache-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const request = (text: string): ChatRequest => ({ task: 'answer', messages: [new HumanMessage(text)] });

describe('request keys', () => {
  it('do not depend on the order object fields were written in', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { f: 2, e: 3 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[1,{"e":3,"f":2}]},"b":1}',
    );
    expect(requestKey({ model: 'm', temperature: 0 })).toBe(requestKey({ temperature: 0, model: 'm' }));
    expect(requestKey({ model: 'm' })).toMatch(/^[0-9a-f]{64}$/u);
    expect(requestKey({ model: 'm', limit: undefined })).toBe(requestKey({ model: 'm' }));
  });
});

describe('CachedChatModel', () => {
  it('answers a repeated request from the file, per trial, across reopen', async () => {
    const file = path.join(scratch, 'chat.sqlite');
    const inner = new CountingModel();
    const store = ResponseCache.open(file);
    const model = new CachedChatModel(inner, store, { trial: 0 });

    expect(await model.chat(request('我点了什么？'))).toEqual({
      text: 'answer 1 to 1 messages',
      cached: false,
      latencyMs: 12,
    });
    expect(await model.chat(request('我点了什么？'))).toEqual({ text: 'answer 1 to 1 messages', cached: true });
    expect(inner.calls).toBe(1);
    expect([model.hits, model.misses]).toEqual([1, 1]);

    // Everything in the request matters: task, messages (roles included), output limit; and the trial.
    await model.chat({ ...request('我点了什么？'), task: 'reply' });
    await model.chat({ task: 'answer', messages: [new AIMessage('我点了什么？')] });
    await model.chat({ ...request('我点了什么？'), maxOutputTokens: 5 });
    expect(inner.calls).toBe(4);
    const trial1 = model.forTrial(1);
    expect((await trial1.chat(request('我点了什么？'))).cached).toBe(false);
    expect((await trial1.chat(request('我点了什么？'))).cached).toBe(true);
    expect(inner.calls).toBe(5);
    store.close();

    const reopened = ResponseCache.open(file);
    const replay = new CachedChatModel(new CountingModel(), reopened, { trial: 0 });
    expect(await replay.chat(request('我点了什么？'))).toEqual({ text: 'answer 1 to 1 messages', cached: true });
    reopened.close();
  });

  it('keeps an answer the endpoint cut at its token limit cut when it comes back from the file', async () => {
    const file = path.join(scratch, 'cut.sqlite');
    // Cuts the answer to a question about a dish, answers anything else whole.
    const cutting: ChatModel = {
      id: 'openai:cutting',
      offline: false,
      chat: async (asked) =>
        String(asked.messages[0]?.content).includes('dish')
          ? { text: 'The dish was', cached: false, latencyMs: 3, cut: true }
          : { text: 'Tuesday.', cached: false, latencyMs: 3 },
    };
    const store = ResponseCache.open(file);
    const metered = new MeteredModel(new CachedChatModel(cutting, store), new TokenCounter('gpt-4o'));
    expect((await metered.chat(request('what dish?'))).cut).toBe(true);
    expect(await metered.chat(request('what dish?'))).toEqual({ text: 'The dish was', cached: true, cut: true });
    expect(await metered.chat(request('what day?'))).toEqual({ text: 'Tuesday.', cached: false, latencyMs: 3 });
    expect(await metered.chat(request('what day?'))).toEqual({ text: 'Tuesday.', cached: true });
    expect(metered.usage.cutAnswers).toBe(2);
    store.close();
  });

  it('opens a cache file made before cut answers were recorded, its rows read as whole', async () => {
    const file = path.join(scratch, 'old-schema.sqlite');
    const old = new Database(file);
    old.exec(`CREATE TABLE chat (key TEXT NOT NULL, trial INTEGER NOT NULL, model TEXT NOT NULL, text TEXT NOT NULL,
      latency_ms REAL, created_at TEXT NOT NULL, PRIMARY KEY (key, trial))`);
    const key = requestKey({
      model: 'openai:counting',
      task: 'answer',
      request: { messages: [{ role: 'user', content: 'old' }] },
    });
    old.prepare('INSERT INTO chat VALUES (?, 0, ?, ?, 5, ?)').run(key, 'openai:counting', 'from before', 'then');
    old.close();
    const store = ResponseCache.open(file);
    expect(store.getChat(key, 0)).toEqual({ text: 'from before', cut: false });
    const model = new CachedChatModel(new CountingModel(), store);
    await model.chat(request('new'));
    expect(store.getChat(key, 0)).toEqual({ text: 'from before', cut: false });
    store.close();
    // Opened again: the column is there, and added once.
    ResponseCache.open(file).close();
  });

  it('uses the provider description of a request when given one', async () => {
    const store = ResponseCache.open(path.join(scratch, 'describe.sqlite'));
    const inner = new CountingModel();
    const describeAsLastWord = (item: ChatRequest) => ({
      last: String(item.messages.at(-1)?.content).split(' ').at(-1),
    });
    const model = new CachedChatModel(inner, store, { describe: describeAsLastWord });
    await model.chat(request('first tofu'));
    expect((await model.chat(request('second tofu'))).cached).toBe(true);
    store.close();
  });

  it('still has its tokens counted by MeteredModel, and is counted as a cached call', async () => {
    const store = ResponseCache.open(path.join(scratch, 'metered.sqlite'));
    const tokens = new TokenCounter('gpt-4o');
    const metered = new MeteredModel(new CachedChatModel(new CountingModel(), store), tokens);
    await metered.chat(request('what was the vegetarian dish?'));
    const afterMiss = metered.usage.answerTokens;
    expect(afterMiss).toBeGreaterThan(0);
    const hit = await metered.chat(request('what was the vegetarian dish?'));
    expect(hit.cached).toBe(true);
    expect(metered.usage.answerTokens).toBe(afterMiss * 2);
    expect(metered.usage.cachedCalls).toBe(1);
    store.close();
  });
});

describe('CachedEmbedder', () => {
  it('sends only unseen texts, once each, and returns vectors in input order', async () => {
    const file = path.join(scratch, 'embed.sqlite');
    const store = ResponseCache.open(file);
    const inner = new RecordingEmbedder();
    const embedder = new CachedEmbedder(inner, store, { dimensions: null });

    const first = await embedder.embed(['红烧肉', 'tofu', '红烧肉']);
    expect(inner.batches).toEqual([['红烧肉', 'tofu']]);
    const second = await embedder.embed(['rice', 'tofu', '红烧肉']);
    expect(inner.batches).toEqual([['红烧肉', 'tofu'], ['rice']]);
    expect(Array.from(second[1]!)).toEqual(Array.from(first[1]!));
    expect(Array.from(second[2]!)).toEqual(Array.from(first[0]!));
    expect(second[0]).toBeInstanceOf(Float32Array);
    expect([embedder.hits, embedder.misses]).toEqual([3, 3]);
    store.close();

    const reopened = ResponseCache.open(file);
    const replayInner = new RecordingEmbedder();
    const replay = new CachedEmbedder(replayInner, reopened, { dimensions: null });
    expect(Array.from((await replay.embed(['tofu']))[0]!)).toEqual(Array.from(first[1]!));
    expect(replayInner.batches).toEqual([]);
    // Other parameters (e.g. requested dimensions) are other vectors.
    await new CachedEmbedder(replayInner, reopened, { dimensions: 2 }).embed(['tofu']);
    expect(replayInner.batches).toEqual([['tofu']]);
    reopened.close();
  });
});
