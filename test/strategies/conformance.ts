/**
 * The conformance suite every strategy passes (built-ins, and later user and LangChain ones).
 * Call `describeConformance(definition)` from a test file; a skipped check states its reason.
 */
import { readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HashedEmbedder, MeteredModel, OfflineModel, type Embedder } from '../../harness/models/index.js';
import { TokenCounter } from '../../harness/core/tokens.js';
import { tempDir } from '../helpers/temp-dir.js';
import type { DurabilityMode, MemoryStrategy, StrategyContext, StrategyDefinition } from '../../strategies/types.js';

export interface ConformanceOptions {
  /** Options passed to the factory (defaults filled in by the strategy's schema). */
  options?: Record<string, unknown>;
  /** Whether the strategy returns the raw recent messages (so the latest user message must appear verbatim). */
  keepsRecentMessages?: boolean;
}

export interface Harness {
  dir: string;
  tokens: TokenCounter;
  context(durability?: DurabilityMode): StrategyContext;
  create(durability?: DurabilityMode): MemoryStrategy;
}

export async function makeHarness(
  definition: StrategyDefinition,
  options: Record<string, unknown> = {},
): Promise<Harness> {
  const dir = await tempDir(`membench-conf-${definition.name}-`); // removed after the test file
  const tokens = new TokenCounter('gpt-4o');
  const model = new MeteredModel(new OfflineModel(), tokens);
  const embedder = new HashedEmbedder(64);
  const fixedNow = new Date('2026-01-01T00:00:00Z');
  const context = (durability: DurabilityMode = definition.defaultDurability): StrategyContext => ({
    dir,
    tokens,
    model,
    embedder,
    durability,
    seed: 7,
    now: () => fixedNow,
  });
  const parsed = definition.options.parse(options) as Record<string, unknown>;
  return { dir, tokens, context, create: (durability) => definition.create(context(durability), parsed) };
}

/**
 * A fresh dir per test and an opener of `definition` on it (any options and mode); everything
 * opened is closed and the dir removed after each test. Call at the top of a test file.
 */
export function strategyScratch(
  definition: StrategyDefinition,
  embedder: () => Embedder = () => new HashedEmbedder(64),
) {
  const state = { dir: '', opened: [] as MemoryStrategy[] };
  beforeEach(async () => {
    state.dir = await mkdtemp(path.join(os.tmpdir(), `membench-${definition.name}-`));
    state.opened = [];
  });
  afterEach(async () => {
    for (const strategy of state.opened) await strategy.close().catch(() => undefined);
    await rm(state.dir, { recursive: true, force: true });
  });
  return {
    get dir(): string {
      return state.dir;
    },
    async open(options: Record<string, unknown> = {}, durability: DurabilityMode = 'sync'): Promise<MemoryStrategy> {
      const tokens = new TokenCounter('gpt-4o');
      const context = {
        dir: state.dir,
        tokens,
        model: new MeteredModel(new OfflineModel(), tokens),
        embedder: embedder(),
        durability,
        seed: 7,
        now: () => new Date('2026-01-01T00:00:00Z'),
      };
      const strategy = definition.create(context, definition.options.parse(options));
      state.opened.push(strategy);
      await strategy.open();
      return strategy;
    },
  };
}

const text = (messages: readonly BaseMessage[]): string =>
  messages.map((message) => String(message.content)).join('\n');

/** Saves one exchange the way the agent loop does: user message, then reply. */
export async function exchange(strategy: MemoryStrategy, turn: number, user: string, reply: string): Promise<void> {
  await strategy.save({ message: new HumanMessage(user), turn });
  await strategy.save({ message: new AIMessage(reply), turn });
}

