/**
 * The API key given with --api-key never leaves the request: a live run against a local server
 * speaking the OpenAI wire format writes it into no output file (results, plan, cells, reports,
 * charts, cache) and prints it on neither stdout nor stderr, finished or interrupted.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import type { RunResult } from '../../harness/results/schema.js';
import { withoutTiming } from '../helpers/same-seed.js';
import { liveRunArgs, membench, startMembench, until } from './helpers.js';
import { membenchInProcess } from '../helpers/cli-in-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';

const KEY = 'sk-live-SECRET-9f8e7d6c5b4a3210';
const env = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };

/** The forms of `key` an endpoint may echo: the filter masks each (the Basic credential: the part its bytes alone decide). */
function variantsOf(key: string): string[] {
  const basic = Buffer.from(`user:${key}`).toString('base64');
  return [
    ...new Set([
      key,
      key.toUpperCase(),
      key.toLowerCase(),
      Buffer.from(key).toString('base64'),
      Buffer.from(key).toString('base64url'),
      encodeURIComponent(key),
      basic.slice(8, -4),
    ]),
  ];
}

/** Every file under `dir` (relative names) whose bytes hold `needle`, and how many files were read. */
function filesHolding(dir: string, needle: string): { read: string[]; holding: string[] } {
  const read = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
  return { read, holding: read.filter((name) => readFileSync(path.join(dir, name)).includes(needle)) };
}

/** `run` of the small scenario against a live endpoint at `baseUrl`, with the given strategies and further flags. */
const smallLiveRun = (baseUrl: string, strategies: readonly string[], ...more: string[]): string[] =>
  liveRunArgs(baseUrl, scenario, strategies, ...more);

let server: FakeOpenAIServer;
/** Two exchanges (the pork belly, the rice) and a probe: summary folds twice, the probe is answered, and "pork" is in the data. */
let scenario: string;
beforeAll(async () => {
  server = await startFakeOpenAIServer();
  scenario = writeSmallScenario(await tempDir('membench-secrets-scenario-'), 'pantry');
});
afterAll(async () => {
  await server.close();
});

