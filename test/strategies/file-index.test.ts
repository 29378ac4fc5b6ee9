import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MembenchError } from '../../harness/core/errors.js';
import { durableBatch } from '../../harness/core/durable-batch.js';
import { extractMemories } from '../../harness/models/offline-memories.js';
import type { ChatModel, ChatRequest } from '../../harness/models/types.js';
import { extractMemoriesPrompt } from '../../harness/core/prompts.js';
import {
  auditScopeDir,
  INDEX_FILE,
  MEMORIES_DIR,
  parseMemoryFile,
  type MemoryScope,
} from '../../strategies/stores/memory-format.js';
import { fileIndex, type FileIndexStrategy } from '../../strategies/file-index.js';
import type { DurabilityMode, StrategyContext } from '../../strategies/types.js';
import { exchange, makeHarness, type Harness } from './conformance.js';

const text = (messages: readonly BaseMessage[]): string =>
  messages.map((message) => String(message.content)).join('\n');

describe('file-index', () => {
  let harness: Harness;
  let strategy: FileIndexStrategy;
  const open = async (
    durability?: DurabilityMode,
    options: Record<string, unknown> = {},
  ): Promise<FileIndexStrategy> => {
    const created = fileIndex.create(
      harness.context(durability),
      fileIndex.options.parse(options),
    ) as FileIndexStrategy;
    await created.open();
    return created;
  };
  const memoryFile = (scope: string, name: string): Promise<string> =>
    readFile(path.join(harness.dir, scope, MEMORIES_DIR, `${name}.md`), 'utf8');
  const agree = async (): Promise<void> => {
    for (const scope of ['global', 'project'] as MemoryScope[]) {
      const audit = await auditScopeDir(path.join(harness.dir, scope), scope, new Date('2026-01-01T00:00:00Z'));
      expect(audit.indexed).toEqual(audit.files);
      expect(audit.agrees).toBe(true);
    }
  };

  beforeEach(async () => {
    harness = await makeHarness(fileIndex);
    strategy = await open();
  });
  afterEach(async () => {
    await strategy.close().catch(() => undefined);
    await rm(harness.dir, { recursive: true, force: true });
  });

  it('writes a memory file with front matter and an index line; an update bumps the version and keeps unspecified fields', async () => {
    const ack = await strategy.remember({
      name: 'home-city',
      content: 'I live in Shanghai. Ship parcels there.',
      type: 'user',
      priority: 'high',
    });
    expect(ack).toEqual({ name: 'home-city', scope: 'global', version: 1 });
    const first = parseMemoryFile(await memoryFile('global', 'home-city'), 'home-city', 'global');
    expect(first).toMatchObject({
      type: 'user',
      scope: 'global',
      priority: 'high',
      description: 'I live in Shanghai.',
      version: 1,
      updated: '2026-01-01T00:00:00.000Z',
    });
    expect(await readFile(path.join(harness.dir, 'global', INDEX_FILE), 'utf8')).toContain(
      '- [home-city](memories/home-city.md) — I live in Shanghai.',
    );
    await agree();

    expect(await strategy.remember({ name: 'home-city', content: 'I moved to Hangzhou.' })).toEqual({
      name: 'home-city',
      scope: 'global',
      version: 2,
    });
    expect(parseMemoryFile(await memoryFile('global', 'home-city'), 'home-city', 'global')).toMatchObject({
      priority: 'high',
      version: 2,
      body: 'I moved to Hangzhou.',
    });
    await agree();

    await strategy.remember({ name: 'repo-layout', content: 'Tests live under test/.', type: 'project' });
    expect(parseMemoryFile(await memoryFile('project', 'repo-layout'), 'repo-layout', 'project').scope).toBe('project');
    await agree();
  });

  it('forgets by name or by content and rebuilds the index', async () => {
    await strategy.remember({ name: 'seat', content: 'I prefer the window seat.' });
    await strategy.remember({ content: 'My locker code is 9931.' });
    await strategy.remember({ content: 'I am allergic to peanuts.' });
    expect(await strategy.forget('seat')).toBe(true);
    expect(await strategy.forget('My locker code is 9931.')).toBe(true);
    expect(await strategy.forget('peanuts')).toBe(true);
    expect(await strategy.forget('nothing like this')).toBe(false);
    expect(await strategy.forget('../../etc/passwd')).toBe(false);
    expect(await readdir(path.join(harness.dir, 'global', MEMORIES_DIR))).toEqual([]);
    await agree();
  });

  it('leaves expired memories out of the index and of load', async () => {
    await strategy.remember({
      name: 'old-offer',
      content: 'The discount code SPRING24 is valid.',
      expires: '2025-06-01',
      priority: 'high',
    });
    await strategy.remember({
      name: 'new-offer',
      content: 'The discount code WINTER26 is valid.',
      expires: '2026-06-01',
      priority: 'high',
    });
    const context = text((await strategy.load({ query: 'discount code?', turn: 1 })).messages);
    expect(context).toContain('WINTER26');
    expect(context).not.toContain('SPRING24');
    expect(await strategy.recallMemory('old-offer')).toBeUndefined();
    await agree();
  });

  it('refuses unsafe names, oversized content and long descriptions with a message, writing nothing', async () => {
    const refused = async (work: Promise<unknown>, message: RegExp): Promise<void> => {
      const error = await work.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(MembenchError);
      expect((error as MembenchError).code).toBe('INVALID_ARGUMENT');
      expect((error as Error).message).toMatch(message);
    };
    await refused(strategy.remember({ name: '../x', content: 'escape' }), /would escape the memory directory/u);
    await refused(strategy.remember({ name: '/tmp/x', content: 'escape' }), /absolute paths/u);
    await refused(strategy.remember({ name: 'a\0b', content: 'nul' }), /NUL byte/u);
    await refused(strategy.remember({ name: 'MEMORY', content: 'index' }), /reserved for the index/u);
    await refused(strategy.remember({ name: 'aux', content: 'device' }), /reserved device name/u);
    await refused(strategy.remember({ name: 'big', content: 'x'.repeat(4097) }), /4097 bytes; the limit is 4096/u);
    await refused(
      strategy.remember({ name: 'long', content: 'ok', description: 'd'.repeat(151) }),
      /description is 151 characters; the limit is 150/u,
    );
    await refused(strategy.recallMemory('../secret'), /would escape the memory directory/u);
    expect(await readdir(path.join(harness.dir, 'global', MEMORIES_DIR))).toEqual([]);
    await agree();
  });

  it('stores Chinese names and content, and derives a stable name for unnamed Chinese memories', async () => {
    await strategy.remember({ name: '家乡', content: '我住在上海，寄东西请寄到上海的地址。', priority: 'high' });
    const ack = await strategy.remember({ content: '我对花生过敏，做菜不要放花生。' });
    expect(ack.name).toMatch(/^我对花生过敏-做菜不要放花生-[0-9a-f]{8}$/u);
    expect((await strategy.remember({ content: '我对花生过敏，做菜不要放花生。' })).version).toBe(2);
    expect(await memoryFile('global', '家乡')).toContain('description: 我住在上海，寄东西请寄到上海的地址。');
    await agree();
    const context = text((await strategy.load({ query: '我对什么过敏？', turn: 1 })).messages);
    expect(context).toContain('我住在上海');
    expect(context).toContain('做菜不要放花生');
  });

  it('loads high-priority memories in full, index lines for the rest, and the recallTopK best matches', async () => {
    await strategy.remember({ name: 'allergy', content: 'I am allergic to peanuts.', priority: 'high' });
    await strategy.remember({ name: 'pot', content: 'I cook in a cast-iron pot that holds 5 liters.' });
    await strategy.remember({ name: 'guests', content: 'Usually four people eat dinner with me.', type: 'project' });
    await strategy.remember({
      name: 'music',
      content: 'I listen to jazz while cooking. Mostly Coltrane.',
      priority: 'low',
    });
    const before = strategy.recalls;
    const context = text((await strategy.load({ query: 'How big is my cast-iron pot?', turn: 1 })).messages);
    expect(context).toContain('I am allergic to peanuts.');
    expect(context).toContain('- [guests](memories/guests.md) — Usually four people eat dinner with me.');
    expect(context).toContain('- [music](memories/music.md)');
    expect(context).toContain('holds 5 liters');
    expect(context).not.toContain('Mostly Coltrane');
    expect(strategy.recalls - before).toBeGreaterThanOrEqual(1);
    expect(await strategy.recallMemory('music')).toBe('I listen to jazz while cooking. Mostly Coltrane.');
    expect(await strategy.recallMemory('nobody')).toBeUndefined();
  });

  it('does not re-read memory files on every load (one stat per scope instead)', async () => {
    for (let i = 0; i < 40; i++)
      await strategy.remember({ name: `fact-${i}`, content: `Fact number ${i} is ${i * 7}.` });
    await strategy.load({ query: 'fact 3?', turn: 1 });
    const reads = strategy.store!.stats.fileReads;
    for (let turn = 2; turn <= 30; turn++) {
      await exchange(strategy, turn, `question ${turn}`, `answer ${turn}`);
      await strategy.load({ query: `fact ${turn}?`, turn });
    }
    expect(strategy.store!.stats.fileReads).toBe(reads);
  });

  it('keeps the last exchange plus the current user message, without orphan tool results', async () => {
    await exchange(strategy, 1, 'first question', 'first answer');
    await strategy.save({ message: new HumanMessage('place the order'), turn: 2 });
    await strategy.save({
      message: new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'order', args: {}, type: 'tool_call' }] }),
      turn: 2,
    });
    await strategy.save({ message: new ToolMessage({ content: 'placed', tool_call_id: 'c1' }), turn: 2 });
    await strategy.save({ message: new AIMessage('Done.'), turn: 2 });
    await strategy.save({ message: new HumanMessage('thanks'), turn: 3 });
    const { messages } = await strategy.load({ query: 'thanks', turn: 3 });
    expect(messages.map((message) => String(message.content))).toEqual([
      'place the order',
      '',
      'placed',
      'Done.',
      'thanks',
    ]);
    const probe = await strategy.load({ query: 'what did I order?', turn: 4 });
    expect(probe.messages.at(-1)!.content).toBe('thanks');
  });

  it('restores memories and recent messages after close and reopen', async () => {
    await strategy.remember({ name: 'home-city', content: 'I live in Hangzhou.', priority: 'high' });
    await exchange(strategy, 1, 'My dog is Bao.', 'Cute!');
    await strategy.close();
    strategy = await open();
    const context = text((await strategy.load({ query: 'where do I live?', turn: 2 })).messages);
    expect(context).toContain('Hangzhou');
    expect(context).toContain('My dog is Bao.');
    expect((await strategy.remember({ name: 'home-city', content: 'I live in Suzhou.' })).version).toBe(2);
  });

  it('durability exit writes memories only on close; none never touches the disk', async () => {
    await strategy.close();
    strategy = await open('exit');
    await strategy.remember({ name: 'exit-memory', content: 'Written on close.' });
    expect(await strategy.recallMemory('exit-memory')).toBe('Written on close.');
    expect(await readdir(path.join(harness.dir, 'global', MEMORIES_DIR))).toEqual([]);
    await strategy.close();
    expect(parseMemoryFile(await memoryFile('global', 'exit-memory'), 'exit-memory', 'global').version).toBe(1);
    await agree();

    strategy = await open('exit');
    expect(await strategy.forget('exit-memory')).toBe(true);
    expect(await readdir(path.join(harness.dir, 'global', MEMORIES_DIR))).toEqual(['exit-memory.md']);
    await strategy.close();
    expect(await readdir(path.join(harness.dir, 'global', MEMORIES_DIR))).toEqual([]);

    const none = await open('none');
    await none.remember({ name: 'ephemeral', content: 'Never written.' });
    expect(text((await none.load({ query: 'ephemeral', turn: 1 })).messages)).toContain('Never written.');
    await none.close();
    expect(await readdir(path.join(harness.dir, 'global', MEMORIES_DIR))).toEqual([]);
  });

  it('crash point mid_memory_write: the file is written, the index not; verify() sees it and reopening repairs it', async () => {
    await strategy.remember({ name: 'before', content: 'Written before the crash.' });
    await strategy.close();
    const points: string[] = [];
    const crashing = fileIndex.create(
      {
        ...harness.context(),
        checkpoint: (point) => {
          points.push(point);
          throw new Error(`crash at ${point}`);
        },
      },
      fileIndex.options.parse({}),
    ) as FileIndexStrategy;
    await crashing.open();
    await expect(crashing.remember({ name: 'during', content: 'Written during the crash.' })).rejects.toThrow(
      'crash at mid_memory_write',
    );
    expect(points).toEqual(['mid_memory_write']);
    expect(await crashing.verify()).toEqual({
      torn: 0,
      indexMismatches: 1,
      details: ['global/MEMORY.md: during: file missing from the index'],
    });
    await crashing.close();

    strategy = await open();
    expect(await strategy.verify()).toEqual({ torn: 0, indexMismatches: 0, details: [] });
    expect((await strategy.snapshot()).join('\n')).toContain('during: Written during the crash.');
    await writeFile(path.join(harness.dir, 'global', MEMORIES_DIR, 'broken.md'), '---\nname: [unclosed');
    expect((await strategy.verify()).torn).toBe(1);
  });

  it('a memory file deleted behind its back is reported missing, in unreadable() and verify(), not quietly dropped', async () => {
    await strategy.remember({ name: 'locker', content: 'My locker code is 9931.' });
    await strategy.remember({ name: 'seat', content: 'I prefer the window seat.' });
    await strategy.close();
    await rm(path.join(harness.dir, 'global', MEMORIES_DIR, 'locker.md'));
    strategy = await open();
    const lost =
      'global/memories/locker.md: missing: MEMORY.md lists this memory but its file is gone (deleted outside membench?): the memory is lost';
    expect(strategy.unreadable()).toEqual([lost]);
    expect(await strategy.verify()).toEqual({ torn: 0, indexMismatches: 1, details: [lost] });
    expect(await readFile(path.join(harness.dir, 'global', INDEX_FILE), 'utf8')).not.toContain('locker');
    // forget() removes a file the store's way: nothing is missing.
    expect(await strategy.forget('seat')).toBe(true);
    await strategy.close();
    strategy = await open();
    expect(strategy.unreadable()).toEqual([]);
  });

  it('a file deleted while the strategy is open, then written around, is reported missing on the next open', async () => {
    await strategy.remember({ name: 'locker', content: 'My locker code is 9931.' });
    await rm(path.join(harness.dir, 'global', MEMORIES_DIR, 'locker.md'));
    await strategy.remember({ name: 'seat', content: 'I prefer the window seat.' });
    await strategy.close();
    strategy = await open();
    expect(strategy.unreadable()).toEqual([
      'global/memories/locker.md: missing: MEMORY.md lists this memory but its file is gone (deleted outside membench?): the memory is lost',
    ]);
    expect((await strategy.snapshot()).join('\n')).toContain('seat: I prefer the window seat.');
  });

  it('honours custom scope dirs', async () => {
    await strategy.close();
    strategy = await open('sync', { globalDir: 'user-memory', projectDir: 'repo-memory' });
    await strategy.remember({ name: 'x', content: 'Global fact.' });
    await strategy.remember({ name: 'y', content: 'Project fact.', scope: 'project' });
    expect((await stat(path.join(harness.dir, 'user-memory', MEMORIES_DIR, 'x.md'))).isFile()).toBe(true);
    expect((await stat(path.join(harness.dir, 'repo-memory', MEMORIES_DIR, 'y.md'))).isFile()).toBe(true);
  });
});

