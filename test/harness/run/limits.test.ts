import { describe, expect, it } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { planRun, runBenchmark } from '../../../harness/run/runner.js';
import { createEmbedder } from '../../../harness/models/index.js';
import { HashedEmbedder } from '../../../harness/models/hashed-embedder.js';

/** The message planRun refuses the options with (exit 2), or undefined when it plans them. */
async function refusal(options: Parameters<typeof planRun>[0]): Promise<string | undefined> {
  try {
    await planRun({ strategies: ['buffer'], scenarios: ['recipes-en'], ...options });
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as MembenchError).exitCode).toBe(2);
    return (error as Error).message;
  }
}

describe('numeric run options', () => {
  it.each([
    [{ stretch: 1e12 }, 'stretch 1000000000000: expected a whole number from 1 to 100000'],
    [{ stretch: 0 }, 'stretch 0: expected a whole number from 1 to 100000'],
    [{ stretch: -5 }, 'stretch -5: expected a whole number from 1 to 100000'],
    [{ stretch: 2.5 }, 'stretch 2.5: expected a whole number from 1 to 100000'],
    [{ crashFuzz: -1 }, 'crashFuzz -1: expected a whole number from 0 to 10000'],
    [{ seed: Number.NaN }, 'seed is not a number: expected a whole number from 0 to 4294967295'],
    [{ seed: Number.POSITIVE_INFINITY }, 'seed is not finite: expected a whole number from 0 to 4294967295'],
    [{ seed: -1 }, 'seed -1: expected a whole number from 0 to 4294967295'],
    [{ trials: 0 }, 'trials 0: expected a whole number from 1 to 1000'],
    [{ workers: 0 }, 'workers 0: expected a whole number from 1 to 1024'],
    [{ cellTimeoutMs: 0 }, 'cellTimeoutMs 0: expected a number from 1000 to 604800000'],
    [{ live: { concurrency: 0 } }, 'live.concurrency 0: expected a whole number from 1 to 1024'],
    [{ live: { timeoutMs: Number.NaN } }, 'live.timeoutMs is not a number: expected a number from 1 to 3600000'],
    [{ live: { maxRetries: -1 } }, 'live.maxRetries -1: expected a whole number from 0 to 100'],
    [
      { datasetLimit: 3 },
      '--limit 3 applies to dataset imports only: name a dataset (--dataset locomo:FILE), or drop --limit',
    ],
    // One rule for every setting the table marks datasetOnly.
    [
      { errata: 'errata.json' },
      '--errata errata.json applies to dataset imports only: name a dataset (--dataset locomo:FILE), or drop --errata',
    ],
    [
      { questionPrompts: 'prompts.yaml' },
      '--question-prompts prompts.yaml applies to dataset imports only: name a dataset (--dataset locomo:FILE), or drop --question-prompts',
    ],
  ])('refuses %j before anything runs', async (options, message) => {
    expect(await refusal(options)).toBe(message);
  });

  it('plans the bounds themselves', async () => {
    expect(
      await refusal({ seed: 0xffff_ffff, stretch: 100_000, crashFuzz: 0, trials: 1, cellTimeoutMs: 1000 }),
    ).toBeUndefined();
  });

  it('refuses a hashed embedder without dimensions', () => {
    expect(() => createEmbedder('hashed:0')).toThrow(
      'embedder "hashed:0": the dimension 0: expected a whole number from 1 to 65536',
    );
    expect(createEmbedder('hashed:8').id).toBe('hashed-8');
  });

  it('refuses a hashed embedder made with dimensions out of range, as the library builds it', () => {
    expect(() => new HashedEmbedder(-4)).toThrow(
      'HashedEmbedder dimensions -4: expected a whole number from 1 to 65536',
    );
    expect(new HashedEmbedder(8).dimensions).toBe(8);
  });
});

describe('the types of run options a program passes', () => {
  // Each of these ran (a string read letter by letter as strategy names, a shard past its count
  // giving 0 cells, an unknown field ignored) or failed with a TypeError from deep inside.
  it.each([
    [{ strategies: 'buffer' }, 'strategies "buffer": write it as ["buffer"]'],
    [
      { strategies: [42] },
      'strategies [42]: expected a name or a list of names, like [buffer, window]; got 42 in the list',
    ],
    [{ scenarios: 'recipes-en' }, 'scenarios "recipes-en": write it as ["recipes-en"]'],
    [{ durabilities: 'sync' }, 'durabilities "sync": write it as ["sync"]'],
    [{ retrievalK: '5' }, 'retrievalK "5": write it as [5]'],
    [{ seed: '7' }, 'seed "7": expected a number'],
    [{ shard: { index: 3, count: 2 } }, 'shard {"index":3,"count":2}: expected index from 1 to count'],
    [{ agentProcesses: 'yes' }, 'agentProcesses "yes": Invalid input: expected boolean, received string'],
    [{ onProgress: 5 }, 'onProgress 5: expected a function'],
    [{ store: {} }, 'store {}: expected an object with open and save functions (a CellStore)'],
    [{ signal: 'stop' }, 'signal "stop": expected an AbortSignal'],
    [
      { live: 'http://x' },
      'live "http://x": expected an object (baseUrl, apiKey, concurrency, timeoutMs, maxRetries, temperature)',
    ],
    [{ live: { temperature: 3 } }, 'live.temperature 3: expected a number from 0 to 2'],
    [
      { live: { baseURL: 'http://x' } },
      'unknown option "live.baseURL" (did you mean baseUrl?): live has baseUrl, apiKey, concurrency, timeoutMs, maxRetries, temperature',
    ],
  ])('refuses %j, naming the option', async (options, message) => {
    expect(await refusal(options as Parameters<typeof planRun>[0])).toBe(message);
  });

  it('refuses a field RunOptions does not have, and options that are no object', async () => {
    expect(await refusal({ seeds: 3 } as Parameters<typeof planRun>[0])).toMatch(
      /^unknown option "seeds" \(did you mean seed\?\): RunOptions has strategies, params, scenarios/u,
    );
    for (const options of [null, 5, ['buffer']])
      await expect(runBenchmark(options as never)).rejects.toThrow(
        `runBenchmark takes an object of options (RunOptions), not ${JSON.stringify(options)}`,
      );
  });

  it('takes every hook and field in its own type', async () => {
    expect(
      await refusal({
        onProgress: () => undefined,
        onWarning: () => undefined,
        signal: new AbortController().signal,
        store: { open: async () => new Map(), save: async () => undefined },
        now: () => new Date(),
        shard: { index: 2, count: 2 },
        durabilities: ['sync'],
        retrievalK: [5],
        live: { temperature: 0, baseUrl: 'http://127.0.0.1:1' },
        cwd: process.cwd(),
        workerProcesses: false,
        strategies: undefined,
      }),
    ).toBeUndefined();
  });
});