describe('--api-key in a live run', () => {
  it('is written nowhere by a run interrupted mid-request either (plan.json, stdout, stderr)', {
    timeout: 120_000,
  }, async () => {
    const out = path.join(await tempDir('membench-secrets-'), 'run');
    const seen = server.requests.length;
    server.enqueue({ kind: 'hang' });
    const run = startMembench(
      smallLiveRun(server.baseUrl, ['summary'], '--api-key', KEY, '--no-cache', '-w', '1', '-o', out),
      { env },
    );
    // The event: the run's first model request reached the server (and hangs there), so the plan is written.
    await until(() => server.requests.length > seen, run);
    run.child.kill('SIGTERM');
    expect((await run.exited).code).toBe(130);
    const { read, holding } = filesHolding(out, KEY);
    expect(read).toContain('plan.json');
    expect(holding).toEqual([]);
    expect(run.stdout()).not.toContain(KEY);
    expect(run.stderr()).not.toContain(KEY);
    expect(server.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  });
});

describe('the key in a finished live run', () => {
  // One row per key source and endpoint: a plain one (the key only in the request) and one that
  // echoes the Authorization header into its answers (the key then in every answer, masked).
  it.each([
    ['--api-key', 'a plain endpoint', false, (key: string) => ({ args: ['--api-key', key], env })],
    ['--api-key', 'an echoing endpoint', true, (key: string) => ({ args: ['--api-key', key], env })],
    [
      'OPENAI_API_KEY',
      'an echoing endpoint',
      true,
      (key: string) => ({ args: [], env: { ...env, OPENAI_API_KEY: key } }),
    ],
  ])(
    'given by %s to %s, is sent and masked in every file written (results, reports, charts, junit, cache) and on stdout/stderr',
    { timeout: 120_000 },
    async (_source, _endpoint, echoAuthorization, given) => {
      const endpoint = await startFakeOpenAIServer({ echoAuthorization });
      try {
        const dir = await tempDir('membench-secrets-echo-');
        const { args, env: runEnv } = given(KEY);
        const liveRun = (strategies: string[], out: string) =>
          membench(
            smallLiveRun(
              endpoint.baseUrl,
              strategies,
              ...args,
              '--cache',
              path.join(dir, 'cache.sqlite'),
              '-w',
              '1',
              '-o',
              path.join(dir, out),
            ),
            { env: runEnv },
          );
        const run = await liveRun(['buffer', 'summary'], 'run');
        expect(run.code, run.stderr).toBe(0);
        // The key did reach the server: the run really was live.
        expect(endpoint.requests.length).toBeGreaterThan(0);
        expect(endpoint.requests.every((request) => request.headers.authorization === `Bearer ${KEY}`)).toBe(true);
        // With an echo, the answers did carry it (masked): the filter had something to do.
        const results = readFileSync(path.join(dir, 'run', 'results.json'), 'utf8');
        expect(results.includes('you sent Authorization: Bearer ***; your key is ***')).toBe(echoAuthorization);
        // Upper, lower, base64 (its last character and padding depend on the bytes after the key too), URL-safe base64, URL-encoded, inside Basic.
        expect(results.includes('encoded *** *** ***A== ***A *** Basic dXNlcjp***')).toBe(echoAuthorization);
        const { read, holding } = filesHolding(dir, KEY);
        expect(read).toEqual(
          expect.arrayContaining([
            'cache.sqlite',
            'run/results.json',
            'run/report.md',
            'run/report.html',
            'run/junit.xml',
          ]),
        );
        expect(read.some((name) => name.endsWith('.png'))).toBe(true);
        expect(holding).toEqual([]);
        for (const variant of [...variantsOf(KEY), KEY.slice(3)])
          expect({ variant, holding: filesHolding(dir, variant).holding }).toEqual({ variant, holding: [] });
        expect(run.stdout).not.toContain(KEY);
        expect(run.stderr).not.toContain(KEY);
        // Without an echo nothing was masked: the rest checks what masking left.
        if (!echoAuthorization) return;
        // The masked results are still a run: the compare reader takes them.
        const resultsFile = path.join(dir, 'run', 'results.json');
        expect((await membenchInProcess(['compare', resultsFile, resultsFile], { env })).code).toBe(0);
        // Replayed from the cache: still masked.
        const again = await liveRun(['summary'], 'again');
        expect(again.code, again.stderr).toBe(0);
        expect(filesHolding(dir, KEY).holding).toEqual([]);
      } finally {
        await endpoint.close();
      }
    },
  );
});

describe('a key that is not a secret to find', () => {
  // Placeholders for local servers ("none") and keys that are ordinary words ("pork", "sync": both
  // in the run's data) used to be masked in an offline run's results: "durability": "***" made
  // results.json unreadable, and recorded answers read "the *** belly is in the freezer".
  it('changes nothing in an offline run: results.json as without it (timing aside), read back by report and compare', {
    timeout: 300_000,
  }, async () => {
    const dir = await tempDir('membench-secrets-offline-');
    // One strategy in two durability modes: "sync" and "none" are values in results.json, "pork" in its answers.
    const offlineRun = (out: string, runEnv: NodeJS.ProcessEnv) =>
      membench(['run', '-c', scenario, '-s', 'buffer', '--durability', 'sync,none', '-w', '1', '-q', '-o', out], {
        env: runEnv,
      });
    const plainDir = path.join(dir, 'plain');
    const plain = await offlineRun(plainDir, env);
    expect(plain.code, plain.stderr).toBe(0);
    const plainResults = readFileSync(path.join(plainDir, 'results.json'), 'utf8');
    for (const word of ['"durability":"none"', 'pork belly', '"durability":"sync"'])
      expect(plainResults.replace(/\s/gu, '').includes(word.replace(/\s/gu, ''))).toBe(true);
    const view = (file: string): string =>
      JSON.stringify(withoutTiming(JSON.parse(readFileSync(file, 'utf8')) as RunResult));
    const keys = ['none', 'pork', 'sync', KEY];
    const runs = await Promise.all(keys.map((key) => offlineRun(path.join(dir, key), { ...env, OPENAI_API_KEY: key })));
    keys.forEach((key, index) => {
      expect(runs[index]!.code, runs[index]!.stderr).toBe(0);
      const file = path.join(dir, key, 'results.json');
      expect({ key, same: view(file) === view(path.join(plainDir, 'results.json')) }).toEqual({ key, same: true });
      expect(readFileSync(file, 'utf8')).not.toContain('***');
    });
    // Equal to the plain run's but for timing, and no mask anywhere: the readers take them as they take it.
    // compare first: report rewrites the dir it reads.
    const compared = await membenchInProcess(['compare', plainDir, path.join(dir, 'none'), '--no-latency'], { env });
    const report = await membenchInProcess(['report', path.join(dir, 'none')], { env });
    expect(report.code, report.stderr).toBe(0);
    expect(compared.code, compared.stdout).toBe(0);
  });

  // One four-letter key per source: the check is on the length, the same for every word.
  it.each([
    ['OPENAI_API_KEY', 'none', (key: string) => ({ args: [], env: { ...env, OPENAI_API_KEY: key } })],
    ['--api-key', 'pork', (key: string) => ({ args: ['--api-key', key], env })],
  ])(
    'is refused for a live run when shorter than 8 characters, given by %s (exit 2, no request sent)',
    {
      timeout: 120_000,
    },
    async (source, key, given) => {
      const out = path.join(await tempDir('membench-secrets-short-'), 'run');
      const seen = server.requests.length;
      const { args, env: runEnv } = given(key);
      const run = await membenchInProcess(smallLiveRun(server.baseUrl, ['summary'], ...args, '--no-cache', '-o', out), {
        env: runEnv,
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(
        `${source} is 4 characters long: a live endpoint needs a key of at least 8 characters`,
      );
      expect(run.stderr).not.toContain('***');
      expect(server.requests.length).toBe(seen);
    },
  );
});