describe('file-index automatic memory', () => {
  let harness: Harness;
  let strategy: FileIndexStrategy;
  let requests: ChatRequest[];
  let reply: ((request: ChatRequest) => string) | undefined;
  const open = async (
    durability?: DurabilityMode,
    options: Record<string, unknown> = {},
    extra: Partial<StrategyContext> = {},
  ): Promise<FileIndexStrategy> => {
    const base = harness.context(durability);
    // Counts every model call; answers with the offline model unless a test scripts the reply.
    const model: ChatModel = {
      id: 'counting',
      offline: true,
      chat: async (request) => {
        requests.push(request);
        return reply ? { text: reply(request), cached: false } : base.model.chat(request);
      },
    };
    const created = fileIndex.create(
      { ...base, model, ...extra },
      fileIndex.options.parse(options),
    ) as FileIndexStrategy;
    await created.open();
    return created;
  };
  const memory = async (scope: MemoryScope, name: string) =>
    parseMemoryFile(await readFile(path.join(harness.dir, scope, MEMORIES_DIR, `${name}.md`), 'utf8'), name, scope);
  const names = async (scope: MemoryScope = 'global'): Promise<string[]> =>
    (await readdir(path.join(harness.dir, scope, MEMORIES_DIR)).catch(() => [] as string[]))
      .filter((file) => file.endsWith('.md'))
      .map((file) => file.slice(0, -3))
      .sort();
  const contextFor = async (query: string): Promise<string> =>
    text((await strategy.load({ query, turn: 99 })).messages);
  const filler = async (from: number, count: number): Promise<void> => {
    for (let turn = from; turn < from + count; turn++)
      await exchange(strategy, turn, `How long should step ${turn} take?`, `About ${turn} minutes.`);
  };
  const agree = async (): Promise<void> => {
    for (const scope of ['global', 'project'] as MemoryScope[])
      expect((await auditScopeDir(path.join(harness.dir, scope), scope, new Date('2026-01-01T00:00:00Z'))).agrees).toBe(
        true,
      );
  };

  beforeEach(async () => {
    harness = await makeHarness(fileIndex);
    requests = [];
    reply = undefined;
    strategy = await open();
  });
  afterEach(async () => {
    await strategy.close().catch(() => undefined);
    await rm(harness.dir, { recursive: true, force: true });
  });

  it('writes the facts of an English and Chinese conversation as memory files, indexed, and recalls them later', async () => {
    await exchange(
      strategy,
      1,
      "Hi! I'd love to make red-braised pork. Can you teach me?",
      'Happily! How many people are eating?',
    );
    await exchange(
      strategy,
      2,
      "We're a family of four. Oh, and my son is allergic to peanuts, so I have to be careful.",
      'Got it, no peanut oil then.',
    );
    await exchange(strategy, 3, '我家只有一口铸铁锅，可以用它来炖吗？', '可以，铸铁锅很合适。');
    await exchange(strategy, 4, '对了，我住在杭州。', '好的。');
    await exchange(strategy, 5, 'Thanks, that is helpful.', 'You are welcome.');
    expect(requests.map((request) => request.task)).toEqual(Array(5).fill('extract-memories'));
    expect(await names()).toEqual(['allergy', 'headcount', '住址', '铸铁锅']);
    expect(await memory('global', 'allergy')).toMatchObject({
      type: 'user',
      priority: 'normal',
      version: 1,
      body: 'Oh, and my son is allergic to peanuts, so I have to be careful.',
    });
    expect(await memory('global', '铸铁锅')).toMatchObject({
      version: 1,
      body: '我家只有一口铸铁锅',
      description: '我家只有一口铸铁锅',
    });
    expect(await readFile(path.join(harness.dir, 'global', INDEX_FILE), 'utf8')).toContain(
      '- [住址](memories/住址.md) — 对了，我住在杭州。',
    );
    await agree();
    expect(strategy.autoMemories).toBe(4);

    await filler(6, 5);
    const allergy = await contextFor('What is my son allergic to?');
    expect(allergy).toContain('peanuts');
    expect(allergy).not.toContain('family of four. Oh'); // one memory per topic, not the whole message
    expect(await contextFor('我住在哪里？')).toContain('杭州');
    expect(await contextFor('我家用的是什么锅？')).toContain('铸铁锅');
  });

  it('updates the same memory on a correction: the version increments and the old value leaves the context', async () => {
    await exchange(strategy, 1, "I'm off to Lisbon next week. My flight is on Tuesday.", 'Nice, a Tuesday flight.');
    await exchange(strategy, 2, '我住在上海。', '好的。');
    await filler(3, 3);
    await exchange(
      strategy,
      6,
      'Change of plans, the airline moved my flight to Thursday.',
      'Got it, your flight is now on Thursday.',
    );
    await exchange(strategy, 7, '跟你说一下，我搬到杭州了。', '恭喜！');
    await filler(8, 3);
    expect(await memory('global', 'flight')).toMatchObject({
      version: 2,
      body: 'Change of plans, the airline moved my flight to Thursday.',
    });
    expect(await memory('global', '住址')).toMatchObject({ version: 2, body: '跟你说一下，我搬到杭州了。' });
    expect(await names()).toEqual(['flight', 'off-lisbon-next', '住址']);
    const flight = await contextFor('Which day is my flight now?');
    expect(flight).toContain('Thursday');
    expect(flight).not.toContain('Tuesday');
    const city = await contextFor('我现在住在哪个城市？');
    expect(city).toContain('杭州');
    expect(city).not.toContain('上海');

    // A correction with only a pronoun is tied to the memory the reply names.
    await exchange(
      strategy,
      11,
      "Sorry, the airline changed it again. It's back to Tuesday.",
      'No problem, your flight is on Tuesday again.',
    );
    await filler(12, 2);
    expect(await memory('global', 'flight')).toMatchObject({
      version: 3,
      body: "Sorry, the airline changed it again. It's back to Tuesday.",
    });
    expect(await contextFor('Which day is my flight?')).not.toContain('Thursday');
    await agree();
  });

  it('adds to a memory (rather than replacing it) when a new statement is no correction', async () => {
    await exchange(strategy, 1, 'The only pot I have is a cast-iron Dutch oven.', 'Ideal for braising.');
    await exchange(
      strategy,
      2,
      'But I only have the one pot. Can I cook both dishes at once?',
      'Cook them one after the other.',
    );
    expect(await memory('global', 'pot')).toMatchObject({
      version: 2,
      body: 'The only pot I have is a cast-iron Dutch oven. But I only have the one pot.',
    });
    await exchange(strategy, 3, 'I only have the one pot.', 'Understood.');
    expect((await memory('global', 'pot')).version).toBe(2); // nothing new: no write
  });

  it("writes its cursor once at a replay batch's end, and a cursor left behind makes the reopen extract every exchange after it", async () => {
    const cursor = path.join(harness.dir, 'auto-memory.json');
    const through = async (): Promise<number> => JSON.parse(await readFile(cursor, 'utf8')).through;
    await exchange(strategy, 1, 'Thanks, that is helpful.', 'You are welcome.');
    const before = await through();
    await durableBatch(async () => {
      await exchange(strategy, 2, 'My son is allergic to peanuts.', 'Noted, no peanuts.');
      await exchange(strategy, 3, 'I live in Hangzhou.', 'Lovely city.');
      expect(await through()).toBe(before); // held while the batch runs
    });
    expect(await through()).toBe(6); // six messages extracted, written at the batch's end
    expect(await names()).toEqual(['allergy', 'home-city']);
    // As if a crash inside a batch had kept the cursor at the first exchange, and nothing after it was extracted.
    await strategy.close();
    await writeFile(cursor, `${JSON.stringify({ through: before })}\n`);
    await rm(path.join(harness.dir, 'global'), { recursive: true, force: true });
    requests = [];
    strategy = await open();
    expect(requests.map((request) => request.task)).toEqual(['extract-memories', 'extract-memories']);
    expect(await names()).toEqual(['allergy', 'home-city']);
    expect(await through()).toBe(6);
  });

  it('autoMemory=false keeps the old behaviour: no model call, no memory file, no cursor', async () => {
    await strategy.close();
    strategy = await open('sync', { autoMemory: 'false' });
    await exchange(strategy, 1, 'My son is allergic to peanuts.', 'Noted.');
    await filler(2, 3);
    expect(requests).toEqual([]);
    expect(await names()).toEqual([]);
    expect(await readdir(harness.dir)).not.toContain('auto-memory.json');
    expect(await contextFor('What is my son allergic to?')).not.toContain('peanuts');
  });

  it('keeps per-exchange cost flat: one extraction call per exchange, file reads only for the memories written', async () => {
    for (let i = 0; i < 40; i++)
      await strategy.remember({ name: `fact-${i}`, content: `Fact number ${i} is ${i * 7}.` });
    await strategy.load({ query: 'fact 3?', turn: 1 });
    const reads = strategy.store!.stats.fileReads;
    const before = strategy.autoMemories;
    requests.length = 0;
    for (let turn = 1; turn <= 30; turn++) {
      const fact = turn % 3 === 0 ? `My locker number is ${turn}.` : `What is fact ${turn}?`;
      await exchange(strategy, turn, fact, 'OK.');
      await strategy.load({ query: `fact ${turn}?`, turn });
    }
    expect(requests).toHaveLength(30);
    expect(requests.every((request) => request.task === 'extract-memories')).toBe(true);
    const written = strategy.autoMemories - before;
    expect(written).toBe(10);
    // An update of a memory this store wrote last takes its version from the cache: no file is read.
    expect(strategy.store!.stats.fileReads - reads).toBe(0);
    expect((await memory('global', 'locker-number')).body).toBe('My locker number is 30.');
  });

  it('extracts an exchange whose extraction a crash interrupted when it reopens, and nothing on a clean reopen', async () => {
    await strategy.close();
    const crashing = await open(
      'sync',
      {},
      {
        checkpoint: (point) => {
          throw new Error(`crash at ${point}`);
        },
      },
    );
    await crashing.save({ message: new HumanMessage('My cat is called Mochi and my dog is called Bao.'), turn: 1 });
    await expect(crashing.save({ message: new AIMessage('Cute names!'), turn: 1 })).rejects.toThrow(
      'crash at mid_memory_write',
    );
    await crashing.close();

    strategy = await open();
    expect(await names()).toEqual(['cat']);
    expect((await memory('global', 'cat')).body).toBe('My cat is called Mochi and my dog is called Bao.');
    expect(await strategy.verify()).toEqual({ torn: 0, indexMismatches: 0, details: [] });
    await strategy.close();
    const calls = requests.length;
    strategy = await open();
    expect(requests.length).toBe(calls);
    expect((await memory('global', 'cat')).version).toBe(1);
  });

  it('durability exit writes automatic memories on close', async () => {
    await strategy.close();
    strategy = await open('exit');
    await exchange(strategy, 1, 'My favourite colour is green.', 'Green it is.');
    expect(await names()).toEqual([]);
    expect(await strategy.recallMemory('favourite-colour')).toBe('My favourite colour is green.');
    await strategy.close();
    expect(await names()).toEqual(['favourite-colour']);
    await agree();
  });

  it('writes what a live model proposes safely: unsafe names slugified, refusals skipped, the rest kept', async () => {
    reply = () =>
      JSON.stringify([
        { name: '../../etc/passwd', description: 'escape', content: 'Tried to escape.', type: 'user' },
        { name: 'huge', content: 'x'.repeat(5000) },
        { name: 'Seat Preference', description: 'Window seat', content: 'Prefers the window seat.', type: 'feedback' },
      ]);
    await exchange(strategy, 1, 'I prefer the window seat.', 'Noted.');
    expect(await names()).toEqual(['etc-passwd', 'seat-preference']);
    expect(await memory('global', 'seat-preference')).toMatchObject({ type: 'feedback', description: 'Window seat' });
    reply = () => 'I could not find anything.';
    await exchange(strategy, 2, 'OK.', 'OK.');
    expect(await names()).toEqual(['etc-passwd', 'seat-preference']);
    await agree();
  });

  it('shows the model the index lines and the bodies it cannot see in them', async () => {
    await strategy.remember({ name: 'pot', content: 'I cook in a cast-iron pot. It holds 5 liters.' });
    await exchange(strategy, 1, 'My pot is enamelled too.', 'Nice.');
    const prompt = String(requests[0]!.messages.at(-1)!.content);
    expect(prompt).toContain('- [pot](memories/pot.md) — I cook in a cast-iron pot.');
    expect(prompt).toContain('### pot\nI cook in a cast-iron pot. It holds 5 liters.');
    expect(prompt).toContain('My pot is enamelled too.');
    expect((await memory('global', 'pot')).body).toBe(
      'I cook in a cast-iron pot. It holds 5 liters. My pot is enamelled too.',
    );
  });

  it('keeps the index within indexTokens as memories grow, in the context and the extraction prompt; recall_memory reaches the rest', async () => {
    let second = 0;
    strategy = await open('none', { indexTokens: 400 }, { now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, second++)) });
    const tokensAt: { context: number; extraction: number }[] = [];
    let written = 0;
    for (const count of [10, 60, 240]) {
      for (; written < count; written++)
        await strategy.remember({
          name: `locker-${written}`,
          content: `Locker ${written} holds the spare key number ${1000 + written}.`,
        });
      const { messages } = await strategy.load({ query: 'Which locker has the spare key?', turn: 1 });
      requests.length = 0;
      await exchange(strategy, 1, 'Thanks, that helps.', 'Glad to help.');
      const extraction = requests.find((request) => request.task === 'extract-memories')!;
      tokensAt.push({
        context: harness.tokens.countMessages(messages),
        extraction: harness.tokens.countMessages(extraction.messages),
      });
      if (count === 10) expect(text(messages)).not.toContain('more memories not listed');
    }
    // Once the budget binds, more memories add nothing to either: flat in tokens.
    const [, at60, at240] = tokensAt as [
      unknown,
      { context: number; extraction: number },
      { context: number; extraction: number },
    ];
    expect(Math.abs(at240.context - at60.context)).toBeLessThanOrEqual(10);
    expect(Math.abs(at240.extraction - at60.extraction)).toBeLessThanOrEqual(10);
    const context = await contextFor('Where is the spare key number 1003?');
    expect(context).toMatch(/\(\d+ more memories not listed: call recall_memory/u);
    expect(context).toContain('- [locker-239]'); // the latest memories keep their lines...
    expect(context).not.toContain('- [locker-3]'); // ...the oldest are left out...
    expect(context).toContain('Locker 3 holds the spare key number 1003.'); // ...and recall_memory brings them back
    expect(await strategy.recallMemory('locker-3')).toBe('Locker 3 holds the spare key number 1003.');
  });
});

