/**
 * LangChain's classic memories as membench strategies: each passes the conformance suite, maps
 * the contract faithfully, and keeps LangChain's own behaviour visible (including its bugs).
 * Needs `@langchain/classic` installed (the tests fail with NOT_SUPPORTED otherwise).
 */
import { rm } from 'node:fs/promises';
import { AIMessage, getBufferString, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentSession } from '../../harness/agent/loop.js';
import { MembenchError } from '../../harness/core/errors.js';
import {
  HashedEmbedder,
  OfflineModel,
  type ChatModel,
  type ChatRequest,
  type Embedder,
} from '../../harness/models/index.js';
import type { Step } from '../../harness/scenarios/format.js';
import { TokenCounter } from '../../harness/core/tokens.js';
import {
  adaptAnswer,
  HarnessChatModel,
  langchainDefinition,
  LANGCHAIN_MEMORY_NAMES,
  renderMemoryPrompt,
} from '../../strategies/langchain.js';
import type { MemoryStrategy, StrategyContext, StrategyDefinition } from '../../strategies/types.js';
import { describeConformance, exchange, makeHarness, type Harness } from './conformance.js';

const definitions = new Map<string, StrategyDefinition>();
for (const name of LANGCHAIN_MEMORY_NAMES) definitions.set(name, await langchainDefinition(name));
const definition = (name: string): StrategyDefinition => definitions.get(name)!;

for (const item of definitions.values()) describeConformance(item);

const text = (messages: readonly BaseMessage[]): string =>
  messages.map((message) => String(message.content)).join('\n');

/**
 * One user turn in the agent loop's order: save, load, save the reply. LangChain's EntityMemory
 * relies on it (it summarises the entities its last load extracted).
 */
async function turn(strategy: MemoryStrategy, index: number, user: string, reply: string): Promise<void> {
  await strategy.save({ message: new HumanMessage(user), turn: index });
  await strategy.load({ query: user, turn: index });
  await strategy.save({ message: new AIMessage(reply), turn: index });
}

/** A model that records every request before the offline model answers it. */
function recording(inner: ChatModel): ChatModel & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    id: inner.id,
    offline: inner.offline,
    requests,
    chat: (request) => (requests.push(request), inner.chat(request)),
  };
}

/** An embedder that counts the texts it embeds. */
function counting(inner: Embedder): Embedder & { texts: number } {
  const counter = {
    id: inner.id,
    dimensions: inner.dimensions,
    texts: 0,
    embed: (texts: readonly string[]) => ((counter.texts += texts.length), inner.embed(texts)),
  };
  return counter;
}

/** Saves a user question and loads the context for it: the messages, and each as [type, content]. */
async function ask(strategy: MemoryStrategy, turn: number, text: string) {
  const question = new HumanMessage(text);
  await strategy.save({ message: question, turn });
  const { messages } = await strategy.load({ query: text, turn });
  return { question, messages, roles: messages.map((message) => [message.getType(), message.content]) };
}

