import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MembenchError } from '../../harness/core/errors.js';
import { HashedEmbedder, MeteredModel, OfflineModel, type Embedder } from '../../harness/models/index.js';
import { TokenCounter } from '../../harness/core/tokens.js';
import { hnswStats, VectorIndex } from '../../strategies/stores/vector-index.js';
import type { DurabilityMode, MemoryStrategy } from '../../strategies/types.js';
import { vector, withoutOrphanTools } from '../../strategies/vector.js';
import { window } from '../../strategies/window.js';
import { describeConformance, exchange } from './conformance.js';

describeConformance(vector, { options: { exactBelow: 0, recentExchanges: 0 } });

/** Counts what reaches the embedder: calls and texts. */
class CountingEmbedder implements Embedder {
  calls = 0;
  texts = 0;
  readonly id: string;
  readonly dimensions: number;
  constructor(private readonly inner: Embedder) {
    this.id = inner.id;
    this.dimensions = inner.dimensions;
  }
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    this.calls++;
    this.texts += texts.length;
    return this.inner.embed(texts);
  }
}

const text = (messages: readonly BaseMessage[]): string =>
  messages.map((message) => String(message.content)).join('\n');
const memoryOf = (messages: readonly BaseMessage[]): string =>
  messages[0]?.getType() === 'system' ? String(messages[0].content) : '';

