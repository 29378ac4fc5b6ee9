/**
 * `bm25`: FTS5 bm25() ranking over segmented terms, Chinese included; the index lives in the
 * store file, written with each exchange; every durability mode; a real SIGKILL at
 * mid_memory_write inside an exchange's transaction.
 */
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { MembenchError } from '../../harness/core/errors.js';
import { runBenchmark } from '../../harness/run/runner.js';
import { bm25 } from '../../strategies/bm25.js';
import { segmenterFor } from '../../strategies/shared/segmenters.js';
import type { LoadResult, MemoryStrategy } from '../../strategies/types.js';
import { exchange, strategyScratch } from './conformance.js';
import { allOk } from '../helpers/cells.js';

const memoryOf = (messages: readonly BaseMessage[]): string =>
  messages[0]?.getType() === 'system' ? String(messages[0].content) : '';
const text = (messages: readonly BaseMessage[]): string =>
  messages.map((message) => String(message.content)).join('\n');

const scratch = strategyScratch(bm25);
const open = scratch.open;

async function chineseFiller(strategy: MemoryStrategy, fromTurn: number, count: number): Promise<void> {
  for (let turn = fromTurn; turn < fromTurn + count; turn++)
    await exchange(
      strategy,
      turn,
      `第${turn}天，我们去公园散步，天气晴朗，走了${turn}公里。`,
      `听起来很愉快，第${turn}天。`,
    );
}

describe('bm25 on recipes-zh', () => {
  it('finds the 花生过敏 turn at k=4', async () => {
    const result = allOk(await runBenchmark({ scenarios: ['recipes-zh'], strategies: ['bm25'], params: ['bm25.k=4'] }));
    const probe = result.cells[0]!.probes.find((item) => item.id === 'p-allergy')!;
    expect(probe.contextRecall).toBe(true);
    expect(probe.retrieved!.slice(0, 4).flat()).toContain('u2');
    expect(probe.retrieval!.turn.find((at) => at.k === 5)).toMatchObject({ recallAny: 1, recallAll: 1 });
  });
});

