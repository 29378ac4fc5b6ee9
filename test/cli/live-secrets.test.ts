/**
 * The API key given with --api-key never leaves the request: a live run against a local server
 * speaking the OpenAI wire format writes it into no output file (results, plan, cells, reports,
 * charts, cache) and prints it on neither stdout nor stderr, finished or interrupted.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { membench, startMembench, until } from './helpers.js';

const KEY = 'sk-live-SECRET-9f8e7d6c5b4a3210';
const env = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };

/** Every file under `dir` (relative names) whose bytes hold `needle`, and how many files were read. */
function filesHolding(dir: string, needle: string): { read: string[]; holding: string[] } {
  const read = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));
  return { read, holding: read.filter((name) => readFileSync(path.join(dir, name)).includes(needle)) };
}

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAIServer();
});
afterAll(async () => {
  await server.close();
});

describe('--api-key in a live run', () => {
  it('is sent to the endpoint and written nowhere: results, reports, charts, cache, stdout, stderr', {
    timeout: 120_000,
  }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-secrets-'));
    const out = path.join(dir, 'run');
    const args = [
      'run',
      '-c',
      'recipes-en',
      '-s',
      'buffer',
      '-s',
      'summary',
      '--model',
      'openai:test-model',
      '--base-url',
      server.baseUrl,
      '--api-key',
      KEY,
      '--cache',
      path.join(dir, 'cache.sqlite'),
      '-w',
      '1',
      '-o',
      out,
    ];
    const run = await membench(args, { env });
    expect(run.code, run.stderr).toBe(0);
    // The key did reach the server: the run really was live.
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.every((request) => request.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    const { read, holding } = filesHolding(dir, KEY);
    expect(read).toEqual(
      expect.arrayContaining(['cache.sqlite', 'run/results.json', 'run/report.md', 'run/report.html', 'run/junit.xml']),
    );
    expect(read.some((name) => name.endsWith('.png'))).toBe(true);
    expect(holding).toEqual([]);
    expect(run.stdout).not.toContain(KEY);
    expect(run.stderr).not.toContain(KEY);
  });

  it('is written nowhere by a run interrupted mid-request either (plan.json, stdout, stderr)', {
    timeout: 120_000,
  }, async () => {
    const out = path.join(await mkdtemp(path.join(os.tmpdir(), 'membench-secrets-')), 'run');
    const seen = server.requests.length;
    server.enqueue({ kind: 'hang' });
    const run = startMembench(
      [
        'run',
        '-c',
        'recipes-en',
        '-s',
        'summary',
        '--model',
        'openai:test-model',
        '--base-url',
        server.baseUrl,
        '--api-key',
        KEY,
        '--no-cache',
        '-w',
        '1',
        '-o',
        out,
      ],
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

describe('an endpoint that echoes the Authorization header into its answers', () => {
  it.each([
    ['--api-key', (key: string) => ({ args: ['--api-key', key], env })],
    ['OPENAI_API_KEY', (key: string) => ({ args: [], env: { ...env, OPENAI_API_KEY: key } })],
  ])(
    'the key given by %s is masked in every file written (results, reports, junit, cache) and on stdout/stderr',
    { timeout: 120_000 },
    async (_source, given) => {
      const echo = await startFakeOpenAIServer({ echoAuthorization: true });
      try {
        const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-secrets-echo-'));
        const out = path.join(dir, 'run');
        const { args, env: runEnv } = given(KEY);
        const run = await membench(
          [
            'run',
            '-c',
            'recipes-en',
            '-s',
            'buffer',
            '-s',
            'summary',
            '--model',
            'openai:test-model',
            '--base-url',
            echo.baseUrl,
            ...args,
            '--cache',
            path.join(dir, 'cache.sqlite'),
            '-w',
            '1',
            '-o',
            out,
          ],
          { env: runEnv },
        );
        expect(run.code, run.stderr).toBe(0);
        expect(echo.requests.length).toBeGreaterThan(0);
        expect(echo.requests.every((request) => request.headers.authorization === `Bearer ${KEY}`)).toBe(true);
        // The answers did carry the echo (masked): the filter had something to do.
        const results = readFileSync(path.join(out, 'results.json'), 'utf8');
        expect(results).toContain('you sent Authorization: Bearer ***; your key is ***');
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
        expect(holding).toEqual([]);
        expect(filesHolding(dir, KEY.slice(3)).holding).toEqual([]);
        expect(run.stdout).not.toContain(KEY);
        expect(run.stderr).not.toContain(KEY);
        // Replayed from the cache: still masked.
        const again = await membench(
          [
            'run',
            '-c',
            'recipes-en',
            '-s',
            'summary',
            '--model',
            'openai:test-model',
            '--base-url',
            echo.baseUrl,
            ...args,
            '--cache',
            path.join(dir, 'cache.sqlite'),
            '-w',
            '1',
            '-o',
            path.join(dir, 'again'),
          ],
          { env: runEnv },
        );
        expect(again.code, again.stderr).toBe(0);
        expect(filesHolding(dir, KEY).holding).toEqual([]);
      } finally {
        await echo.close();
      }
    },
  );
});
