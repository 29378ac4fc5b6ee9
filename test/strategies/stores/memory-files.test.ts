import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MembenchError } from '../../../harness/core/errors.js';
import { MemoryFileStore } from '../../../strategies/stores/memory-files.js';
import {
  auditScopeDir,
  deriveDescription,
  deriveMemoryName,
  INDEX_FILE,
  MAX_DESCRIPTION_CHARS,
  MEMORIES_DIR,
  normalizeMemoryName,
  parseIndex,
  parseExtractedMemories,
  parseMemoryFile,
  prepareMemory,
  renderMemoryFile,
  slugifyName,
  type MemoryDraft,
  type MemoryScope,
} from '../../../strategies/stores/memory-format.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const WRITER = fileURLToPath(new URL('./memory-files-writer.mjs', import.meta.url));
/** How long a writer process waits for another's lock: the tests' own limit, never a shorter one of the store's. */
const WRITER_LOCK_TIMEOUT_MS = 120_000;

/** Asserts that MEMORY.md lists exactly the live, parseable memory files of a scope dir, with their descriptions. */
async function expectIndexAgrees(scopeDir: string, scope: MemoryScope): Promise<Map<string, string>> {
  const audit = await auditScopeDir(scopeDir, scope, NOW);
  expect(audit.unreadable).toEqual([]);
  expect(audit.indexed).toEqual(audit.files);
  expect(audit.agrees).toBe(true);
  return audit.indexed;
}

const draft = (name: string, content: string, extra: Partial<MemoryDraft> = {}): MemoryDraft => ({
  name,
  content,
  type: 'user',
  scope: 'global',
  priority: 'normal',
  ...extra,
});