describe('bm25 retrieval', () => {
  it.each(['jieba', 'bigram', 'intl'])(
    'finds a Chinese fact after 50 filler exchanges (tokenizer %s)',
    async (tokenizer) => {
      const strategy = await open({ tokenizer, k: 2 });
      await exchange(strategy, 1, '我儿子对花生过敏，做菜要注意。', '好的，记住了。');
      await chineseFiller(strategy, 2, 50);
      await strategy.save({ message: new HumanMessage('我儿子对什么过敏？'), turn: 52 });
      const { messages } = await strategy.load({ query: '我儿子对什么过敏？', turn: 52 });
      expect(memoryOf(messages)).toContain('花生过敏');
    },
  );

  it('segments Chinese into words with jieba and into bigrams without a dictionary', () => {
    expect(segmenterFor('jieba')('我儿子对花生过敏')).toEqual(expect.arrayContaining(['儿子', '花生', '过敏']));
    expect(segmenterFor('bigram')('花生过敏 peanuts')).toEqual(['peanuts', '花生', '生过', '过敏']);
    expect(segmenterFor('jieba')('The cat is on the mat')).toEqual(['cat', 'mat']); // stop words dropped
    // Han runs go to jieba, the text between them to Unicode word boundaries, in order.
    expect(segmenterFor('jieba')('用 Python 3.5 写的 café 菜谱 v2')).toEqual([
      '用',
      'python',
      '3.5',
      '写',
      'café',
      '菜谱',
      'v2',
    ]);
  });

  it('stems English words, so "cooking" finds "cook"', async () => {
    const strategy = await open({ k: 1, recentExchanges: 0 });
    await exchange(strategy, 1, 'I cooked risotto for the neighbours yesterday.', 'Lovely.');
    await exchange(strategy, 2, 'The train was late again.', 'Annoying.');
    const { messages } = await strategy.load({ query: 'What was I cooking?', turn: 3 });
    expect(memoryOf(messages)).toContain('risotto');
  });

  it('returns its ranking with step ids, best first, the recent exchanges too when asked for depth', async () => {
    const strategy = await open({ k: 1 });
    const facts = ['The blue box holds marbles.', 'The red box holds keys.', 'The green box holds coins.'];
    for (const [index, fact] of facts.entries()) {
      await strategy.save({ message: new HumanMessage(fact), turn: index + 1, stepId: `u${index + 1}` });
      await strategy.save({ message: new AIMessage('ok'), turn: index + 1 });
    }
    await strategy.save({ message: new HumanMessage('Which box holds coins?'), turn: 4, stepId: 'q' });
    const shallow: LoadResult = await strategy.load({ query: 'Which box holds coins?', turn: 4 });
    // The green box is the recent exchange (verbatim, not ranked) unless a deep ranking is asked for.
    expect(shallow.retrieved!.map((item) => item.stepIds)).toEqual([['u2']]);
    const deep = await strategy.load({ query: 'Which box holds coins?', turn: 4, rankDepth: 10 });
    expect(deep.retrieved![0]!.stepIds).toEqual(['u3']);
    expect(
      deep
        .retrieved!.map((item) => item.stepIds)
        .flat()
        .sort(),
    ).toEqual(['u1', 'u2', 'u3']);
    const scores = deep.retrieved!.map((item) => item.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(deep.messages).toEqual(shallow.messages);
  });

  it('ranks a recent match above a stronger old one when recency is weighted', async () => {
    const run = async (recencyWeight: number): Promise<string> => {
      await rm(scratch.dir, { recursive: true, force: true });
      const strategy = await open({ k: 1, recentExchanges: 0, recencyWeight, halfLife: 5 });
      await exchange(strategy, 1, 'My favourite colour is blue, favourite colour blue.', 'Blue.');
      await chineseFiller(strategy, 2, 30);
      await exchange(strategy, 32, 'Now my colour is green.', 'Green.');
      await strategy.save({ message: new HumanMessage('What is my favourite colour?'), turn: 33 });
      const memory = memoryOf((await strategy.load({ query: 'What is my favourite colour?', turn: 33 })).messages);
      await strategy.close();
      return memory;
    };
    expect(await run(0)).toContain('blue');
    expect(await run(0.5)).toContain('green');
  });
});

describe('bm25 persistence', () => {
  const termsRows = (): { exchanges: number; indexed: number } => {
    const db = new Database(path.join(scratch.dir, 'bm25.sqlite'), { readonly: true });
    const exchanges = db.prepare('SELECT count(*) FROM exchanges').pluck().get() as number;
    const indexed = db
      .prepare(`SELECT count(*) FROM exchange_terms WHERE exchange_terms MATCH '"locker"'`)
      .pluck()
      .get() as number;
    db.close();
    return { exchanges, indexed };
  };

  it('sync: indexes each exchange in the file as it is stored, and a second instance searches it', async () => {
    const first = await open({ k: 1, recentExchanges: 0 });
    for (let turn = 1; turn <= 10; turn++)
      await exchange(first, turn, `Locker ${turn} opens with code ${turn * 111}.`, 'OK.');
    await first.save({ message: new HumanMessage('next'), turn: 11 });
    expect(termsRows()).toEqual({ exchanges: 10, indexed: 10 });
    const second = await open({ k: 1, recentExchanges: 0 });
    expect(memoryOf((await second.load({ query: 'Which code opens locker 7?', turn: 11 })).messages)).toContain('777');
    await exchange(second, 11, 'Locker 42 is broken.', 'Noted.');
    await second.save({ message: new HumanMessage('more'), turn: 12 });
    // The first instance finds what the second stored, from the shared index.
    expect(memoryOf((await first.load({ query: 'Is locker 42 broken?', turn: 12 })).messages)).toContain(
      'Locker 42 is broken',
    );
  });

  it('exit: nothing on disk before close, everything after; none: never', async () => {
    const crashed = await open({ recentExchanges: 0 }, 'exit');
    await exchange(crashed, 1, 'The door code is 4471.', 'OK.');
    await exchange(crashed, 2, 'The weather is fine.', 'OK.');
    await crashed.save({ message: new HumanMessage('What is the door code?'), turn: 3 });
    // Held exchanges are ranked from the in-memory index before anything is written.
    expect(memoryOf((await crashed.load({ query: 'door code', turn: 3 })).messages)).toContain('4471');
    expect(text((await (await open({}, 'exit')).load({ query: 'door code', turn: 3 })).messages)).not.toContain('4471');
    await crashed.close();
    // Reopened in exit mode, the in-memory index is rebuilt from the stored terms.
    expect(
      memoryOf((await (await open({ recentExchanges: 0 }, 'exit')).load({ query: 'door code', turn: 4 })).messages),
    ).toContain('4471');

    await rm(scratch.dir, { recursive: true, force: true });
    const memoryOnly = await open({}, 'none');
    await exchange(memoryOnly, 1, 'The bike lock is 5150.', 'OK.');
    await memoryOnly.save({ message: new HumanMessage('bike lock?'), turn: 2 });
    expect(text((await memoryOnly.load({ query: 'bike lock', turn: 2 })).messages)).toContain('5150');
    await memoryOnly.close();
    expect(text((await (await open({}, 'none')).load({ query: 'bike lock', turn: 2 })).messages)).not.toContain('5150');
  });

  it('async: exchanges land on the next tick without close', async () => {
    const writer = await open({}, 'async');
    await exchange(writer, 1, 'The gate code is 8812.', 'OK.');
    await writer.save({ message: new HumanMessage('next'), turn: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(text((await (await open({}, 'async')).load({ query: 'gate code', turn: 2 })).messages)).toContain('8812');
  });

  it('refuses a store segmented by another tokenizer, naming both', async () => {
    const first = await open({ tokenizer: 'jieba' });
    await exchange(first, 1, 'hello', 'hi');
    await first.close();
    const error = await open({ tokenizer: 'bigram' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as Error).message).toMatch(/segmented by the tokenizer jieba, not bigram/u);
  });
});

/** A child process that saves two exchanges into a bm25 store and kills itself at mid_memory_write while storing the second. */
const CRASHER = `
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { HashedEmbedder, MeteredModel, OfflineModel } from './harness/models/index.js';
import { TokenCounter } from './harness/core/tokens.js';
import { bm25 } from './strategies/bm25.js';
const { dir } = JSON.parse(process.env.BM25_CRASHER);
const tokens = new TokenCounter('gpt-4o');
let armed = false;
const checkpoint = (point) => { if (armed && point === 'mid_memory_write') process.kill(process.pid, 'SIGKILL'); };
const context = { dir, tokens, model: new MeteredModel(new OfflineModel(), tokens), embedder: new HashedEmbedder(64), durability: 'sync', seed: 7, now: () => new Date(), checkpoint };
const strategy = bm25.create(context, bm25.options.parse({}));
await strategy.open();
await strategy.save({ message: new HumanMessage('The shed key is under the blue pot.'), turn: 1 });
await strategy.save({ message: new AIMessage('Noted.'), turn: 1 });
armed = true;
await strategy.save({ message: new HumanMessage('Where is the shed key?'), turn: 2 });
process.exit(3);
`;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('bm25 killed at mid_memory_write', () => {
  it('stores the interrupted exchange on reopen, once, and a replayed save is not stored twice', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', CRASHER], {
      cwd: ROOT,
      env: { ...process.env, BM25_CRASHER: JSON.stringify({ dir: scratch.dir }) },
      stdio: 'inherit',
    });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, killed) => resolve(killed)),
    );
    expect(signal).toBe('SIGKILL');
    const db = new Database(path.join(scratch.dir, 'bm25.sqlite'), { readonly: true });
    expect(db.prepare('SELECT count(*) FROM exchanges').pluck().get()).toBe(0); // the transaction was rolled back
    db.close();
    const reopened = await open({ recentExchanges: 0 });
    // The agent re-saves the user message whose save the crash interrupted.
    await reopened.save({ message: new HumanMessage('Where is the shed key?'), turn: 2 });
    const { messages } = await reopened.load({ query: 'Where is the shed key?', turn: 2 });
    expect(memoryOf(messages)).toContain('blue pot');
    expect(messages.filter((message) => String(message.content) === 'Where is the shed key?')).toHaveLength(1);
    const snapshot = (await reopened.snapshot!()).join('\n');
    expect(snapshot.split('The shed key is under the blue pot.')).toHaveLength(2);
    expect(snapshot.split('Where is the shed key?')).toHaveLength(2); // stored once: pending, not also as an exchange of its own
  });
});
