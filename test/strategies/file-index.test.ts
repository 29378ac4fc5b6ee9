import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MembenchError } from '../../harness/errors.js';
import { auditScopeDir, INDEX_FILE, MEMORIES_DIR, parseMemoryFile, type MemoryScope } from '../../harness/memory-format.js';
import { fileIndex, type FileIndexStrategy } from '../../strategies/file-index.js';
import type { DurabilityMode } from '../../strategies/types.js';
import { describeConformance, exchange, makeHarness, type Harness } from './conformance.js';

describeConformance(fileIndex);

const text = (messages: readonly BaseMessage[]): string => messages.map((message) => String(message.content)).join('\n');

describe('file-index', () => {
  let harness: Harness;
  let strategy: FileIndexStrategy;
  const open = async (durability?: DurabilityMode, options: Record<string, unknown> = {}): Promise<FileIndexStrategy> => {
    const created = fileIndex.create(harness.context(durability), fileIndex.options.parse(options)) as FileIndexStrategy;
    await created.open();
    return created;
  };
  const memoryFile = (scope: string, name: string): Promise<string> => readFile(path.join(harness.dir, scope, MEMORIES_DIR, `${name}.md`), 'utf8');
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
    const ack = await strategy.remember({ name: 'home-city', content: 'I live in Shanghai. Ship parcels there.', type: 'user', priority: 'high' });
    expect(ack).toEqual({ name: 'home-city', scope: 'global', version: 1 });
    const first = parseMemoryFile(await memoryFile('global', 'home-city'), 'home-city', 'global');
    expect(first).toMatchObject({ type: 'user', scope: 'global', priority: 'high', description: 'I live in Shanghai.', version: 1, updated: '2026-01-01T00:00:00.000Z' });
    expect(await readFile(path.join(harness.dir, 'global', INDEX_FILE), 'utf8')).toContain('- [home-city](memories/home-city.md) — I live in Shanghai.');
    await agree();

    expect(await strategy.remember({ name: 'home-city', content: 'I moved to Hangzhou.' })).toEqual({ name: 'home-city', scope: 'global', version: 2 });
    expect(parseMemoryFile(await memoryFile('global', 'home-city'), 'home-city', 'global')).toMatchObject({ priority: 'high', version: 2, body: 'I moved to Hangzhou.' });
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
    await strategy.remember({ name: 'old-offer', content: 'The discount code SPRING24 is valid.', expires: '2025-06-01', priority: 'high' });
    await strategy.remember({ name: 'new-offer', content: 'The discount code WINTER26 is valid.', expires: '2026-06-01', priority: 'high' });
    const context = text((await strategy.load({ query: 'discount code?', turn: 1 })).messages);
    expect(context).toContain('WINTER26');
    expect(context).not.toContain('SPRING24');
    expect(await strategy.recallMemory('old-offer')).toBeUndefined();
    await agree();
  });

  it('refuses unsafe names, oversized content and long descriptions with a message, writing nothing', async () => {
    const refused = async (work: Promise<unknown>, message: RegExp): Promise<void> => {
      const error = await work.then(() => undefined, (caught: unknown) => caught);
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
    await refused(strategy.remember({ name: 'long', content: 'ok', description: 'd'.repeat(151) }), /description is 151 characters; the limit is 150/u);
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
    await strategy.remember({ name: 'music', content: 'I listen to jazz while cooking. Mostly Coltrane.', priority: 'low' });
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
    for (let i = 0; i < 40; i++) await strategy.remember({ name: `fact-${i}`, content: `Fact number ${i} is ${i * 7}.` });
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
    await strategy.save({ message: new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'order', args: {}, type: 'tool_call' }] }), turn: 2 });
    await strategy.save({ message: new ToolMessage({ content: 'placed', tool_call_id: 'c1' }), turn: 2 });
    await strategy.save({ message: new AIMessage('Done.'), turn: 2 });
    await strategy.save({ message: new HumanMessage('thanks'), turn: 3 });
    const { messages } = await strategy.load({ query: 'thanks', turn: 3 });
    expect(messages.map((message) => String(message.content))).toEqual(['place the order', '', 'placed', 'Done.', 'thanks']);
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
    await expect(crashing.remember({ name: 'during', content: 'Written during the crash.' })).rejects.toThrow('crash at mid_memory_write');
    expect(points).toEqual(['mid_memory_write']);
    expect(await crashing.verify()).toEqual({ torn: 0, indexMismatches: 1, details: ['global/MEMORY.md: during: file missing from the index'] });
    await crashing.close();

    strategy = await open();
    expect(await strategy.verify()).toEqual({ torn: 0, indexMismatches: 0, details: [] });
    expect((await strategy.snapshot()).join('\n')).toContain('during: Written during the crash.');
    await writeFile(path.join(harness.dir, 'global', MEMORIES_DIR, 'broken.md'), '---\nname: [unclosed');
    expect((await strategy.verify()).torn).toBe(1);
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