function refusal(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(MembenchError);
    expect((error as MembenchError).code).toBe('INVALID_ARGUMENT');
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('memory names', () => {
  it.each([
    ['../x', /"\.\." would escape the memory directory/u],
    ['a/../../etc', /would escape the memory directory/u],
    ['/etc/passwd', /absolute paths are not allowed/u],
    ['C:\\Windows', /absolute paths are not allowed/u],
    ['a/b', /path separators/u],
    ['a\\b', /path separators/u],
    ['bad\0name', /NUL byte/u],
    ['.', /"\." and "\.\." are reserved/u],
    ['..', /"\." and "\.\." are reserved/u],
    ['.hidden', /names starting with "\." are reserved/u],
    ['MEMORY', /reserved for the index/u],
    ['memory', /reserved for the index/u],
    ['CON', /reserved device name on Windows/u],
    ['con.txt', /reserved device name on Windows/u],
    ['nul', /reserved device name on Windows/u],
    ['COM1', /reserved device name on Windows/u],
    ['lpt9', /reserved device name on Windows/u],
    ['x'.repeat(101), /longer than 100 characters/u],
    ['记'.repeat(67), /longer than 200 bytes/u],
    ['', /empty/u],
    ['two words', /letters, digits/u],
    ['ends.', /letters, digits/u],
  ])('refuses %j with a message', (name, message) => {
    expect(refusal(() => normalizeMemoryName(name))).toMatch(message);
  });

  it('accepts and normalises safe names, Chinese included', () => {
    expect(normalizeMemoryName('Home-City')).toBe('home-city');
    expect(normalizeMemoryName('家乡')).toBe('家乡');
    expect(normalizeMemoryName('v1.2_notes')).toBe('v1.2_notes');
    expect(normalizeMemoryName('x'.repeat(100))).toHaveLength(100);
  });

  it('derives stable, safe names from content, CJK included', () => {
    const zh = deriveMemoryName('我对花生过敏，做菜不要放花生。');
    expect(zh).toMatch(/^我对花生过敏-做菜不要放花生-[0-9a-f]{8}$/u);
    expect(deriveMemoryName('我对花生过敏，做菜不要放花生。')).toBe(zh);
    expect(deriveMemoryName('我对花生过敏。')).not.toBe(zh);
    expect(deriveMemoryName('I prefer window seats on long flights.')).toMatch(
      /^i-prefer-window-seats-on-long-flights-[0-9a-f]{8}$/u,
    );
    expect(deriveMemoryName('!!! ???')).toMatch(/^memory-[0-9a-f]{8}$/u);
    for (const content of ['../../etc/passwd', 'CON', '.env', 'MEMORY', '红'.repeat(500), 'word '.repeat(200)]) {
      expect(() => normalizeMemoryName(deriveMemoryName(content))).not.toThrow();
    }
  });
});

describe('descriptions and budgets', () => {
  it('derives the description from the first sentence, cut at a word or character boundary', () => {
    expect(deriveDescription('I live in Shanghai. Ship everything there.')).toBe('I live in Shanghai.');
    const english = deriveDescription(`${'alpha beta gamma '.repeat(20)}end.`);
    expect(Array.from(english).length).toBeLessThanOrEqual(MAX_DESCRIPTION_CHARS);
    expect(english).toMatch(/(alpha|beta|gamma)…$/u);
    const chinese = deriveDescription('红烧肉'.repeat(80));
    expect(Array.from(chinese)).toHaveLength(MAX_DESCRIPTION_CHARS);
    expect(chinese.endsWith('…')).toBe(true);
  });

  it('refuses oversized content, long descriptions, empty content and bad expiry dates', () => {
    expect(refusal(() => prepareMemory(draft('big', 'x'.repeat(5000)), 0, NOW, 4096))).toMatch(
      /"big" refused: its content is 5000 bytes; the limit is 4096 \(maxMemoryBytes\)/u,
    );
    expect(refusal(() => prepareMemory(draft('big', '猪'.repeat(1400)), 0, NOW, 4096))).toMatch(/4200 bytes/u);
    expect(refusal(() => prepareMemory(draft('d', 'ok', { description: 'y'.repeat(151) }), 0, NOW, 4096))).toMatch(
      /description is 151 characters; the limit is 150/u,
    );
    expect(refusal(() => prepareMemory(draft('e', '   '), 0, NOW, 4096))).toMatch(/content is empty/u);
    expect(refusal(() => prepareMemory(draft('t', 'ok', { expires: 'next week' }), 0, NOW, 4096))).toMatch(
      /not an ISO date/u,
    );
    expect(prepareMemory(draft('d', 'ok', { description: 'y'.repeat(150) }), 0, NOW, 4096).description).toHaveLength(
      150,
    );
  });

  it('round-trips a memory file through YAML front matter', () => {
    const record = prepareMemory(
      draft('家乡', '我住在上海。\n\n---\n寄东西请寄到上海。', {
        priority: 'high',
        expires: '2027-01-01',
        description: 'Where: "home" # not a comment',
      }),
      2,
      NOW,
      4096,
    );
    const text = renderMemoryFile(record);
    expect(text.startsWith('---\nname: 家乡\ntype: user\nscope: global\npriority: high\nexpires: 2027-01-01\n')).toBe(
      true,
    );
    expect(parseMemoryFile(text, '家乡', 'global')).toEqual(record);
    expect(record.version).toBe(3);
    expect(() => parseMemoryFile(text.slice(0, 40), '家乡', 'global')).toThrow(/not closed/u);
    expect(() => parseMemoryFile('just text', 'x', 'global')).toThrow(/missing front matter/u);
  });
});

describe('MemoryFileStore', () => {
  let dir: string;
  let now: Date;
  const dirs = (): Record<MemoryScope, string> => ({
    global: path.join(dir, 'global'),
    project: path.join(dir, 'project'),
  });
  const makeStore = (options: { pruneExpired?: boolean; lockTimeoutMs?: number } = {}): MemoryFileStore =>
    new MemoryFileStore({ dirs: dirs(), maxMemoryBytes: 4096, now: () => now, ...options });

  /**
   * A writer process on `dir` (test/strategies/stores/memory-files-writer.mjs, on the built store). Its lock timeout is the
   * test's own: on a loaded machine another writer may hold the lock for seconds, which is no failure.
   */
  const startWriter = (writer: number, count: number, lockTimeoutMs = WRITER_LOCK_TIMEOUT_MS): ChildProcess => {
    const child = fork(WRITER, [dir, String(writer), String(count), String(lockTimeoutMs)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    started.push(child);
    return child;
  };
  const started: ChildProcess[] = [];
  /** Kills the writers still running. */
  const stopWriters = (writers: readonly ChildProcess[]): void => {
    for (const child of writers) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-memfiles-'));
    now = NOW;
  });
  afterEach(async () => {
    stopWriters(started.splice(0)); // also after a test that timed out, where its own finally never ran
    await rm(dir, { recursive: true, force: true });
  });

  it('writes a file with front matter and an index line, bumps the version, removes both', async () => {
    const store = makeStore();
    await store.open();
    await store.write(draft('home-city', 'I live in Shanghai. Ship there.', { priority: 'high' }));
    const file = await readFile(path.join(dir, 'global', MEMORIES_DIR, 'home-city.md'), 'utf8');
    expect(file).toContain(
      'name: home-city\ntype: user\nscope: global\npriority: high\ndescription: I live in Shanghai.\nversion: 1\nupdated: 2026-01-01T00:00:00.000Z\n---\n\nI live in Shanghai. Ship there.\n',
    );
    expect(await readFile(path.join(dir, 'global', INDEX_FILE), 'utf8')).toContain(
      '- [home-city](memories/home-city.md) — I live in Shanghai.',
    );
    const updated = await store.write(draft('home-city', 'I moved to Hangzhou.'));
    expect(updated.version).toBe(2);
    await expectIndexAgrees(dirs().global, 'global');
    expect(await store.remove('global', 'home-city')).toBe(true);
    expect(await store.remove('global', 'home-city')).toBe(false);
    expect((await expectIndexAgrees(dirs().global, 'global')).size).toBe(0);
  });

  it('groups the index by type with high priority first, and leaves expired memories out', async () => {
    const store = makeStore();
    await store.open();
    await store.write(draft('z-ref', 'A reference.', { type: 'reference' }));
    await store.write(draft('b-low', 'Low.', { priority: 'low' }));
    await store.write(draft('c-high', 'High.', { priority: 'high' }));
    await store.write(draft('old', 'Expired.', { expires: '2025-12-31' }));
    const index = await readFile(path.join(dir, 'global', INDEX_FILE), 'utf8');
    expect([...parseIndex(index).keys()]).toEqual(['c-high', 'b-low', 'z-ref']);
    expect(index).toMatch(/## user\n- \[c-high\][^\n]*\n- \[b-low\][^\n]*\n\n## reference\n- \[z-ref\]/u);
    await expectIndexAgrees(dirs().global, 'global');
    expect(await readdir(path.join(dir, 'global', MEMORIES_DIR))).toContain('old.md');

    const pruning = makeStore({ pruneExpired: true });
    await pruning.open();
    await pruning.write(draft('fresh', 'New.'));
    expect(await readdir(path.join(dir, 'global', MEMORIES_DIR))).not.toContain('old.md');
  });

  it('refuses to write through a symlinked memory file or memories dir', async () => {
    const store = makeStore();
    await store.open();
    const outside = path.join(dir, 'outside.txt');
    await writeFile(outside, 'secret');
    await symlink(outside, path.join(dir, 'global', MEMORIES_DIR, 'evil.md'));
    await expect(store.write(draft('evil', 'overwrite?'))).rejects.toThrow(
      /"evil" refused: .*evil\.md is a symbolic link/u,
    );
    expect(await readFile(outside, 'utf8')).toBe('secret');

    const elsewhere = path.join(dir, 'elsewhere');
    await mkdir(elsewhere);
    await rm(path.join(dir, 'project', MEMORIES_DIR), { recursive: true });
    await symlink(elsewhere, path.join(dir, 'project', MEMORIES_DIR));
    await expect(store.write(draft('x', 'y', { scope: 'project' }))).rejects.toThrow(
      /memory directory .*memories is a symbolic link or not a directory/u,
    );
    expect(await readdir(elsewhere)).toEqual([]);
  });

  it('ignores symlinked memory files when reading, and never writes through a symlinked MEMORY.md', async () => {
    const store = makeStore();
    await store.open();
    const outside = path.join(dir, 'outside.md');
    await writeFile(outside, renderMemoryFile(prepareMemory(draft('planted', 'planted'), 0, NOW, 4096)));
    await symlink(outside, path.join(dir, 'global', MEMORIES_DIR, 'planted.md'));
    await rm(path.join(dir, 'global', INDEX_FILE));
    await symlink(outside, path.join(dir, 'global', INDEX_FILE));
    await store.write(draft('real', 'real'));
    expect(store.all().map((record) => record.name)).toEqual(['real']);
    expect([...store.problems.values()]).toContain('symbolic link ignored');
    expect(await readFile(outside, 'utf8')).toContain('name: planted');
    expect([...parseIndex(await readFile(path.join(dir, 'global', INDEX_FILE), 'utf8')).keys()]).toEqual(['real']);
  });

  it('re-reads nothing when the index did not change, and only changed files when it did', async () => {
    const writer = makeStore();
    await writer.open();
    for (let i = 0; i < 30; i++) await writer.write(draft(`fact-${i}`, `Fact ${i}.`));
    const reader = makeStore();
    await reader.open();
    expect(reader.all()).toHaveLength(30);
    const reads = reader.stats.fileReads;
    for (let i = 0; i < 20; i++) await reader.refresh();
    expect(reader.stats.fileReads).toBe(reads);
    await writer.write(draft('fact-3', 'Fact 3 was corrected.'));
    await reader.refresh();
    expect(reader.stats.fileReads).toBe(reads + 1);
    expect(reader.get('global', 'fact-3')?.body).toBe('Fact 3 was corrected.');
    await writer.remove('global', 'fact-4');
    await reader.refresh();
    expect(reader.get('global', 'fact-4')).toBeUndefined();
    expect(reader.stats.fileReads).toBe(reads + 1);
  });

  it('updates a memory it wrote last without reading its file, and re-reads one another store rewrote since', async () => {
    const a = makeStore();
    const b = makeStore();
    await a.open();
    await b.open();
    await a.write(draft('counter', 'One.'));
    const reads = a.stats.fileReads;
    await a.write(draft('counter', 'Two.'));
    expect((await a.write(draft('counter', 'Three.'))).version).toBe(3);
    expect(a.stats.fileReads).toBe(reads);
    expect((await b.write(draft('counter', 'Four.'))).version).toBe(4);
    expect((await a.write(draft('counter', 'Five.'))).version).toBe(5);
    expect(a.stats.fileReads).toBeGreaterThan(reads);
  });

  it('repairs an index left stale by a crash and drops leftover temp files on open', async () => {
    const store = makeStore();
    await store.open();
    await store.write(draft('kept', 'Kept.'));
    // A crash after the memory file's rename but before the index rebuild:
    await writeFile(
      path.join(dir, 'global', MEMORIES_DIR, 'orphan.md'),
      renderMemoryFile(prepareMemory(draft('orphan', 'Orphan.'), 0, NOW, 4096)),
    );
    // A crash between a temp file and its rename:
    await writeFile(path.join(dir, 'global', MEMORIES_DIR, '.kept.md.999.abcd.tmp'), '---\nname: ha');
    const reopened = makeStore();
    await reopened.open();
    expect([...(await expectIndexAgrees(dirs().global, 'global')).keys()].sort()).toEqual(['kept', 'orphan']);
    expect((await readdir(path.join(dir, 'global', MEMORIES_DIR))).sort()).toEqual(['kept.md', 'orphan.md']);
  });

  it('a live writer indexes what a writer killed mid-write left (its pending index says so), without reopening', async () => {
    const store = makeStore();
    await store.open();
    await store.write(draft('kept', 'Kept.'));
    const scanned = store.stats.syncs;
    await store.write(draft('second', 'Second.'));
    expect(store.stats.syncs).toBe(scanned); // nobody else wrote: no rescan
    // Another writer, killed between its memory file and its index: the file, and its staged index, are left.
    await writeFile(
      path.join(dir, 'global', MEMORIES_DIR, 'orphan.md'),
      renderMemoryFile(prepareMemory(draft('orphan', 'Orphan.'), 0, NOW, 4096)),
    );
    await writeFile(path.join(dir, 'global', '.MEMORY.md.pending'), 'half an index');
    await store.write(draft('third', 'Third.'));
    expect(store.stats.syncs).toBe(scanned + 1);
    expect([...(await expectIndexAgrees(dirs().global, 'global')).keys()].sort()).toEqual([
      'kept',
      'orphan',
      'second',
      'third',
    ]);
    expect(await readdir(path.join(dir, 'global'))).not.toContain('.MEMORY.md.pending');
  });

  it('recovers from a writer killed with SIGKILL mid-write: its lock free at once, index repaired, nothing torn', async () => {
    const writer = startWriter(9, 1000);
    try {
      await new Promise<void>((resolve) => writer.once('message', () => resolve()));
      // Killed while it keeps writing, a few steps in: most likely holding the lock, between a file and its index.
      const steps = new Promise<void>((resolve) =>
        writer.on('message', (message: { kind: string; step?: number }) => message.step === 3 && resolve()),
      );
      writer.send('go');
      await steps;
      const exited = new Promise((resolve) => writer.once('exit', resolve));
      writer.kill('SIGKILL');
      await exited;
    } finally {
      stopWriters([writer]);
    }

    // A lock that waited for the dead writer would fail within 1 ms: the kernel released it with the process.
    const reopened = makeStore({ lockTimeoutMs: 1 });
    await reopened.open();
    const indexed = await expectIndexAgrees(path.join(dir, 'project'), 'project');
    expect(indexed.size).toBeGreaterThan(1);
    expect((await readdir(path.join(dir, 'project', MEMORIES_DIR))).filter((name) => name.startsWith('.'))).toEqual([]);
    expect((await reopened.write(draft('after-crash', 'Still writable.', { scope: 'project' }))).version).toBe(1);
  });

  it(
    'loses no update when 4 processes write 25 memories each (and bump one shared memory 100 times)',
    async () => {
      const writers = [0, 1, 2, 3].map((writer) => startWriter(writer, 25));
      try {
        const message = (child: (typeof writers)[number], kind: string): Promise<void> =>
          new Promise((resolve, reject) => {
            child.on('message', (received: { kind: string }) => received.kind === kind && resolve());
            child.on('exit', (code, signal) =>
              reject(new Error(`writer exited early (code ${code}, signal ${signal})`)),
            );
          });
        await Promise.all(writers.map((child) => message(child, 'ready')));
        const done = writers.map((child) => message(child, 'done'));
        for (const child of writers) child.send('go');
        await Promise.all(done);
      } finally {
        stopWriters(writers); // a writer that failed or timed out must not keep writing after the test
      }

      const memoriesDir = path.join(dir, 'project', MEMORIES_DIR);
      const files = (await readdir(memoriesDir)).filter((name) => !name.startsWith('.'));
      expect(files).toHaveLength(101);
      for (const file of files)
        parseMemoryFile(await readFile(path.join(memoriesDir, file), 'utf8'), file.slice(0, -3), 'project'); // none torn
      const indexed = await expectIndexAgrees(path.join(dir, 'project'), 'project');
      for (let writer = 0; writer < 4; writer++)
        for (let step = 0; step < 25; step++) expect(indexed.has(`w${writer}-m${step}`)).toBe(true);
      const shared = parseMemoryFile(
        await readFile(path.join(memoriesDir, 'shared-counter.md'), 'utf8'),
        'shared-counter',
        'project',
      );
      expect(shared.version).toBe(100);

      const reopened = makeStore();
      await reopened.open();
      expect(reopened.all()).toHaveLength(101);
    },
    WRITER_LOCK_TIMEOUT_MS + 60_000,
  );
});

describe('memories proposed by a model (extract-memories)', () => {
  it('slugifies free text into safe names, Chinese included, and refuses what cannot be one', () => {
    expect(slugifyName('Home city')).toBe('home-city');
    expect(slugifyName('  Favourite colour! ')).toBe('favourite-colour');
    expect(slugifyName('住址')).toBe('住址');
    expect(slugifyName('../../etc/passwd')).toBe('etc-passwd');
    expect(slugifyName('...')).toBeUndefined();
    expect(slugifyName('MEMORY')).toBeUndefined();
    expect(slugifyName('aux')).toBeUndefined();
  });

  it('reads a JSON array wrapped in prose or a fence and makes every field safe', () => {
    const text = [
      'Here you go:\n```json',
      JSON.stringify([
        { name: 'Flight', description: 'Flight day', content: 'My flight is on Thursday.', type: 'user' },
        { name: '../../etc/passwd', content: 'escape attempt', type: 'nonsense' },
        { name: 'MEMORY', content: 'reserved name' },
        { name: 'long', description: 'd'.repeat(400), content: 'A long description is shortened.' },
        { name: 'big', content: 'x'.repeat(5000) },
        { name: 'empty', content: '   ' },
        'not an object',
        { name: '住址', content: '我住在杭州。', type: 'feedback' },
      ]),
      '```',
    ].join('\n');
    const memories = parseExtractedMemories(text, 4096);
    expect(memories.map((memory) => memory.name)).toEqual([
      'flight',
      'etc-passwd',
      expect.stringMatching(/^reserved-name-[0-9a-f]{8}$/u),
      'long',
      '住址',
    ]);
    expect(memories[0]).toEqual({
      name: 'flight',
      description: 'Flight day',
      content: 'My flight is on Thursday.',
      type: 'user',
    });
    expect(memories[1]!.type).toBe('user');
    expect(memories[3]!.description.length).toBeLessThanOrEqual(MAX_DESCRIPTION_CHARS);
    expect(memories[4]).toMatchObject({ type: 'feedback', description: '我住在杭州。' });
    for (const memory of memories) expect(() => normalizeMemoryName(memory.name)).not.toThrow();
  });

  it('returns nothing for [] or for output that is not a JSON array', () => {
    expect(parseExtractedMemories('[]', 4096)).toEqual([]);
    expect(parseExtractedMemories('Nothing worth keeping.', 4096)).toEqual([]);
    expect(parseExtractedMemories('[{"name": "x", "content": ', 4096)).toEqual([]);
    expect(parseExtractedMemories('{"name": "x", "content": "y"}', 4096)).toEqual([]);
  });
});
