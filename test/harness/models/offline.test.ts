import { readFile } from 'node:fs/promises';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { HashedEmbedder, OfflineModel } from '../../../harness/models/index.js';
import { answerPrompt, summarizePrompt } from '../../../harness/core/prompts.js';
import { runBenchmark } from '../../../harness/run/runner.js';
import { BUILTIN_SCENARIO_DIR } from '../../../harness/core/package-info.js';

describe('OfflineModel', () => {
  const model = new OfflineModel();

  it('answers by quoting the best-matching sentence, preferring the latest on ties', () => {
    const context = [new HumanMessage('My flight is on Tuesday.'), new AIMessage('OK.'), new HumanMessage('Actually my flight moved to Thursday.')];
    expect(model.respond({ task: 'answer', messages: answerPrompt(context, 'When is my flight?') })).toContain('Thursday');
  });

  it('answers Chinese questions from Chinese context and declines when nothing matches', () => {
    const context = [new HumanMessage('我儿子对花生过敏。'), new AIMessage('好的。')];
    expect(model.respond({ task: 'answer', messages: answerPrompt(context, '谁对花生过敏？') })).toContain('花生');
    expect(model.respond({ task: 'answer', messages: answerPrompt(context, '烤箱温度是多少？') })).toBe('我不知道。');
    expect(model.respond({ task: 'answer', messages: answerPrompt([], 'What oven temperature?') })).toBe("I don't know.");
  });

  it('writes extractive summaries within the token budget, dropping acknowledgements', () => {
    const summary = model.respond({ task: 'summarize', messages: summarizePrompt('User likes tea.', 'Human: I live in Lyon.\nAI: OK.'), maxOutputTokens: 64 });
    expect(summary).toBe('User likes tea. I live in Lyon.');
    const tight = model.respond({ task: 'summarize', messages: summarizePrompt('User likes tea.', 'Human: I live in Lyon.'), maxOutputTokens: 7 });
    expect(tight).toBe('I live in Lyon.');
  });

  it('is deterministic', () => {
    const request = { task: 'answer' as const, messages: answerPrompt([new HumanMessage('Rex is my dog.')], 'Who is Rex?') };
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
});

describe('the offline model never reads gold data', () => {
  it('gives the same outputs when every probe\'s expect, forbid and evidence change', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-gold-'));
    const original = parse(await readFile(path.join(BUILTIN_SCENARIO_DIR, 'recipes-zh.yaml'), 'utf8')) as { name: string; steps: Record<string, unknown>[] };
    const doctored = structuredClone(original);
    for (const step of doctored.steps) {
      if ('probe' in step) {
        if (step.expect) step.expect = ['完全不同的答案', 'something else entirely'];
        step.forbid = ['另一个错误'];
        step.evidence = [];
      }
    }
    await writeFile(path.join(dir, 'original.yaml'), stringify(original));
    await writeFile(path.join(dir, 'doctored.yaml'), stringify(doctored));
    const run = async (file: string) => runBenchmark({ scenarios: [path.join(dir, file)], strategies: ['buffer', 'window'] });
    const [a, b] = [await run('original.yaml'), await run('doctored.yaml')];
    const outputs = (result: typeof a) => result.cells.map((cell) => ({ answers: cell.probes.map((probe) => probe.answer), tokens: cell.tokens, context: cell.probes.map((probe) => probe.contextTokens) }));
    expect(outputs(b)).toEqual(outputs(a));
    // ...while the scores, which do read gold data, change.
    expect(b.cells.map((cell) => cell.recall.contextRecall.hits)).not.toEqual(a.cells.map((cell) => cell.recall.contextRecall.hits));
  });
});
