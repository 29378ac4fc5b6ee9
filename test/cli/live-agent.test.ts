/**
 * A live model in agent processes: a crash scenario's cells run in processes started from the
 * agent bundle's startup snapshot, where Node 20 has no dynamic import(); the OpenAI SDK must load
 * there all the same, and the cell finish against a local server speaking the OpenAI wire format.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../harness/results/schema.js';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { tempDir } from '../helpers/temp-dir.js';
import { liveRunArgs, membench } from './helpers.js';

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAIServer();
});
afterAll(() => server.close());

describe('a live model in agent processes', () => {
  it('answers the crash scenario through the endpoint, from processes started from the snapshot', async () => {
    const out = path.join(await tempDir('membench-live-agent-'), 'run');
    const run = await membench(
      liveRunArgs(server.baseUrl, 'remember-then-crash', ['buffer'], '--no-cache', '-q', '-o', out),
      { env: { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' } },
    );
    expect(run.stderr).not.toMatch(/dynamic import/u);
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as RunResult;
    expect(result.cells.map((cell) => cell.status)).toEqual(['ok']);
    expect(server.requests.filter((request) => request.path.endsWith('/chat/completions')).length).toBeGreaterThan(0);
  });
});