export function describeConformance(definition: StrategyDefinition, conformance: ConformanceOptions = {}): void {
  describe(`conformance: ${definition.name}`, () => {
    let harness: Harness;
    let strategy: MemoryStrategy;

    beforeEach(async () => {
      harness = await makeHarness(definition, conformance.options);
      strategy = harness.create();
      await strategy.open();
    });
    afterEach(async () => {
      await strategy.close().catch(() => undefined);
      await rm(harness.dir, { recursive: true, force: true });
    });

    it('loads an empty context before anything is saved', async () => {
      const { messages } = await strategy.load({ query: 'anything?', turn: 1 });
      expect(messages).toEqual([]);
    });

    it('returns LangChain messages and includes the latest user message', async () => {
      await exchange(strategy, 1, 'My cat is called Mochi.', 'Nice name!');
      await strategy.save({ message: new HumanMessage('What is my cat called?'), turn: 2 });
      const { messages } = await strategy.load({ query: 'What is my cat called?', turn: 2 });
      for (const message of messages) expect(typeof message.getType()).toBe('string');
      if (conformance.keepsRecentMessages !== false) expect(text(messages)).toContain('What is my cat called?');
    });

    it('never starts the context on a tool result and never separates a tool call from its result', async () => {
      for (let turn = 1; turn <= 6; turn++) {
        await strategy.save({ message: new HumanMessage(`order number ${turn}`), turn });
        const callId = `call_${turn}`;
        await strategy.save({
          message: new AIMessage({
            content: '',
            tool_calls: [{ id: callId, name: 'place_order', args: { n: turn }, type: 'tool_call' }],
          }),
          turn,
        });
        await strategy.save({
          message: new ToolMessage({ content: `order ${turn} placed`, tool_call_id: callId, name: 'place_order' }),
          turn,
        });
        await strategy.save({ message: new AIMessage(`Order ${turn} is placed.`), turn });
      }
      const { messages } = await strategy.load({ query: 'which orders?', turn: 7 });
      if (messages.length > 0) expect(messages[0]!.getType()).not.toBe('tool');
      const calls = new Set<string>();
      for (const message of messages) {
        if (message instanceof AIMessage) for (const call of message.tool_calls ?? []) calls.add(call.id!);
        if (message instanceof ToolMessage) expect(calls.has(message.tool_call_id)).toBe(true);
      }
    });

    it('keeps Chinese text intact', async () => {
      await exchange(strategy, 1, '我想做红烧肉，我对花生过敏。', '好的，红烧肉需要五花肉。');
      await strategy.save({ message: new HumanMessage('我对什么过敏？'), turn: 2 });
      const { messages } = await strategy.load({ query: '我对什么过敏？', turn: 2 });
      expect(text(messages)).toContain('花生');
    });

    it('does not let a caller mutate its stored context through a returned array', async () => {
      await exchange(strategy, 1, 'Remember the code 4711.', 'Noted.');
      const first = await strategy.load({ query: 'code?', turn: 2 });
      first.messages.length = 0;
      const second = await strategy.load({ query: 'code?', turn: 2 });
      expect(second.messages.length).toBeGreaterThan(0);
    });

    it('does not re-tokenise the history on every load (cost per turn is flat)', async () => {
      for (let turn = 1; turn <= 50; turn++)
        await exchange(strategy, turn, `fact number ${turn} is ${turn * 7}`, `ok ${turn}`);
      await strategy.load({ query: 'fact 3?', turn: 51 });
      const before = harness.tokens.encodeCalls;
      for (let turn = 51; turn <= 60; turn++) {
        await exchange(strategy, turn, `fact number ${turn} is ${turn * 7}`, `ok ${turn}`);
        await strategy.load({ query: 'fact 3?', turn });
      }
      // Each new message may be tokenised a few times (role, content, model calls); never the whole history.
      expect(harness.tokens.encodeCalls - before).toBeLessThan(10 * 12);
    });

    it('restores its state after close and reopen on the same dir', async (context) => {
      const probe = new HumanMessage('Where does Lin live?');
      const fresh = harness.create();
      await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
      await strategy.flush?.();
      await strategy.close();
      strategy = fresh;
      await strategy.open();
      if (!fresh.capabilities.persistent) {
        context.skip('strategy declares capabilities.persistent = false');
        return;
      }
      await strategy.save({ message: probe, turn: 2 });
      const { messages } = await strategy.load({ query: String(probe.content), turn: 2 });
      expect(text(messages)).toContain('Hangzhou');
    });

    it.for([
      [
        'emptied to 0 bytes',
        (file: string) => truncateSync(file, 0),
        /: the store file is empty \(0 bytes\): it was truncated or emptied/u,
      ],
      [
        'overwritten with garbage',
        (file: string) => writeFileSync(file, 'not a database '.repeat(400)),
        /: the SQLite store is damaged \(file is not a database\)/u,
      ],
    ] as const)(
      'refuses a store file %s on reopen, naming the file, instead of opening it empty',
      async ([, damage, message], context) => {
        await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
        await strategy.flush?.();
        await strategy.close();
        const stores = readdirSync(harness.dir, { recursive: true })
          .map(String)
          .filter((name) => name.endsWith('.sqlite'));
        if (!strategy.capabilities.persistent || stores.length === 0) {
          context.skip(
            "strategy persists no SQLite store that membench opens (a peer library's own .db files are that library's to open)",
          );
          return;
        }
        for (const name of stores) {
          damage(path.join(harness.dir, name));
          for (const suffix of ['-wal', '-shm']) rmSync(path.join(harness.dir, `${name}${suffix}`), { force: true });
        }
        strategy = harness.create();
        const error = await strategy.open().then(
          () => undefined,
          (caught: unknown) => caught as Error,
        );
        expect(error?.message).toMatch(message);
        // The message starts with the damaged file and ends with what to do about it.
        expect(stores.some((name) => error!.message.startsWith(`${path.join(harness.dir, name)}: `))).toBe(true);
        expect(error!.message).toMatch(
          /restore it from a backup, or delete it to start with an empty store \(what it held is lost\)$/u,
        );
      },
    );

    it('loses unpersisted state on reopen in durability mode none', async (context) => {
      if (definition.durabilityModes && !definition.durabilityModes.includes('none')) {
        context.skip(`strategy offers durability ${definition.durabilityModes.join(', ')} only`);
        return;
      }
      if (!strategy.capabilities.persistent) {
        // It keeps nothing across a reopen in any mode: mode none has nothing more to lose.
        context.skip('strategy declares capabilities.persistent = false');
        return;
      }
      await strategy.close();
      strategy = harness.create('none');
      await strategy.open();
      await exchange(strategy, 1, 'The locker code is 9931.', 'OK.');
      await strategy.save({ message: new HumanMessage('What is the locker code?'), turn: 2 });
      // Held while the process lives...
      expect(text((await strategy.load({ query: 'What is the locker code?', turn: 2 })).messages)).toContain('9931');
      await strategy.close();
      strategy = harness.create('none');
      await strategy.open();
      // ...and gone after a reopen, without a file left behind to hold it.
      const { messages } = await strategy.load({ query: 'What is the locker code?', turn: 2 });
      expect(text(messages)).not.toContain('9931');
    });

    it('remembers, forgets, and keeps both across a reopen (strategies with explicit memory)', async (context) => {
      if (!strategy.remember || !strategy.forget) {
        context.skip('strategy has no remember/forget (the agent loop records them as messages)');
        return;
      }
      expect(strategy.capabilities.explicitMemory).toBe(true);
      const ack = await strategy.remember({ content: 'The garage code is 4711.' });
      expect(ack.name.length).toBeGreaterThan(0);
      await strategy.remember({ content: 'The bike lock code is 2208.' });
      const loaded = async () => text((await strategy.load({ query: 'What is the garage code?', turn: 2 })).messages);
      expect(await loaded()).toContain('4711');
      if (strategy.capabilities.volatileMemories) {
        // Forgotten in process, then the rest lost at a reopen, as declared: nothing of it is on disk.
        expect(await strategy.forget!(ack.name)).toBe(true);
        expect(await strategy.forget!(ack.name)).toBe(false);
        expect(await loaded()).not.toContain('4711');
        expect(await loaded()).toContain('2208');
        await strategy.close();
        strategy = harness.create();
        await strategy.open();
        expect(await loaded()).not.toContain('2208');
        context.skip(
          'strategy declares capabilities.volatileMemories: remembered items are checked in process and lost at a reopen',
        );
        return;
      }
      await strategy.close();
      strategy = harness.create();
      await strategy.open();
      expect(await loaded()).toContain('4711');
      expect(await strategy.forget!(ack.name)).toBe(true);
      expect(await strategy.forget!(ack.name)).toBe(false);
      expect(await loaded()).not.toContain('4711');
      await strategy.close();
      strategy = harness.create();
      await strategy.open();
      const after = await loaded();
      expect(after).not.toContain('4711');
      expect(after).toContain('2208');
    });

    it('shows after newSession() what a fresh instance shows after a reopen (where it offers one)', async (context) => {
      if (!strategy.newSession) {
        context.skip('strategy has no newSession(): every session boundary reopens it');
        return;
      }
      // Three sessions of a replay, told to one open instance and to instances reopened at each boundary.
      const other = await makeHarness(definition, conformance.options);
      try {
        let reopened = other.create();
        await reopened.open();
        const facts = ['I live in Hangzhou', 'my locker code is 9931', 'I adopted a cat named Tofu'];
        let declined = false;
        let turn = 0;
        for (const [session, fact] of facts.entries()) {
          if (session > 0) {
            if (!(await strategy.newSession!())) {
              // As the agent loop does when it declines: a close and a fresh instance.
              declined = true;
              await strategy.close();
              strategy = harness.create();
              await strategy.open();
            }
            await reopened.close();
            reopened = other.create();
            await reopened.open();
          }
          for (let i = 0; i < 8; i++) {
            turn++;
            const stepId = `s${turn}`;
            const user = `${i === 0 ? `By the way, ${fact}.` : `Small talk ${turn} about the weather and trains.`} Turn ${turn}.`;
            const reply = `Noted: ${user} I will keep that in mind for later, with some filler words ${turn}.`;
            for (const target of [strategy, reopened]) {
              await target.save({ message: new HumanMessage(user), turn, stepId, session });
              // Each session ends on a user message nobody answered, as replayed sessions may, and the next opens on its fact.
              if (i < 7) await target.save({ message: new AIMessage(reply), turn, stepId, session });
            }
          }
        }
        turn++;
        for (const query of ['Where do I live?', 'What is my locker code?', 'What is my cat called?']) {
          const input = { query, turn, rankDepth: 10 };
          const [open, fresh] = [await strategy.load(input), await reopened.load(input)];
          expect(text(open.messages)).toBe(text(fresh.messages));
          expect(open.retrieved).toEqual(fresh.retrieved);
        }
        await reopened.close();
        // A mode that holds writes back reopens at a boundary: newSession() declines and changes nothing.
        const held = other.create('exit');
        await held.open();
        expect(await held.newSession!()).toBe(false);
        await held.close();
        if (declined) context.skip(`newSession() declines in mode ${definition.defaultDurability} with these options`);
      } finally {
        await rm(other.dir, { recursive: true, force: true });
      }
    });

    it('snapshots what it persisted and verifies a healthy store (where it declares them)', async (context) => {
      if (!strategy.snapshot && !strategy.verify) {
        context.skip('strategy declares neither snapshot() nor verify()');
        return;
      }
      await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
      await strategy.remember?.({ content: 'The garage code is 4711.' });
      await strategy.flush?.();
      if (strategy.snapshot) {
        const persisted = (await strategy.snapshot()).join('\n');
        expect(persisted).toContain('Hangzhou');
        if (strategy.remember) expect(persisted).toContain('4711'); // in a volatile store, still held by this process
      }
      if (strategy.verify) expect(await strategy.verify()).toEqual({ torn: 0, indexMismatches: 0, details: [] });
    });
  });
}
