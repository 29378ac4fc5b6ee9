/**
 * An endpoint that answers with `content: null`: the run goes on (the answer is scored as empty),
 * but a warning names each cell once on stderr, results.json counts the answers, the reports say
 * so (the offline judge's rule for an empty answer: test/harness/results/judge-rules.test.ts).
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
  server = await startFakeOpenAIServer({ chat: () => null });
});
afterAll(async () => {
  await server.close();
});

describe('answers with content: null', () => {
  it('are counted per cell, warned about once per cell and noted in the reports', {
    timeout: 120_000,
  }, async () => {
    const dir = await tempDir('membench-empty-');
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
    expect(cell!.usage.emptyAnswers).toBe(chats);
    const warnings = run.stderr.split('\n').filter((line) => line.includes('came back with no text'));
    expect(warnings).toEqual([
      `warning: ${cell!.id}: ${chats} model answer(s) came back with no text (content null or ""): scored as empty answers`,
    ]);
    expect(readFileSync(path.join(out, 'report.md'), 'utf8')).toContain(
      `empty: ${chats} model answer(s) came back with no text (content null or ""), scored as empty answers: ${cell!.id} (${chats})`,
    );
    expect(cell!.probes.every((probe) => probe.answer === '' && !probe.answerCorrect)).toBe(true);
  });
});
