/**
 * LLM judges over the real `openai` SDK and real HTTP, against a local server speaking the OpenAI
 * wire format that plays the judge: strict reading of its reply, retries on 429/500, a reply past
 * the timeout, the response cache (judging twice costs no request), and what results hold.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JudgeItem } from '../../../harness/results/judge-rules.js';
import { MembenchError } from '../../../harness/core/errors.js';
import { ResponseCache } from '../../../harness/models/index.js';
import { createJudge, judgeRun, JUDGE_MAX_OUTPUT_TOKENS, parseVerdict } from '../../../harness/results/judges.js';
import { lastMessage, startFakeOpenAIServer, type FakeOpenAIServer } from '../../helpers/fake-openai-server.js';
import { smallRun } from '../../reports/fixture.js';
import { allOk } from '../../helpers/cells.js';
import { tempDir } from '../../helpers/temp-dir.js';

let server: FakeOpenAIServer;
beforeAll(async () => {
  // The judge's rule when no reply is queued: "yes" when the answer quotes the gold, else "no".
  server = await startFakeOpenAIServer({
    chat: (body) => {
      const prompt = lastMessage(body);
      const gold = /Reference[^:\n]*: (.*)/u.exec(prompt)?.[1];
      const answer = /Assistant's answer: (.*)/u.exec(prompt)?.[1] ?? '';
      return gold !== undefined && answer.includes(gold) ? 'yes' : 'no';
    },
  });
});
afterAll(async () => {
  await server.close();
});

const noWait = { sleep: async () => undefined, retryBaseMs: 1, random: () => 0 };
const item: JudgeItem = {
  type: 'default',
  question: 'Which pan do I use?',
  expect: ['cast-iron pan'],
  forbid: [],
  response: 'Your cast-iron pan.',
};
const judge = (options: { timeoutMs?: number; maxRetries?: number; cache?: ResponseCache } = {}) =>
  createJudge('openai:judge-model', {
    provider: { baseUrl: server.baseUrl, apiKey: 'sk-test-judges', ...noWait, ...options },
    cache: options.cache ?? false,
  });

describe('parseVerdict', () => {
  it('reads yes and no strictly: case, quotes, asterisks and a full stop aside; anything else is unparsed', () => {
    expect(['yes', 'Yes.', ' YES ', '**yes**', '"No"', 'no', 'No!'].map(parseVerdict)).toEqual([
      'yes',
      'yes',
      'yes',
      'yes',
      'no',
      'no',
      'no',
    ]);
    expect(['Yes, it does.', 'maybe', '', 'The answer is correct', 'yes no'].map(parseVerdict)).toEqual([
      'unparsed',
      'unparsed',
      'unparsed',
      'unparsed',
      'unparsed',
    ]);
  });
});

describe('an openai:NAME judge', () => {
  it('reads "yes", "Yes.", "no" and an unparseable reply, each kept raw; asks at temperature 0 for a short reply', async () => {
    const seen = server.requests.length;
    server.enqueue(
      { kind: 'chat', content: 'yes' },
      { kind: 'chat', content: 'Yes.' },
      { kind: 'chat', content: 'no' },
      { kind: 'chat', content: 'I would say it is mostly right' },
    );
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await judge().judge(item));
    expect(replies.map((reply) => [reply.verdict, reply.raw])).toEqual([
      ['yes', 'yes'],
      ['yes', 'Yes.'],
      ['no', 'no'],
      ['unparsed', 'I would say it is mostly right'],
    ]);
    const sent = server.requests
      .slice(seen)
      .map((request) => request.body as { temperature?: number; max_tokens?: number; model?: string });
    expect(sent.map((body) => [body.model, body.temperature, body.max_tokens])).toEqual(
      Array(4).fill(['judge-model', 0, JUDGE_MAX_OUTPUT_TOKENS]),
    );
    const prompt = lastMessage(server.requests.at(-1)!.body);
    expect(prompt).toContain('Which pan do I use?');
    expect(prompt).toContain('Reference answer: cast-iron pan');
    expect(prompt).toContain("Assistant's answer: Your cast-iron pan.");
    expect(replies.every((reply) => reply.tokens > 0)).toBe(true);
  });

  it('retries a 429 and a 500, then judges: one judgement, one request counted, three attempts on the wire', async () => {
    const seen = server.requests.length;
    server.enqueue(
      { kind: 'json', status: 429, body: { error: { message: 'slow down' } } },
      { kind: 'json', status: 500, body: { error: { message: 'oops' } } },
      { kind: 'chat', content: 'Yes' },
    );
    const live = judge();
    const reply = await live.judge(item);
    expect(reply.verdict).toBe('yes');
    expect(live.requests).toBe(1);
    expect(server.requests.length - seen).toBe(3);
  });

  it('gives up on a reply slower than the timeout, and judges on the retry', async () => {
    server.enqueue({ kind: 'hang' }, { kind: 'chat', content: 'no' });
    expect((await judge({ timeoutMs: 300, maxRetries: 1 }).judge(item)).verdict).toBe('no');
    server.enqueue({ kind: 'hang' });
    const error = await judge({ timeoutMs: 300, maxRetries: 0 })
      .judge(item)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as MembenchError).code).toBe('MODEL_ERROR');
    expect((error as MembenchError).message).toMatch(/timed out/u);
  });
});

describe('judgeRun', () => {
  it("files every answer's judgement with its raw reply, counts the judge apart, and judging again costs 0 requests", async () => {
    const run = smallRun();
    // The fixture predates stored gold: give each answerable probe its answer as gold, or a wrong one.
    run.cells.forEach((cell) =>
      cell.probes.forEach(
        (probe, index) =>
          (probe.expect =
            probe.category === 'abstention' ? undefined : [index % 2 === 0 ? probe.answer! : 'nothing like it']),
      ),
    );
    const probes = run.cells.flatMap((cell) => cell.probes).length;
    const cache = ResponseCache.open(path.join(await tempDir('membench-judge-'), 'cache.sqlite'));
    try {
      const before = server.requests.length;
      const first = allOk(await judgeRun(run, [createJudge('offline'), judge({ cache })]));
      expect(server.requests.length - before).toBe(probes);
      const live = first.judges!.find((entry) => entry.judge === 'openai:judge-model')!;
      expect(live).toMatchObject({
        label: 'openai:judge-model judge',
        prompts: 'membench',
        judged: probes,
        requests: probes,
        cached: 0,
        unparsed: 0,
      });
      expect(live.tokens).toBeGreaterThan(0);
      expect(first.judges!.find((entry) => entry.judge === 'offline')).toMatchObject({
        label: 'offline judge',
        requests: 0,
        tokens: 0,
        judged: probes,
      });
      const judgements = first.cells.flatMap((cell) => cell.probes.map((probe) => probe.judgements ?? []));
      expect(judgements.every((list) => list.length === 2 && list.every((judgement) => judgement.raw.length > 0))).toBe(
        true,
      );
      const answerable = first.cells.flatMap((cell) => cell.probes.filter((probe) => probe.category !== 'abstention'));
      const said = answerable.map((probe) => [
        probe.expect![0] === probe.answer,
        probe.judgements!.find((judgement) => judgement.judge === 'openai:judge-model')!.raw,
      ]);
      expect(said).toEqual(
        answerable.map((probe) => [
          probe.expect![0] === probe.answer,
          probe.expect![0] === probe.answer ? 'yes' : 'no',
        ]),
      );
      // The input is untouched.
      expect(run.judges).toBeUndefined();

      const seen = server.requests.length;
      const again = allOk(await judgeRun(first, [judge({ cache })]));
      expect(server.requests.length).toBe(seen);
      expect(again.judges!.find((entry) => entry.judge === 'openai:judge-model')).toMatchObject({
        requests: 0,
        cached: probes,
        judged: probes,
      });
      // Judged again, replaced: still one judgement per judge.
      expect(again.cells.every((cell) => cell.probes.every((probe) => probe.judgements!.length === 2))).toBe(true);
    } finally {
      cache.close();
    }
  });

  it('refuses a judge that is neither offline nor openai:NAME, and results without gold (written before gold was stored)', async () => {
    expect(() => createJudge('gpt-4o')).toThrow(/expected "offline" or "openai:NAME"/u);
    await expect(judgeRun(smallRun(), [createJudge('offline')])).rejects.toThrow(
      /hold no gold answers for \d+ probes \(first: recipes-zh\/buffer step \d+\)/u,
    );
  });
});
