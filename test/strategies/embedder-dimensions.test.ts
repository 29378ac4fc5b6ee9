/**
 * Embedders of any dimension, through the real openai SDK over real HTTP against the local fake
 * server: a model whose dimension membench does not know is learned from its first response; a
 * changed dimension, mid-run or on reopen, is an error naming both sizes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { HumanMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MeteredModel, OfflineModel, createEmbedder, type Embedder } from '../../harness/models/index.js';
import { TokenCounter } from '../../harness/core/tokens.js';
import { runBenchmark } from '../../harness/run/runner.js';
import type { MemoryStrategy, StrategyDefinition } from '../../strategies/types.js';
import { hybrid } from '../../strategies/hybrid.js';
import { vector } from '../../strategies/vector.js';
import { fakeEmbedding, startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { exchange } from './conformance.js';
import { allOk } from '../helpers/cells.js';

const KEY = 'sk-test-dimensions';
let server: FakeOpenAIServer;
let dir: string;

beforeAll(async () => {
  server = await startFakeOpenAIServer({ embeddingDimensions: 64 });
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'membench-dimensions-'));
  server.requests.length = 0;
  return () => rm(dir, { recursive: true, force: true });
});

/** The error a promise rejects with (the test fails when it resolves). */
async function failure(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  return promise.then(
    () => Promise.reject(new Error('expected a failure')),
    (error: unknown) => error as Error,
  );
}

const embedder = (spec: string): Embedder => createEmbedder(spec, { baseUrl: server.baseUrl, apiKey: KEY, env: {} });

async function open(definition: StrategyDefinition, withEmbedder: Embedder): Promise<MemoryStrategy> {
  const tokens = new TokenCounter('gpt-4o');
  const context = {
    dir,
    tokens,
    model: new MeteredModel(new OfflineModel(), tokens),
    embedder: withEmbedder,
    durability: 'sync' as const,
    seed: 7,
    now: () => new Date(),
  };
  const strategy = definition.create(context, definition.options.parse({ recentExchanges: 0 }));
  await strategy.open();
  return strategy;
}

describe('embedder dimensions', () => {
  it('runs vector and hybrid cells with a model of unknown dimension (learned from its first response)', async () => {
    const result = await runBenchmark({
      scenarios: ['recipes-en'],
      strategies: ['vector', 'hybrid'],
      embedder: 'openai:local-embed',
      live: { baseUrl: server.baseUrl, apiKey: KEY },
      cache: false,
    });
    expect(allOk(result).cells).toHaveLength(2);
    expect(result.header.embedder).toBe('openai:local-embed');
    expect(server.requests.filter((request) => request.path.endsWith('/embeddings')).length).toBeGreaterThan(0);
  });

  it.each([vector, hybrid])(
    '$name: refuses a store reopened with another dimension, naming both',
    async (definition) => {
      const first = await open(definition, embedder('openai:local-embed'));
      await exchange(first, 1, 'The kettle is in the garage.', 'OK.');
      await first.save({ message: new HumanMessage('Where is the kettle?'), turn: 2 });
      await first.close();
      const error = await failure(open(definition, embedder('openai:local-embed:32')));
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(error.message).toMatch(/64-dimension vectors.*openai:local-embed gives 32-dimension/u);
      const renamed = await failure(open(definition, embedder('openai:other-embed')));
      expect(renamed.message).toMatch(/embedded with openai:local-embed, not openai:other-embed/u);
      // The same model, its dimension unknown until it answers, reopens the store.
      const again = await open(definition, embedder('openai:local-embed'));
      expect(String((await again.load({ query: 'Where is the kettle?', turn: 2 })).messages[0]?.content)).toContain(
        'garage',
      );
      await again.close();
    },
  );

  it('fails clearly when the model changes its dimension mid-run', async () => {
    const strategy = await open(vector, embedder('openai:local-embed'));
    await exchange(strategy, 1, 'The kettle is in the garage.', 'OK.');
    server.enqueue({
      kind: 'json',
      body: {
        object: 'list',
        data: [
          { object: 'embedding', index: 0, embedding: fakeEmbedding('x', 16) },
          { object: 'embedding', index: 1, embedding: fakeEmbedding('y', 16) },
        ],
      },
    });
    const error = await failure(strategy.save({ message: new HumanMessage('Where is the kettle?'), turn: 2 }));
    expect(error).toMatchObject({ code: 'MODEL_ERROR' });
    expect(error.message).toMatch(/returned a 16-dimension vector for openai:local-embed; expected 64/u);
    await strategy.close();
  });

  it('reads openai:NAME:DIM, keeping colons inside the name', () => {
    expect(embedder('openai:local-embed:32').dimensions).toBe(32);
    expect(embedder('openai:nomic-embed-text:latest')).toMatchObject({
      id: 'openai:nomic-embed-text:latest',
      dimensions: 0,
    });
    expect(() => embedder('openai:local-embed:0')).toThrow(/at least 1/u);
  });
});