describe('offline extract-memories', () => {
  const run = (user: string, reply = 'OK.', indexLines: string[] = []) =>
    extractMemories(
      String(extractMemoriesPrompt({ indexLines, related: [], userMessages: [user], reply }).at(-1)!.content),
    );

  it('keeps first-person facts and skips questions, requests and acknowledgements', () => {
    expect(run('What should I pack for three days of meetings?')).toEqual([]);
    expect(run('Please also cancel the taxi I booked for Tuesday.')).toEqual([]);
    expect(run('Thanks, that is really helpful.')).toEqual([]);
    expect(run('帮我把要买的材料加到购物清单里吧。')).toEqual([]);
    expect(run('你好，我想学做红烧肉，教我做吧！')).toEqual([]);
    expect(run('The weather is nice today.')).toEqual([]);
    expect(run('By the way, I always take my coffee with oat milk.')).toEqual([
      {
        name: 'coffee',
        description: 'By the way, I always take my coffee with oat milk.',
        content: 'By the way, I always take my coffee with oat milk.',
        type: 'user',
      },
    ]);
    expect(
      run('这周六我爸妈也过来吃饭，一共六个人，两道菜都做来得及吗？').map((memory) => [memory.name, memory.content]),
    ).toEqual([['人数', '这周六我爸妈也过来吃饭，一共六个人']]);
  });

  it('is deterministic and maps a topic to the same name across wordings', () => {
    const first = run('My flight is on Tuesday.');
    expect(run('My flight is on Tuesday.')).toEqual(first);
    expect(first[0]!.name).toBe('flight');
    expect(run('The airline moved my flight to Thursday.')[0]!.name).toBe('flight');
    expect(run('我住在上海。')[0]!.name).toBe('住址');
    expect(run('我又搬回上海了。')[0]!.name).toBe('住址');
    // An existing memory covering the topic keeps its name, in either language.
    expect(
      run('我下个月搬到杭州了。', '恭喜！', ['- [home-city](memories/home-city.md) — 我住在上海。'])[0]!.name,
    ).toBe('home-city');
    expect(run('I moved to Hangzhou.', 'OK.', ['- [住址](memories/住址.md) — 我住在上海。'])[0]!.name).toBe('住址');
  });

  it('ties a pronoun-only correction to an existing memory the reply names, and to nothing else', () => {
    const index = ['- [flight](memories/flight.md) — My flight is on Thursday.'];
    expect(
      run("It's back to Tuesday.", 'Your flight is on Tuesday again.', index).map((memory) => memory.name),
    ).toEqual(['flight']);
    expect(run("It's back to Tuesday.", 'Your flight is on Tuesday again.')).toEqual([]);
    expect(run("It's back to Tuesday.", 'OK.', index)).toEqual([]);
  });
});
