import { describe, expect, it } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { planRun } from '../../../harness/run/runner.js';
import { createEmbedder } from '../../../harness/models/index.js';

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
    [{ stretch: 1e12 }, '--stretch 1000000000000: expected a whole number from 1 to 100000'],
    [{ stretch: 0 }, '--stretch 0: expected a whole number from 1 to 100000'],
    [{ stretch: -5 }, '--stretch -5: expected a whole number from 1 to 100000'],
    [{ stretch: 2.5 }, '--stretch 2.5: expected a whole number from 1 to 100000'],
    [{ crashFuzz: -1 }, '--crash-fuzz -1: expected a whole number from 0 to 10000'],
    [{ seed: Number.NaN }, '--seed is not a number: expected a whole number from 0 to 4294967295'],
    [{ seed: Number.POSITIVE_INFINITY }, '--seed is not finite: expected a whole number from 0 to 4294967295'],
    [{ seed: -1 }, '--seed -1: expected a whole number from 0 to 4294967295'],
    [{ trials: 0 }, '--trials 0: expected a whole number from 1 to 1000'],
    [{ workers: 0 }, '--workers 0: expected a whole number from 1 to 1024'],
    [{ cellTimeoutMs: 0 }, '--cell-timeout 0: expected a number from 1 to 604800'],
    [{ live: { concurrency: 0 } }, '--concurrency 0: expected a whole number from 1 to 1024'],
    [{ live: { timeoutMs: Number.NaN } }, '--timeout is not a number: expected a number from 1 to 3600000'],
    [{ live: { maxRetries: -1 } }, '--retries -1: expected a whole number from 0 to 100'],
    [
      { datasetLimit: 3 },
      '--limit 3 applies to --dataset imports only: name a dataset (--dataset locomo:FILE), or drop --limit',
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
      '--embedder hashed:0: the dimension 0: expected a whole number from 1 to 65536',
    );
    expect(createEmbedder('hashed:8').id).toBe('hashed-8');
  });
});
