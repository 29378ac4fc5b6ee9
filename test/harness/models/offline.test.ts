import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { parse, stringify } from 'yaml';
import { describe, expect, it, onTestFinished } from 'vitest';
import { HashedEmbedder, OfflineModel } from '../../../harness/models/index.js';
import { answererStats } from '../../../harness/models/offline-answer.js';
import { answerPrompt, summarizePrompt } from '../../../harness/core/prompts.js';
import { runBenchmark } from '../../../harness/run/runner.js';
import { BUILTIN_SCENARIO_DIR } from '../../../harness/core/package-info.js';
import { allOk } from '../../helpers/cells.js';

describe('OfflineModel', () => {
  const model = new OfflineModel();

  it('answers by quoting the best-matching sentence, preferring the latest on ties', () => {
    const context = [
      new HumanMessage('My flight is on Tuesday.'),
      new AIMessage('OK.'),
      new HumanMessage('Actually my flight moved to Thursday.'),
    ];
    expect(model.respond({ task: 'answer', messages: answerPrompt(context, 'When is my flight?') })).toContain(
      'Thursday',
    );
  });

  it('cuts a context line into statements once, whatever number of questions are asked over it', () => {
    const places = ['Oslo', 'Lima', 'Quito', 'Hanoi', 'Accra', 'Dakar', 'Porto', 'Tartu', 'Cusco', 'Bergen'];
    const line = (place: string): string => `My cousin keeps bees in ${place}.`;
    const context = places.flatMap((place) => [new HumanMessage(line(place)), new AIMessage(`Noted, ${place}.`)]);
    const before = answererStats.linesCut;
    const asked = ['Lima', 'Tartu', 'Bergen'];
    const answers = asked.map((place) =>
      model.respond({ task: 'answer', messages: answerPrompt(context, `Who keeps bees in ${place}?`) }),
    );
    expect(answers).toEqual(asked.map(line));
    // 20 lines (none seen before in this process), each cut once for the three questions, not three times.
    expect(answererStats.linesCut - before).toBe(20);
  });

  it('answers Chinese questions from Chinese context and declines when nothing matches', () => {
    const context = [new HumanMessage('我儿子对花生过敏。'), new AIMessage('好的。')];
    expect(model.respond({ task: 'answer', messages: answerPrompt(context, '谁对花生过敏？') })).toContain('花生');
    expect(model.respond({ task: 'answer', messages: answerPrompt(context, '烤箱温度是多少？') })).toBe('我不知道。');
    expect(model.respond({ task: 'answer', messages: answerPrompt([], 'What oven temperature?') })).toBe(
      "I don't know.",
    );
  });

  it('writes extractive summaries within the token budget, dropping acknowledgements', () => {
    const summary = model.respond({
      task: 'summarize',
      messages: summarizePrompt('User likes tea.', 'Human: I live in Lyon.\nAI: OK.'),
      maxOutputTokens: 64,
    });
    expect(summary).toBe('User likes tea. I live in Lyon.');
    const tight = model.respond({
      task: 'summarize',
      messages: summarizePrompt('User likes tea.', 'Human: I live in Lyon.'),
      maxOutputTokens: 7,
    });
    expect(tight).toBe('I live in Lyon.');
  });

  it('answers with the most recent of the statements that match the question about as well', () => {
    const context = [
      new HumanMessage('我们家四口人，两个大人两个孩子。'),
      new AIMessage('好的，四口人的话准备一斤半五花肉。'),
      new HumanMessage('这周六我爸妈也过来吃饭，一共六个人。'),
      new AIMessage('好的。'),
    ];
    expect(model.respond({ task: 'answer', messages: answerPrompt(context, '这周六一共几个人吃饭？') })).toContain(
      '六个人',
    );
  });

  it('declines when no sentence covers enough of the question, even with a word in common', () => {
    const context = [
      new HumanMessage('My son is allergic to peanuts.'),
      new AIMessage('Noted, no peanut oil then.'),
      new HumanMessage('We bake bread on Sundays.'),
    ];
    expect(
      model.respond({
        task: 'answer',
        messages: answerPrompt(context, 'Which bakery on Elm Street sells sourdough loaves on weekdays?'),
      }),
    ).toBe("I don't know.");
    expect(model.respond({ task: 'answer', messages: answerPrompt(context, 'What is my son allergic to?') })).toContain(
      'peanuts',
    );
  });

  it('keeps salient first-person facts ahead of chit-chat and questions when the budget is tight', () => {
    const lines = [
      'Human: My son is allergic to peanuts.',
      'AI: Thanks for telling me, that is good to know and I will keep it in mind for every recipe we make.',
      'Human: What a lovely sunny day it is today, is it not?',
      'AI: It really is a lovely day for cooking something nice together in the kitchen.',
      'Human: I only have one cast-iron pot.',
    ].join('\n');
    const summary = model.respond({ task: 'summarize', messages: summarizePrompt('', lines), maxOutputTokens: 20 });
    expect(summary).toBe('My son is allergic to peanuts. I only have one cast-iron pot.');
  });

  it('replaces a statement its correction is about instead of keeping both', () => {
    const first = model.respond({
      task: 'summarize',
      messages: summarizePrompt('', 'Human: I live in Shanghai.\nAI: Noted.'),
      maxOutputTokens: 64,
    });
    const second = model.respond({
      task: 'summarize',
      messages: summarizePrompt(first, "Human: Actually I've moved to Hangzhou.\nAI: Got it."),
      maxOutputTokens: 64,
    });
    expect(second).toContain('Hangzhou');
    expect(second).not.toContain('Shanghai');
    const zh = model.respond({
      task: 'summarize',
      messages: summarizePrompt('我住在上海。', 'Human: 我搬到杭州了，现在住在杭州。'),
      maxOutputTokens: 64,
    });
    expect(zh).toContain('杭州');
    expect(zh).not.toContain('上海');
  });

  it('is deterministic', () => {
    const request = {
      task: 'answer' as const,
      messages: answerPrompt([new HumanMessage('Rex is my dog.')], 'Who is Rex?'),
    };
    expect(model.respond(request)).toBe(model.respond(request));
  });
});

