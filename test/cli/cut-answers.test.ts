/**
 * An endpoint that stops its answers at the output token limit (`finish_reason: "length"`): the run
 * goes on with the text as it came, but a warning names each cell once on stderr, results.json
 * counts the calls, and the reports say so (it was said nowhere).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { liveRunArgs, membench } from './helpers.js';
import type { OkRun } from '../helpers/cells.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';
import { tempDir } from '../helpers/temp-dir.js';

let server: FakeOpenAIServer;
beforeAll(async () => {
  server = await startFakeOpenAIServer({ chat: () => ({ content: 'The answer is', finishReason: 'length' }) });
});
afterAll(async () => {
  await server.close();
});

describe('answers cut at the output token limit', () => {
  it('are counted per cell, warned about once per cell and noted in the reports', {
    timeout: 120_000,
  }, async () => {
    const dir = await tempDir('membench-cut-');
    const out = path.join(dir, 'run');
    const env = { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' };
    const run = await membench(
      liveRunArgs(
        server.baseUrl,
        writeSmallScenario(dir, 'pantry'),
        ['buffer'],
        '--api-key',
        'local-test-key',
        '--no-cache',
        '-w',
        '1',
        '-o',
        out,
        '-q',
      ),
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const chats = server.requests.filter((request) => request.path.endsWith('/chat/completions')).length;
    expect(chats).toBeGreaterThan(0);
    const result = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as OkRun;
    const [cell] = result.cells;
    expect(cell!.usage.cutAnswers).toBe(chats);
    const words = `${chats} model call(s) stopped at their output token limit (finish_reason "length"): their text is cut short and was used as it came`;
    expect(run.stderr.split('\n').filter((line) => line.includes('output token limit'))).toEqual([
      `warning: ${cell!.id}: ${words}`,
    ]);
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toContain(`cut: ${words}: ${cell!.id} (${chats})`);
    expect(cell!.probes.every((probe) => probe.answer === 'The answer is')).toBe(true);
  });
});