let dir: string;
let embedder: CountingEmbedder;
let opened: MemoryStrategy[];

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'membench-vector-'));
  // 1024 dimensions: few hash collisions, so similarities in these tests mean what the text says.
  embedder = new CountingEmbedder(new HashedEmbedder(1024));
  opened = [];
});
afterEach(async () => {
  for (const strategy of opened) await strategy.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

async function open(
  options: Record<string, unknown> = {},
  durability: DurabilityMode = 'sync',
  withEmbedder: Embedder = embedder,
): Promise<MemoryStrategy> {
  const tokens = new TokenCounter('gpt-4o');
  const context = {
    dir,
    tokens,
    model: new MeteredModel(new OfflineModel(), tokens),
    embedder: withEmbedder,
    durability,
    seed: 7,
    now: () => new Date('2026-01-01T00:00:00Z'),
  };
  const strategy = vector.create(context, vector.options.parse(options));
  opened.push(strategy);
  await strategy.open();
  return strategy;
}

/** Fifty exchanges that say nothing about the probed fact. */
async function filler(strategy: MemoryStrategy, fromTurn: number, count: number, zh = false): Promise<void> {
  for (let i = 0; i < count; i++) {
    const turn = fromTurn + i;
    if (zh)
      await exchange(
        strategy,
        turn,
        `第${turn}天，我们去了公园${turn}号门散步，天气晴朗。`,
        `听起来很愉快，第${turn}天。`,
      );
    else
      await exchange(
        strategy,
        turn,
        `On day ${turn} we walked to gate ${turn} of the park and the weather was sunny.`,
        `Sounds lovely, day ${turn}.`,
      );
  }
}

describe('vector retrieval', () => {
  it.each([
    {
      language: 'English',
      fact: 'My cat is called Mochi.',
      probe: 'What is my cat called?',
      answer: 'Mochi',
      zh: false,
    },
    { language: 'Chinese', fact: '我对花生过敏，不能吃花生。', probe: '我对什么过敏？', answer: '花生', zh: true },
  ])(
    'finds a fact from exchange 1 after 50 filler exchanges, which a window loses ($language)',
    async ({ fact, probe, answer, zh }) => {
      const strategy = await open();
      const tokens = new TokenCounter('gpt-4o');
      const windowed = window.create(
        {
          dir: await mkdtemp(path.join(dir, 'window-')), // inside the test's dir, removed after it
          tokens,
          model: new OfflineModel(),
          embedder,
          durability: 'none',
          seed: 7,
          now: () => new Date(),
        },
        window.options.parse({ k: 4 }),
      );
      await windowed.open();
      for (const memory of [strategy, windowed]) {
        await exchange(memory, 1, fact, zh ? '好的，记住了。' : 'Noted.');
        await filler(memory, 2, 50, zh);
        await memory.save({ message: new HumanMessage(probe), turn: 52 });
      }
      const retrieved = await strategy.load({ query: probe, turn: 52 });
      expect(memoryOf(retrieved.messages)).toContain(answer);
      expect(text(retrieved.messages)).toContain(probe);
      expect(retrieved.messages.at(-1)!.getType()).toBe('human');
      expect(text((await windowed.load({ query: probe, turn: 52 })).messages)).not.toContain(answer);
      await windowed.close();
    },
  );

  it('lists at most k memories, oldest first, and keeps the last exchange verbatim', async () => {
    const strategy = await open({ k: 2 });
    await exchange(strategy, 1, 'The red car is fast.', 'OK.');
    await exchange(strategy, 2, 'The blue car is slow.', 'OK.');
    await exchange(strategy, 3, 'The green car is new.', 'OK.');
    await exchange(strategy, 4, 'Lunch was noodles.', 'OK.');
    await strategy.save({ message: new HumanMessage('Which car is fast?'), turn: 5 });
    const { messages } = await strategy.load({ query: 'Which car is fast?', turn: 5 });
    const memory = memoryOf(messages);
    expect(memory.match(/\[turn \d+\]/gu)).toHaveLength(2);
    expect(memory.indexOf('[turn 1]')).toBeGreaterThanOrEqual(0);
    expect(memory.indexOf('[turn 1]')).toBeLessThan(memory.search(/\[turn [23]\]/u));
    expect(memory).not.toContain('noodles'); // the last complete exchange is verbatim, not retrieved
    expect(messages.slice(1).map((message) => String(message.content))).toEqual([
      'Lunch was noodles.',
      'OK.',
      'Which car is fast?',
    ]);
  });

  it('ranks a recent exchange above a more similar old one when recency is weighted', async () => {
    const run = async (recencyWeight: number): Promise<string> => {
      await rm(dir, { recursive: true, force: true });
      const strategy = await open({ k: 1, recentExchanges: 0, recencyWeight, halfLife: 5 });
      await exchange(strategy, 1, 'My favourite colour is blue.', 'Blue it is.');
      await filler(strategy, 2, 30);
      await exchange(strategy, 32, 'Actually I now prefer green as my colour.', 'Green then.');
      await exchange(strategy, 33, 'Lunch was noodles.', 'OK.');
      await strategy.save({ message: new HumanMessage('What is my favourite colour?'), turn: 34 });
      const memory = memoryOf((await strategy.load({ query: 'What is my favourite colour?', turn: 34 })).messages);
      await strategy.close();
      return memory;
    };
    expect(await run(0)).toContain('blue');
    expect(await run(0.5)).toContain('green');
  });

  it('gives the same memories on the exact path and on the HNSW path', async () => {
    const exact = await open({ exactBelow: 1000, k: 2 });
    const previousDir = dir;
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-vector-hnsw-'));
    const hnsw = await open({ exactBelow: 0, k: 2 });
    const colours = ['red', 'blue', 'green', 'black'];
    for (const memory of [exact, hnsw]) {
      for (let turn = 1; turn <= 40; turn++)
        await exchange(memory, turn, `Box${turn} is ${colours[turn % 4]} and holds marbles.`, `Noted box${turn}.`);
    }
    // Each query names two boxes: the top 2 are clear-cut (equal scores further down would make any order right).
    for (const query of ['Which is box12, and box30?', 'box7 or box19', 'Is box25 like box3?', 'box33 box38']) {
      const fromExact = memoryOf((await exact.load({ query, turn: 41 })).messages);
      const fromHnsw = memoryOf((await hnsw.load({ query, turn: 41 })).messages);
      expect(fromHnsw).toBe(fromExact);
      expect(fromExact.match(/\[turn \d+\]/gu)).toHaveLength(2);
    }
    await hnsw.close();
    await rm(dir, { recursive: true, force: true });
    dir = previousDir;
  });

  it('folds tool calls and results into the exchange and never returns an orphan tool message', async () => {
    const strategy = await open({ recentExchanges: 0 });
    await strategy.save({ message: new HumanMessage('Where is my parcel?'), turn: 1 });
    await strategy.save({
      message: new AIMessage({
        content: '',
        tool_calls: [{ id: 'call_1', name: 'track_parcel', args: { id: 'ZX9' }, type: 'tool_call' }],
      }),
      turn: 1,
    });
    await strategy.save({
      message: new ToolMessage({ content: 'parcel ZX9 is in Rotterdam', tool_call_id: 'call_1', name: 'track_parcel' }),
      turn: 1,
    });
    // Mid-turn, the pending call and its result are part of the context.
    const midTurn = (await strategy.load({ query: 'Where is my parcel?', turn: 1 })).messages;
    expect(midTurn.map((message) => message.getType())).toEqual(['human', 'ai', 'tool']);
    await strategy.save({ message: new AIMessage('It is in Rotterdam.'), turn: 1 });
    await filler(strategy, 2, 5);
    await strategy.save({ message: new HumanMessage('Which city was the parcel in?'), turn: 7 });
    const { messages } = await strategy.load({ query: 'Which city was the parcel in?', turn: 7 });
    expect(memoryOf(messages)).toContain('Tool result (track_parcel): parcel ZX9 is in Rotterdam');
    expect(memoryOf(messages)).toContain('Assistant called track_parcel({"id":"ZX9"})');
    expect(messages.slice(1).some((message) => message.getType() === 'tool')).toBe(false);
  });

  it('drops tool results whose call is not in the context', () => {
    const orphan = new ToolMessage({ content: 'done', tool_call_id: 'call_x', name: 'send' });
    const call = new AIMessage({
      content: '',
      tool_calls: [{ id: 'call_y', name: 'send', args: {}, type: 'tool_call' }],
    });
    const paired = new ToolMessage({ content: 'sent', tool_call_id: 'call_y', name: 'send' });
    expect(withoutOrphanTools([orphan, new HumanMessage('hi'), call, paired])).toEqual([
      expect.any(HumanMessage),
      call,
      paired,
    ]);
  });
});

describe('vector embedding cost', () => {
  it('embeds each exchange once, with one embedder call per turn', async () => {
    const strategy = await open({ exactBelow: 16, persistEvery: 8 });
    const perTurn: number[] = [];
    for (let turn = 1; turn <= 120; turn++) {
      const before = embedder.calls;
      await strategy.save({
        message: new HumanMessage(`Note ${turn}: the code for locker ${turn} is ${turn * 13}.`),
        turn,
      });
      await strategy.load({ query: `Note ${turn}: the code for locker ${turn} is ${turn * 13}.`, turn });
      await strategy.save({ message: new AIMessage(`Saved note ${turn}.`), turn });
      perTurn.push(embedder.calls - before);
    }
    // The previous exchange and the new user message (the load's query) share one call.
    expect(Math.max(...perTurn.slice(1))).toBe(1);
    expect(embedder.texts).toBe(120 + 119);
  });

  it('does not embed again on reopen and retrieves the same memories', async () => {
    const first = await open({ exactBelow: 0 });
    for (let turn = 1; turn <= 30; turn++)
      await exchange(first, turn, `Fact ${turn}: planet ${turn} has ${turn + 2} moons.`, `OK ${turn}.`);
    await first.save({ message: new HumanMessage('How many moons has planet 7?'), turn: 31 });
    const before = (await first.load({ query: 'How many moons has planet 7?', turn: 31 })).messages;
    await first.close();
    expect(existsSync(path.join(dir, 'vector.hnsw'))).toBe(true);
    embedder.calls = 0;
    embedder.texts = 0;
    const second = await open({ exactBelow: 0 });
    const after = (await second.load({ query: 'How many moons has planet 7?', turn: 31 })).messages;
    expect(embedder.texts).toBe(1); // the query only
    expect(text(after)).toBe(text(before));
    expect(memoryOf(after)).toContain('planet 7 has 9 moons');
  });
});

describe('vector durability', () => {
  it('sync: a second instance opened without closing the first finds every saved exchange', async () => {
    const first = await open({ exactBelow: 8, persistEvery: 4 });
    for (let turn = 1; turn <= 25; turn++)
      await exchange(first, turn, `The password of vault${turn} is word${turn}x.`, `Stored ${turn}.`);
    expect(existsSync(path.join(dir, 'vector.hnsw'))).toBe(true); // written along the way, not only on close
    embedder.texts = 0;
    const second = await open({ exactBelow: 8, persistEvery: 4, k: 1 });
    expect(embedder.texts).toBe(0); // nothing re-embedded on reopen
    for (let turn = 1; turn <= 24; turn++) {
      const { messages } = await second.load({ query: `What is the password of vault${turn}?`, turn: 26 });
      expect(text(messages)).toContain(`word${turn}x`);
    }
    // The last exchange is still in progress in the first instance, which is alive: it stays the first's.
    expect(text((await second.load({ query: 'vault', turn: 26 })).messages)).not.toContain('word25x');
    expect((await second.snapshot!()).join('\n')).toContain('word25x');
    // Once the first has closed, the next opener continues that exchange.
    await first.close();
    expect(text((await (await open()).load({ query: 'vault', turn: 26 })).messages)).toContain('word25x');
  });

  it('sync: a complete exchange whose embedding failed is embedded by the next opener, once', async () => {
    const first = await open();
    await exchange(first, 1, 'The boat is called Seagull.', 'Nice.');
    await first.save({ message: new HumanMessage('The car is called Comet.'), turn: 2 });
    await first.close();
    // The embedder fails (an endpoint down): save() rejects, and the user message is committed all the same.
    const failing = await open({}, 'sync', {
      id: embedder.id,
      dimensions: embedder.dimensions,
      embed: async () => Promise.reject(new Error('network down')),
    });
    await expect(failing.save({ message: new HumanMessage('What is the boat called?'), turn: 3 })).rejects.toThrow(
      'network down',
    );
    await failing.close();
    embedder.texts = 0;
    const reopened = await open({ recentExchanges: 0 });
    expect(embedder.texts).toBe(1); // the Comet exchange, never embedded before
    const { messages } = await reopened.load({ query: 'What is the car called, and the boat?', turn: 3 });
    expect(memoryOf(messages)).toContain('Comet');
    expect(memoryOf(messages)).toContain('Seagull');
    expect(text(messages)).toContain('What is the boat called?');
    await reopened.close();
    embedder.texts = 0;
    await open();
    expect(embedder.texts).toBe(0);
  });

  it('exit: nothing survives a crash, everything survives a clean close', async () => {
    const crashed = await open({}, 'exit');
    await exchange(crashed, 1, 'The door code is 4471.', 'OK.');
    await crashed.save({ message: new HumanMessage('next'), turn: 2 });
    expect(text((await (await open({}, 'exit')).load({ query: 'door code', turn: 2 })).messages)).not.toContain('4471');
    await crashed.close();
    expect(text((await (await open({}, 'exit')).load({ query: 'door code', turn: 3 })).messages)).toContain('4471');
  });

  it('async: writes land on the next tick without close', async () => {
    const writer = await open({}, 'async');
    await exchange(writer, 1, 'The door code is 8812.', 'OK.');
    await writer.save({ message: new HumanMessage('next'), turn: 2 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(text((await (await open({}, 'async')).load({ query: 'door code', turn: 2 })).messages)).toContain('8812');
  });

  it('rebuilds from SQLite when the index file belongs to another store', async () => {
    const other = await open({ exactBelow: 0 });
    for (let turn = 1; turn <= 12; turn++) await exchange(other, turn, `Other store fact ${turn}.`, 'OK.');
    await other.close();
    const staleIndex = path.join(dir, 'vector.hnsw');
    const previousDir = dir;
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-vector-stale-'));
    const first = await open({ exactBelow: 0 });
    const ferries = ['Amber', 'Birch', 'Cedar', 'Dune'];
    for (let turn = 1; turn <= 4; turn++)
      await exchange(first, turn, `Ferry ${ferries[turn - 1]} leaves from pier ${turn + 40}.`, 'OK.');
    await first.close();
    await writeFile(path.join(dir, 'vector.hnsw'), await readFile(staleIndex)); // labels 1-12; this store has 1-4
    embedder.texts = 0;
    const reopened = await open({ exactBelow: 0, recentExchanges: 0, k: 1 });
    expect(embedder.texts).toBe(0);
    expect(
      memoryOf((await reopened.load({ query: 'Which pier does ferry Cedar leave from?', turn: 5 })).messages),
    ).toContain('pier 43');
    await reopened.close();
    await rm(dir, { recursive: true, force: true });
    dir = previousDir;
  });

  it('refuses to mix vectors of another embedder', async () => {
    const first = await open();
    await exchange(first, 1, 'hello', 'hi');
    await first.close();
    await expect(open({}, 'sync', new HashedEmbedder(128))).rejects.toBeInstanceOf(MembenchError);
  });
});

/** A fact only writer `writer` saves at step `step`: its locker name is a word no other exchange has. */
const fact = (writer: number, step: number): string =>
  `Writer ${writer} note ${step}: locker w${writer}n${step} opens with code ${1000 + 37 * writer + step}.`;

/**
 * The concurrency tests' child process: opens `vector` (sync) on the shared dir, says "ready",
 * waits for "go", then saves `count` exchanges (loading in between, as the agent does), reporting
 * each; "done" after close, "error" on any exception. Run from the repo root on the built library
 * (a third of the CPU of the sources through tsx; the file is in vitest.config.ts's DIST_TESTS, so
 * dist/ is the build of the sources).
 */
const WRITER = `
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { HashedEmbedder, MeteredModel, OfflineModel } from './dist/harness/models/index.js';
import { TokenCounter } from './dist/harness/core/tokens.js';
import { vector } from './dist/strategies/vector.js';
const { dir, writer, count } = JSON.parse(process.env.VECTOR_WRITER);
const fact = ${fact.toString()};
const tokens = new TokenCounter('gpt-4o');
const context = { dir, tokens, model: new MeteredModel(new OfflineModel(), tokens), embedder: new HashedEmbedder(1024), durability: 'sync', seed: 7, now: () => new Date() };
const strategy = vector.create(context, vector.options.parse({ exactBelow: 16, persistEvery: 8 }));
const fail = (error) => process.send({ kind: 'error', message: String(error?.stack ?? error) }, () => process.exit(1));
await strategy.open().catch(fail);
process.send({ kind: 'ready' });
process.once('message', async () => {
  try {
    for (let step = 0; step < count; step++) {
      await strategy.save({ message: new HumanMessage(fact(writer, step)), turn: step + 1 });
      await strategy.load({ query: fact(writer, step), turn: step + 1 });
      await strategy.save({ message: new AIMessage('Noted ' + writer + '.' + step + '.'), turn: step + 1 });
      process.send({ kind: 'saved', step });
    }
    await strategy.close();
    process.send({ kind: 'done', rowsRead: strategy.rowsRead }, () => process.exit(0));
  } catch (error) {
    fail(error);
  }
});
`;
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

interface Writer {
  child: ChildProcess;
  /** Steps whose exchange the writer saved (both messages acknowledged). */
  saved: number[];
  ready: Promise<void>;
  /** Resolves with the rows the writer read on its hot path; rejects on an error or an early exit. */
  done: Promise<number>;
}

function startWriter(storeDir: string, writer: number, count: number): Writer {
  const child = spawn(process.execPath, ['--input-type=module', '--eval', WRITER], {
    cwd: ROOT,
    env: { ...process.env, VECTOR_WRITER: JSON.stringify({ dir: storeDir, writer, count }) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const saved: number[] = [];
  const ready = new Promise<void>((resolve) =>
    child.on('message', (message: { kind: string }) => message.kind === 'ready' && resolve()),
  );
  const done = new Promise<number>((resolve, reject) => {
    child.on('message', (message: { kind: string; step?: number; rowsRead?: number; message?: string }) => {
      if (message.kind === 'saved') saved.push(message.step!);
      if (message.kind === 'done') resolve(message.rowsRead!);
      if (message.kind === 'error') reject(new Error(`writer ${writer}: ${message.message}`));
    });
    child.on('exit', (code, signal) =>
      reject(new Error(`writer ${writer} exited early (code ${code}, signal ${signal})`)),
    );
  });
  done.catch(() => undefined);
  return { child, saved, ready, done };
}

/** How often each fact's locker appears in the stored exchanges, read straight from SQLite. */
function storedCounts(storeDir: string): {
  exchanges: number;
  pending: number;
  count: (writer: number, step: number) => number;
} {
  const db = new Database(path.join(storeDir, 'vector.sqlite'), { readonly: true });
  const texts = db.prepare('SELECT text FROM exchanges').pluck().all() as string[];
  const pending = (db.prepare('SELECT count(*) FROM pending').pluck().get() as number) ?? 0;
  db.close();
  return {
    exchanges: texts.length,
    pending,
    count: (writer, step) => texts.filter((one) => one.includes(`locker w${writer}n${step} `)).length,
  };
}

describe('vector with concurrent writers', () => {
  it('four processes saving 25 exchanges each into one dir at once lose none', { timeout: 60_000 }, async () => {
    const writers = [0, 1, 2, 3].map((writer) => startWriter(dir, writer, 25));
    await Promise.all(writers.map((writer) => writer.ready));
    for (const { child } of writers) child.send('go');
    const rowsRead = await Promise.all(writers.map((writer) => writer.done));
    if (process.env.DEBUG_VECTOR) console.log('ROWS', rowsRead);
    // Each writer read each other writer's row about once, plus one max(id) check per turn: no scans.
    for (const rows of rowsRead) expect(rows).toBeLessThan(25 + 2 * 100);

    const reader = await open({ recentExchanges: 0, k: 3 });
    // Each writer's last exchange was in progress when it closed: the reader adopted those and embedded all but the last.
    expect(embedder.texts).toBe(3);
    const snapshot = (await reader.snapshot!()).join('\n');
    for (const writer of [0, 1, 2, 3])
      for (let step = 0; step < 25; step++) expect(snapshot).toContain(fact(writer, step));
    for (const writer of [0, 1, 2, 3]) {
      for (const step of [(writer * 7) % 25, 24]) {
        const query = `Which code opens locker w${writer}n${step}?`;
        expect(text((await reader.load({ query, turn: 26 })).messages)).toContain(`code ${1000 + 37 * writer + step}`);
      }
    }
    await reader.save({ message: new HumanMessage('That is all for today.'), turn: 26 });
    await reader.close();
    const stored = storedCounts(dir);
    expect(stored.exchanges).toBe(100);
    for (const writer of [0, 1, 2, 3]) for (let step = 0; step < 25; step++) expect(stored.count(writer, step)).toBe(1);
    expect(stored.pending).toBe(1);
  });

  it('writers killed mid-run leave a store that reopens, their exchanges embedded exactly once', {
    timeout: 60_000,
  }, async () => {
    const survivor = startWriter(dir, 0, 80);
    const victims = [1, 2, 3].map((writer) => startWriter(dir, writer, 1000));
    await Promise.all([survivor, ...victims].map((writer) => writer.ready));
    for (const { child } of [survivor, ...victims]) child.send('go');
    // Each victim is killed at a different moment, while the others keep writing.
    const killed = await Promise.all(
      victims.map(async (victim, index) => {
        const killAfter = [4, 9, 15][index]!;
        await new Promise<void>((resolve) =>
          victim.child.on(
            'message',
            (message: { kind: string; step?: number }) =>
              message.kind === 'saved' && message.step === killAfter && resolve(),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, index * 3));
        const exited = new Promise((resolve) => victim.child.once('exit', resolve));
        victim.child.kill('SIGKILL');
        await exited;
        return { writer: index + 1, saved: [...victim.saved] };
      }),
    );
    // Opened while the survivor may still be writing: adopts what the dead writers left, not the survivor's rows.
    const reader = await open({ recentExchanges: 0, k: 3 });
    await survivor.done;
    const snapshot = (await reader.snapshot!()).join('\n');
    for (const { writer, saved } of killed) for (const step of saved) expect(snapshot).toContain(fact(writer, step));
    await reader.save({ message: new HumanMessage('That is all for today.'), turn: 90 });
    for (const { writer, saved } of killed) {
      const step = saved.at(-1)!;
      expect(
        text((await reader.load({ query: `Which code opens locker w${writer}n${step}?`, turn: 90 })).messages),
      ).toContain(`code ${1000 + 37 * writer + step}`);
    }
    await reader.close();
    embedder.texts = 0;
    const last = await open();
    // At most the survivor's last exchange (in progress at its close) was left to embed: by `last` if the survivor outlived `reader`'s open.
    expect(embedder.texts).toBeLessThanOrEqual(1);
    await last.save({ message: new HumanMessage('Goodbye.'), turn: 91 });
    await last.close();
    const stored = storedCounts(dir);
    for (let step = 0; step < 80; step++) expect(stored.count(0, step)).toBe(1);
    for (const { writer, saved } of killed) {
      for (const step of saved) expect(stored.count(writer, step)).toBe(1);
      // Beyond the acknowledged steps: at most the ones in flight, and never twice.
      for (let step = saved.length; step < saved.length + 5; step++)
        expect(stored.count(writer, step)).toBeLessThanOrEqual(1);
    }
    expect(stored.pending).toBe(1);
  });

  it('reads only the rows other writers added since its last look (O(1) per turn)', async () => {
    const first = (await open({ exactBelow: 16, persistEvery: 8 })) as MemoryStrategy & { rowsRead: number };
    const second = await open({ exactBelow: 16, persistEvery: 8 });
    const perTurn: number[] = [];
    for (let turn = 1; turn <= 100; turn++) {
      await exchange(second, turn, `Second says: shelf s${turn} holds ${turn * 3} jars.`, 'OK.');
      const before = first.rowsRead;
      await exchange(first, turn, `First says: drawer d${turn} holds ${turn * 5} pens.`, 'OK.');
      await first.load({ query: `How many jars are on shelf s${turn}?`, turn });
      perTurn.push(first.rowsRead - before);
    }
    expect(Math.max(...perTurn)).toBeLessThanOrEqual(4);
    const { messages } = await first.load({ query: 'How many jars are on shelf s42?', turn: 101 });
    expect(memoryOf(messages)).toContain('126 jars');

    const alone = (await open({}, 'sync')) as MemoryStrategy & { rowsRead: number };
    await second.close();
    await first.close();
    const before = alone.rowsRead;
    for (let turn = 1; turn <= 20; turn++) {
      await exchange(alone, turn, `Alone: box b${turn}.`, 'OK.');
      await alone.load({ query: `box b${turn}`, turn });
    }
    expect(alone.rowsRead - before).toBeLessThanOrEqual(20 + 3); // the max(id) check, and the first turns' catch-up
  });
});

describe('VectorIndex', () => {
  const randomVectors = (count: number, dimensions: number, seed: number): Float32Array[] => {
    let state = seed;
    const next = (): number => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
    return Array.from({ length: count }, () => Float32Array.from({ length: dimensions }, next));
  };

  it('agrees between exact and HNSW search on a small set', () => {
    const vectors = randomVectors(300, 32, 1);
    const index = new VectorIndex({ dimensions: 32, exactBelow: 1000, efSearch: 64, seed: 7 });
    vectors.forEach((vector, label) => index.add(vector, label));
    for (const query of randomVectors(20, 32, 2)) {
      const exact = index.searchExact(query, 5);
      const approx = index.searchHnsw(query, 5);
      expect(approx.map((hit) => hit.label)).toEqual(exact.map((hit) => hit.label));
      approx.forEach((hit, i) => expect(hit.similarity).toBeCloseTo(exact[i]!.similarity, 5));
    }
    expect(index.searchHnsw(vectors[10]!, 3, 10).every((hit) => hit.label < 10)).toBe(true);
  });

  it('makes its HNSW graph only when it needs one (initIndex costs the same at any capacity): none when opened, restored from its file or from no vectors', () => {
    const file = path.join(dir, 'lazy.hnsw');
    const vectors = randomVectors(5, 8, 9);
    const writer = new VectorIndex({ dimensions: 8, exactBelow: 0, efSearch: 64, seed: 7 });
    vectors.forEach((vector, label) => writer.add(vector, label));
    writer.save(file);
    const before = hnswStats.initialized;
    const fresh = new VectorIndex({ dimensions: 8, exactBelow: 0, efSearch: 64, seed: 7 });
    const restored = new VectorIndex({ dimensions: 8, exactBelow: 0, efSearch: 64, seed: 7 });
    restored.restore(file, [0, 1, 2, 3, 4], () => []);
    new VectorIndex({ dimensions: 8, exactBelow: 0, efSearch: 64, seed: 7 }).restore(undefined, [], () => []);
    expect(hnswStats.initialized).toBe(before);
    expect(restored.search(vectors[3]!, 1)[0]).toMatchObject({ label: 3 });
    fresh.add(vectors[0]!, 0);
    expect(hnswStats.initialized).toBe(before + 1);
    expect(fresh.search(vectors[0]!, 1)[0]).toMatchObject({ label: 0 });
  });

  it('switches to HNSW at exactBelow and grows past its initial capacity', () => {
    const index = new VectorIndex({ dimensions: 8, exactBelow: 100, efSearch: 64, seed: 7 });
    const vectors = randomVectors(1500, 8, 3);
    vectors.slice(0, 99).forEach((vector, label) => index.add(vector, label));
    expect(index.exact).toBe(true);
    vectors.slice(99).forEach((vector, i) => index.add(vector, 99 + i));
    expect(index.exact).toBe(false);
    expect(index.search(vectors[1400]!, 1)[0]).toMatchObject({ label: 1400 });
  });

  it('restores from its file plus only the stored vectors it lacks (holes too), and clears stale temp files', async () => {
    const file = path.join(dir, 'index.hnsw');
    const vectors = randomVectors(40, 16, 4);
    const entries = (labels: number[]): [number, Float32Array][] => labels.map((label) => [label, vectors[label]!]);
    const all = vectors.map((_, label) => label);
    // Another writer's labels 10-14 were never seen by the process that wrote the file.
    const index = new VectorIndex({ dimensions: 16, exactBelow: 0, efSearch: 64, seed: 7 });
    for (const label of all.filter((label) => label < 30 && (label < 10 || label >= 15)))
      index.add(vectors[label]!, label);
    index.save(file);
    await writeFile(path.join(dir, '.index.hnsw.999999999.abcd.tmp'), 'torn'); // no such pid: a crash's leftover
    await writeFile(path.join(dir, `.index.hnsw.${process.pid}.abcd.tmp`), 'being written'); // a live writer's
    const restored = new VectorIndex({ dimensions: 16, exactBelow: 0, efSearch: 64, seed: 7 });
    const asked: number[] = [];
    expect(restored.restore(file, all, (labels) => (asked.push(...labels), entries(labels)))).toBe(15);
    expect(asked).toEqual([10, 11, 12, 13, 14, ...all.slice(30)]);
    expect(restored.size).toBe(40);
    for (const label of [12, 35]) expect(restored.search(vectors[label]!, 1)[0]).toMatchObject({ label });
    expect((await readdir(dir)).sort()).toEqual([`.index.hnsw.${process.pid}.abcd.tmp`, 'index.hnsw']);
    // Labels above the caller's listing were stored and indexed by another process since: kept, not re-added.
    const ahead = new VectorIndex({ dimensions: 16, exactBelow: 0, efSearch: 64, seed: 7 });
    expect(ahead.restore(file, all.slice(0, 25), entries)).toBe(5);
    expect(ahead.size).toBe(30);
    // A file holding a label the store lacks (never written by us, but possible by hand) is rebuilt from the store.
    const rebuilt = new VectorIndex({ dimensions: 16, exactBelow: 100, efSearch: 64, seed: 7 });
    expect(
      rebuilt.restore(
        file,
        all.filter((label) => label < 10 || label >= 30),
        entries,
      ),
    ).toBe(20);
    expect(rebuilt.exact).toBe(true);
    expect(rebuilt.searchExact(vectors[3]!, 1)[0]).toMatchObject({ label: 3 });
  });

  it('an exact index restored from its file, then added to, ranks as the index that wrote the file (restored vectors read back on the first search)', () => {
    const file = path.join(dir, 'exact.hnsw');
    const vectors = randomVectors(60, 16, 5);
    const writer = new VectorIndex({ dimensions: 16, exactBelow: 1000, efSearch: 64, seed: 7 });
    vectors.slice(0, 50).forEach((vector, label) => writer.add(vector, label));
    writer.save(file);
    const restored = new VectorIndex({ dimensions: 16, exactBelow: 1000, efSearch: 64, seed: 7 });
    restored.restore(
      file,
      vectors.slice(0, 50).map((_, label) => label),
      () => [],
    );
    for (const index of [writer, restored]) vectors.slice(50).forEach((vector, i) => index.add(vector, 50 + i));
    expect(restored.exact).toBe(true);
    for (const query of randomVectors(10, 16, 6)) {
      const hits = restored.searchExact(query, 60);
      expect(hits).toHaveLength(60);
      expect(hits.map((hit) => hit.label)).toEqual(writer.searchExact(query, 60).map((hit) => hit.label));
      hits.forEach((hit, i) => expect(hit.similarity).toBeCloseTo(writer.searchExact(query, 60)[i]!.similarity, 5));
    }
  });

  it('takes sparse labels in any order and skips labels at or above the limit', () => {
    const vectors = randomVectors(60, 16, 5);
    for (const exactBelow of [1000, 0]) {
      const index = new VectorIndex({ dimensions: 16, exactBelow, efSearch: 64, seed: 7 });
      vectors.forEach((vector, i) => index.add(vector, i % 2 === 0 ? 1000 - i : 5 * i + 3));
      expect(() => index.add(vectors[0]!, 1000)).toThrow('already in the index');
      const limit = 200;
      const hits = index.search(vectors[1]!, 60, limit);
      expect(hits[0]).toMatchObject({ label: 8 });
      expect(hits.every((hit) => hit.label < limit)).toBe(true);
      expect(hits).toHaveLength(vectors.filter((_, i) => i % 2 === 1 && 5 * i + 3 < limit).length);
    }
  });
});