describe('langchain strategies', () => {
  let harness: Harness | undefined;
  let strategy: MemoryStrategy | undefined;
  afterEach(async () => {
    await strategy?.close();
    if (harness) await rm(harness.dir, { recursive: true, force: true });
    harness = strategy = undefined;
  });

  async function open(
    name: string,
    options: Record<string, unknown> = {},
    override: Partial<StrategyContext> = {},
  ): Promise<{ strategy: MemoryStrategy; context: StrategyContext }> {
    const item = definition(name);
    harness = await makeHarness(item, options);
    const context = { ...harness.context(), ...override };
    strategy = item.create(context, item.options.parse(options));
    await strategy.open();
    return { strategy, context };
  }

  it('names every memory langchain:NAME, in-memory only', () => {
    expect([...definitions.keys()]).toEqual([
      'buffer',
      'buffer-window',
      'summary',
      'summary-buffer',
      'vector',
      'entity',
    ]);
    for (const [name, item] of definitions) {
      expect(item.name).toBe(`langchain:${name}`);
      expect(item.defaultDurability).toBe('none');
    }
  });

  it('keeps LangChain defaults for the knobs (buffer-window k=5, not membench window k=2)', () => {
    expect(definition('buffer-window').options.parse({})).toEqual({ k: 5 });
    expect(definition('summary-buffer').options.parse({})).toEqual({ maxTokenLimit: 2000 });
    expect(definition('vector').options.parse({})).toEqual({ k: 4 });
    expect(definition('entity').options.parse({})).toEqual({ k: 3 });
  });

  it('langchain:buffer stores exchanges and returns them, then the current user message', async () => {
    const { strategy } = await open('buffer');
    await exchange(strategy, 1, 'My cat is called Mochi.', 'Nice name!');
    const { question, messages, roles } = await ask(strategy, 2, 'What is my cat called?');
    expect(roles).toEqual([
      ['human', 'My cat is called Mochi.'],
      ['ai', 'Nice name!'],
      ['human', 'What is my cat called?'],
    ]);
    expect(messages.at(-1)).toBe(question);
  });

  it('folds tool calls and results into the exchange output, including scripted tool steps after the answer', async () => {
    const { strategy } = await open('buffer');
    await strategy.save({ message: new HumanMessage('Order the vegetarian box.'), turn: 1 });
    await strategy.load({ query: 'Order the vegetarian box.', turn: 1 });
    await strategy.save({ message: new AIMessage('Ordering it now.'), turn: 1 });
    await strategy.save({
      message: new AIMessage({
        content: '',
        tool_calls: [{ id: 'c1', name: 'place_order', args: { box: 'veg' }, type: 'tool_call' }],
      }),
      turn: 1,
    });
    // Before the tool result arrives a load shows the unfinished exchange raw, call first.
    const inFlight = await strategy.load({ query: 'status?', turn: 1 });
    expect(inFlight.messages.map((message) => message.getType())).toEqual(['human', 'ai', 'ai']);
    await strategy.save({
      message: new ToolMessage({ content: 'order 17 placed', tool_call_id: 'c1', name: 'place_order' }),
      turn: 1,
    });
    await strategy.save({ message: new HumanMessage('Which order number?'), turn: 2 });
    const { messages } = await strategy.load({ query: 'Which order number?', turn: 2 });
    expect(messages.map((message) => message.getType())).toEqual(['human', 'ai', 'human']);
    expect(String(messages[1]!.content)).toBe(
      'Ordering it now.\n[called place_order({"box":"veg"})]\n[place_order returned: order 17 placed]',
    );
  });

  it('langchain:buffer-window keeps the last k exchanges', async () => {
    const { strategy } = await open('buffer-window', { k: 2 });
    for (let turn = 1; turn <= 4; turn++) await exchange(strategy, turn, `fact ${turn}`, `ok ${turn}`);
    const { messages } = await strategy.load({ query: 'facts?', turn: 5 });
    expect(messages.map((message) => message.content)).toEqual(['fact 3', 'ok 3', 'fact 4', 'ok 4']);
  });

  it('langchain:summary summarises through the metered harness model with LangChain prompt, offline-readable', async () => {
    const model = recording(new OfflineModel());
    const { strategy } = await open('summary', {}, { model });
    await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
    await exchange(strategy, 2, 'I am allergic to peanuts.', 'Noted.');
    await strategy.save({ message: new HumanMessage('Where does Lin live?'), turn: 3 });
    const { messages } = await strategy.load({ query: 'Where does Lin live?', turn: 3 });
    expect(messages.map((message) => message.getType())).toEqual(['system', 'human']);
    expect(String(messages[0]!.content)).toContain('Hangzhou');
    expect(String(messages[0]!.content)).toContain('peanuts');
    expect(model.requests.map((request) => request.task)).toEqual(['summarize', 'summarize']);
    const [system, user] = model.requests[1]!.messages;
    expect(String(system!.content)).toMatch(/^Progressively summarize the lines of conversation provided/u);
    expect(String(system!.content)).toContain('END OF EXAMPLE');
    expect(String(user!.content)).toBe(
      'Current summary:\nLin lives in Hangzhou.\n\nNew lines of conversation:\nHuman: I am allergic to peanuts.\nAI: Noted.',
    );
  });

  it('langchain:summary counts its summary calls as maintenance tokens (the harness meters them)', async () => {
    const { strategy, context } = await open('summary');
    await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
    await strategy.load({ query: 'x', turn: 2 });
    const usage = (context.model as unknown as { usage: { maintenanceCalls: number; maintenanceTokens: number } })
      .usage;
    expect(usage.maintenanceCalls).toBe(1);
    expect(usage.maintenanceTokens).toBeGreaterThan(100); // LangChain's prompt carries a worked example
  });

  it('langchain:summary-buffer measures its buffer with the harness token counter', async () => {
    const { strategy, context } = await open('summary-buffer', { maxTokenLimit: 2000 });
    await turn(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
    const before = context.tokens.encodeCalls;
    await turn(strategy, 2, 'Bob works at Acme.', 'OK.'); // commits exchange 1: one getNumTokens call
    expect(context.tokens.encodeCalls - before).toBe(1);
  });

  it('langchain:summary-buffer sends more tokens than maxTokenLimit after a few turns (LangChain.js bug, measured)', async () => {
    // ConversationSummaryBufferMemory.prune() pops from a copy of its history once a summary
    // exists, so later pruned messages stay in the history: the context grows without bound,
    // every save re-counts the whole history and the old messages are summarised again.
    const maxTokenLimit = 100;
    const { strategy, context } = await open('summary-buffer', { maxTokenLimit });
    const measured: { turn: number; bufferTokens: number; encodeCallsPerSave: number }[] = [];
    for (let turn = 1; turn <= 40; turn++) {
      const before = context.tokens.encodeCalls;
      await strategy.save({ message: new HumanMessage(`fact number ${turn} is ${turn * 7}`), turn });
      const encodeCallsPerSave = context.tokens.encodeCalls - before;
      const { messages } = await strategy.load({ query: 'facts?', turn });
      await strategy.save({ message: new AIMessage(`ok ${turn}`), turn });
      // Measured the way LangChain measures itself: getNumTokens(getBufferString(buffer)).
      const bufferTokens = context.tokens.countText(getBufferString(messages.slice(0, -1)));
      if (turn % 10 === 0) measured.push({ turn, bufferTokens, encodeCallsPerSave });
    }
    const [at10, , , at40] = measured;
    expect(at40!.bufferTokens).toBeGreaterThan(5 * maxTokenLimit);
    expect(at40!.bufferTokens).toBeGreaterThan(2 * at10!.bufferTokens);
    expect(at40!.encodeCallsPerSave).toBeGreaterThan(3 * at10!.encodeCallsPerSave);
  });

  it('langchain:vector retrieves the relevant exchange, embedding each exchange once and each query once', async () => {
    const embedder = counting(new HashedEmbedder(64));
    const { strategy } = await open('vector', { k: 1 }, { embedder });
    const facts = ['Lin lives in Hangzhou.', 'My cat is called Mochi.', 'I am allergic to peanuts.', '我对花生过敏。'];
    for (const [index, fact] of facts.entries()) await exchange(strategy, index + 1, fact, 'OK.');
    await strategy.save({ message: new HumanMessage('What is my cat called?'), turn: 5 });
    const embedded = embedder.texts;
    const { messages } = await strategy.load({ query: 'What is my cat called?', turn: 5 });
    expect(messages.map((message) => message.getType())).toEqual(['system', 'human']);
    expect(String(messages[0]!.content)).toBe('input: My cat is called Mochi.\noutput: OK.');
    expect(embedded).toBe(facts.length); // each exchange once, when the next user message closes it
    expect(embedder.texts - embedded).toBe(1); // the query
  });

  it('langchain:entity extracts entities and summarises them through the offline model', async () => {
    const model = recording(new OfflineModel());
    const { strategy } = await open('entity', {}, { model });
    await turn(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
    for (let index = 2; index <= 5; index++) await turn(strategy, index, `filler ${index}`, 'OK.');
    await strategy.save({ message: new HumanMessage('Where does Lin live?'), turn: 6 });
    const { messages } = await strategy.load({ query: 'Where does Lin live?', turn: 6 });
    expect(String(messages[0]!.content)).toBe('Context:\nLin: Lin lives in Hangzhou.');
    expect(text(messages)).not.toContain('filler 2'); // history is the last k=3 exchanges only
    expect(new Set(model.requests.map((request) => request.task))).toEqual(
      new Set(['extract-entities', 'summarize-entity']),
    );
    const extraction = model.requests.find((request) => request.task === 'extract-entities')!;
    expect(String(extraction.messages.at(-1)!.content)).toBe('Lin lives in Hangzhou.');
  });

  it('loses everything at a session boundary: LangChain classes are in-memory', async () => {
    const item = definition('buffer');
    harness = await makeHarness(item);
    const current = harness;
    const session = new AgentSession({
      model: new OfflineModel(),
      tokens: current.tokens,
      createStrategy: () => current.create(),
    });
    const steps = [
      { kind: 'user', user: 'Lin lives in Hangzhou.', assistant: 'Got it.' },
      {
        kind: 'probe',
        probe: 'Where does Lin live?',
        expect: ['Hangzhou'],
        forbid: [],
        category: 'extraction',
        evidence: [],
      },
      { kind: 'session', session: 'new' },
      {
        kind: 'probe',
        probe: 'Where does Lin live?',
        expect: ['Hangzhou'],
        forbid: [],
        category: 'extraction',
        evidence: [],
      },
    ] as Step[];
    await session.start();
    await session.run(steps);
    await session.finish();
    expect(session.probes.map((probe) => probe.contextRecall)).toEqual([true, false]);
  });

  it('a reply saved in a fresh process, its user message gone with the killed one, is dropped, not an error', async () => {
    const { strategy } = await open('buffer');
    // A restarted agent: LangChain's memory starts empty, and the first message it is given is a reply.
    await strategy.save({ message: new AIMessage('OK, I will remember that.'), turn: 1 });
    await exchange(strategy, 2, 'Can you suggest a main dish?', 'Red-braised tofu.');
    const { roles } = await ask(strategy, 3, 'And for Tuesday?');
    expect(roles).toEqual([
      ['human', 'Can you suggest a main dish?'],
      ['ai', 'Red-braised tofu.'],
      ['human', 'And for Tuesday?'],
    ]);
  });

  it('refuses durability modes other than none', async () => {
    harness = await makeHarness(definition('buffer'));
    expect(() => harness!.create('sync')).toThrow(/keeps everything in process memory/u);
  });

  it('reports a missing @langchain/classic as NOT_SUPPORTED with the install command', async () => {
    const missing = Object.assign(new Error("Cannot find package '@langchain/classic' imported from /x.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const error = await langchainDefinition('summary', () => Promise.reject(missing)).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(MembenchError);
    expect(error).toMatchObject({
      code: 'NOT_SUPPORTED',
      message: 'langchain:summary needs the optional package @langchain/classic: npm install @langchain/classic',
    });
  });

  it('rejects an unknown LangChain memory, listing the known ones', async () => {
    await expect(langchainDefinition('toString')).rejects.toMatchObject({
      code: 'UNKNOWN_STRATEGY',
      message: expect.stringContaining('langchain:buffer-window'),
    });
  });
});

interface Template {
  format(values: object): Promise<string>;
}

/** LangChain's own entity prompts (not exported by the package: read them off an EntityMemory). */
async function entityPrompts(): Promise<{ extraction: Template; summarization: Template }> {
  const { EntityMemory } = (await import('@langchain/classic/memory' as string)) as {
    EntityMemory: new (fields: object) => Record<string, { prompt: Template }>;
  };
  const memory = new EntityMemory({ llm: new HarnessChatModel(new OfflineModel(), new TokenCounter('gpt-4o')) });
  return { extraction: memory.entityExtractionChain!.prompt, summarization: memory.entitySummarizationChain!.prompt };
}

describe('renderMemoryPrompt', () => {
  it('recognises LangChain’s entity extraction prompt and keeps the examples out of the user message', async () => {
    const prompt = await (await entityPrompts()).extraction.format({
      history: 'Human: hi\nAI: hello',
      input: 'Ana moved to Lisbon.',
    });
    const rendered = renderMemoryPrompt(prompt);
    expect(rendered.task).toBe('extract-entities');
    expect(String(rendered.messages[0]!.content)).toContain('Person #1: my name is Jacob');
    expect(String(rendered.messages[1]!.content)).toBe('Ana moved to Lisbon.');
    const answer = new OfflineModel().respond({ task: rendered.task, messages: rendered.messages });
    expect(adaptAnswer(rendered.task, answer)).toBe('Ana, Lisbon');
    expect(adaptAnswer('extract-entities', '[]')).toBe('NONE');
  });

  it('recognises LangChain’s entity summary prompt and treats its placeholder as an empty summary', async () => {
    const prompt = await (await entityPrompts()).summarization.format({
      entity: 'Ana',
      summary: 'No current information known.',
      history: 'Human: hi',
      input: 'Ana moved to Lisbon.',
    });
    const rendered = renderMemoryPrompt(prompt);
    expect(rendered.task).toBe('summarize-entity');
    expect(String(rendered.messages[0]!.content)).toContain('Entity to summarize:\nAna');
    expect(String(rendered.messages[1]!.content)).toBe(
      'Current summary:\n\n\nNew lines of conversation:\nHuman: Ana moved to Lisbon.',
    );
  });

  it('passes an unknown prompt through as a summarize request', () => {
    const rendered = renderMemoryPrompt('Summarise this please: a b c');
    expect(rendered.task).toBe('summarize');
    expect(rendered.messages.map((message) => message.content)).toEqual(['Summarise this please: a b c']);
  });
});
