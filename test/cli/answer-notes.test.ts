/**
 * Answers an endpoint sends that are scored but not as a model's whole answer: the run goes on, but
 * a warning names each cell once on stderr, results.json counts the calls, and the reports say so.
 * - `content: null`: scored as empty (the offline judge's rule for an empty answer:
 *   test/harness/results/judge-rules.test.ts);
 * - `finish_reason: "length"`: the text as it came, cut at the output token limit (it was said nowhere).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeOpenAIServer, type FakeOpenAIServer } from '../helpers/fake-openai-server.js';
import { liveRunArgs, membench } from './helpers.js';
import type { OkRun } from '../helpers/cells.js';
import { writeSmallScenario } from '../helpers/small-scenario.js';
import { tempDir } from '../helpers/temp-dir.js';

const servers: FakeOpenAIServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

/** One buffer cell against an endpoint answering every chat with `chat`: the run, its one cell, its report.md and the chats sent. */
async function liveCell(chat: NonNullable<Parameters<typeof startFakeOpenAIServer>[0]>['chat']) {
  const server = await startFakeOpenAIServer({ chat });
  servers.push(server);
  const dir = await tempDir('membench-answers-');
  const out = path.join(dir, 'run');
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
    { env: { OPENAI_API_KEY: '', OPENAI_BASE_URL: '' } },
  );
  expect(run.code, run.stderr).toBe(0);
  const chats = server.requests.filter((request) => request.path.endsWith('/chat/completions')).length;
  expect(chats).toBeGreaterThan(0);
  const [cell] = (JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as OkRun).cells;
  return { run, cell: cell!, chats, report: readFileSync(path.join(out, 'report.md'), 'utf8') };
}

describe('answers with content: null', () => {
  it('are counted per cell, warned about once per cell and noted in the reports', { timeout: 120_000 }, async () => {
    const { run, cell, chats, report } = await liveCell(() => null);
    expect(cell.usage.emptyAnswers).toBe(chats);
    const warnings = run.stderr.split('\n').filter((line) => line.includes('came back with no text'));
    expect(warnings).toEqual([
      `warning: ${cell.id}: ${chats} model answer(s) came back with no text (content null or ""): scored as empty answers`,
    ]);
    expect(report).toContain(
      `empty: ${chats} model answer(s) came back with no text (content null or ""), scored as empty answers: ${cell.id} (${chats})`,
    );
    expect(cell.probes.every((probe) => probe.answer === '' && !probe.answerCorrect)).toBe(true);
  });
});

describe('answers cut at the output token limit', () => {
  it('are counted per cell, warned about once per cell and noted in the reports', { timeout: 120_000 }, async () => {
    const { run, cell, chats, report } = await liveCell(() => ({ content: 'The answer is', finishReason: 'length' }));
    expect(cell.usage.cutAnswers).toBe(chats);
    const words = `${chats} model call(s) stopped at their output token limit (finish_reason "length"): their text is cut short and was used as it came`;
    expect(run.stderr.split('\n').filter((line) => line.includes('output token limit'))).toEqual([
      `warning: ${cell.id}: ${words}`,
    ]);
    expect(report).toContain(`cut: ${words}: ${cell.id} (${chats})`);
    expect(cell.probes.every((probe) => probe.answer === 'The answer is')).toBe(true);
  });
});