describe('HashedEmbedder', () => {
  it('gives normalised vectors, similar for shared words and CJK bigrams', async () => {
    const embedder = new HashedEmbedder(256);
    const [a, b, c] = await embedder.embed(['红烧肉怎么做', '红烧肉的做法', 'flight on Tuesday']);
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((sum, value, index) => sum + value * y[index]!, 0);
    expect(dot(a!, a!)).toBeCloseTo(1, 5);
    expect(dot(a!, b!)).toBeGreaterThan(dot(a!, c!));
  });

  it('gives a unit vector, never all zeros, to a text whose terms fill no slot: none, or cancelling out', () => {
    const squared = (vector: Float32Array) => vector.reduce((sum, value) => sum + value * value, 0);
    const words = ['apple', 'banana', 'cherry', 'grape', 'lemon', 'mango', 'peach', 'plum'];
    // One slot: any two terms of opposite signs cancel.
    const pairs = words.flatMap((first, index) => words.slice(index + 1).map((second) => `${first} ${second}`));
    for (const text of ['', ' ', '!!!', 'it is', ...pairs]) {
      for (const dimensions of [1, 64])
        expect(squared(new HashedEmbedder(dimensions).embedOne(text))).toBeCloseTo(1, 5);
    }
    const embedder = new HashedEmbedder(256);
    expect(embedder.embedOne('')).toEqual(embedder.embedOne('  '));
    expect(embedder.embedOne('!!!')).toEqual(embedder.embedOne('!!!'));
    expect(embedder.embedOne('!!!')).not.toEqual(embedder.embedOne('???'));
  });
});

describe('the offline model never reads gold data', () => {
  it("gives the same contexts, answers and model calls when every probe's expect, forbid and evidence change, for every strategy that calls it", {
    timeout: 120_000,
  }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-gold-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    for (const name of ['recipes-zh', 'preference-corrections']) {
      const original = parse(await readFile(path.join(BUILTIN_SCENARIO_DIR, `${name}.yaml`), 'utf8')) as {
        name: string;
        steps: Record<string, unknown>[];
      };
      const doctored = structuredClone(original);
      for (const step of doctored.steps) {
        if ('probe' in step) {
          if (step.expect) step.expect = ['完全不同的答案', 'something else entirely'];
          step.forbid = ['另一个错误'];
          step.evidence = [];
        }
      }
      await writeFile(path.join(dir, `original-${name}.yaml`), stringify(original));
      await writeFile(path.join(dir, `doctored-${name}.yaml`), stringify(doctored));
    }
    // summary-buffer under a limit that makes it summarise; file-index on the remember steps of preference-corrections.
    const run = async (prefix: string) =>
      allOk(
        await runBenchmark({
          scenarios: ['recipes-zh', 'preference-corrections'].map((name) => path.join(dir, `${prefix}-${name}.yaml`)),
          strategies: ['buffer', 'window', 'summary', 'summary-buffer', 'entity', 'file-index'],
          params: ['summary-buffer.maxTokenLimit=120'],
          workers: 1, // in this process: what the model reads does not depend on where the cell runs
        }),
      );
    const [a, b] = [await run('original'), await run('doctored')];
    const outputs = (result: typeof a) =>
      result.cells.map((cell) => ({
        id: cell.id,
        answers: cell.probes.map((probe) => probe.answer),
        // The context of every model call, by its size, and every model call the strategy made.
        contexts: cell.turns.map((turn) => turn.contextTokens),
        probeContexts: cell.probes.map((probe) => probe.contextTokens),
        usage: cell.usage,
        tokens: cell.tokens,
      }));
    expect(outputs(b)).toEqual(outputs(a));
    // The model was called: summaries and extractions (maintenance) and answers.
    for (const strategy of ['summary', 'summary-buffer', 'entity'])
      expect(a.cells.find((cell) => cell.strategy === strategy)!.usage.maintenanceCalls, strategy).toBeGreaterThan(0);
    // ...while the scores, which do read gold data, change.
    expect(b.cells.map((cell) => cell.recall.contextRecall.hits)).not.toEqual(
      a.cells.map((cell) => cell.recall.contextRecall.hits),
    );
  });
});
