/**
 * `langchain:NAME`: LangChain's classic memory classes (from the optional package
 * `@langchain/classic`) behind the membench contract, so they run as peers of the built-ins.
 *
 * How the contract maps onto LangChain's:
 * - LangChain memories store exchanges. A user message opens one; everything the assistant does
 *   until the next user message (replies, tool calls, tool results) is folded into its output
 *   text, and the exchange goes to `saveContext({input}, {output})` once the assistant has
 *   answered: at the next user message or before the next load, whichever comes first, so
 *   LangChain sees the order its chains use (load, answer, save). A scripted tool step after the
 *   answer is folded into that answer. (LangChain's own agents drop tool calls from memory; we
 *   keep them as text so probes about tool results can be answered.)
 * - `load(query)` returns `loadMemoryVariables({input: query})` (messages where the class supports
 *   `returnMessages`; text wrapped in a SystemMessage otherwise), then the exchange in flight as
 *   the raw messages (the current user message, and any tool call with its result).
 * - Classes that call an LLM (summary, summary-buffer, entity) get `HarnessChatModel`: it renders
 *   LangChain's completion-style prompts as chat messages the offline model can read and sends
 *   them through `context.model` with the matching task, so the harness meters them.
 * - Everything lives in process memory: `persistent: false`, and only durability `none` makes sense.
 */
import { Embeddings } from '@langchain/core/embeddings';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import {
  AIMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
  type MessageContent,
} from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { z } from 'zod';
import { MembenchError } from '../harness/core/errors.js';
import type { ChatModel, Embedder, ModelTask } from '../harness/models/types.js';
import { messageText, type TokenCounter } from '../harness/core/tokens.js';
import type {
  LoadInput,
  LoadResult,
  MemoryEvent,
  MemoryStrategy,
  StrategyContext,
  StrategyDefinition,
} from './types.js';

import { LANGCHAIN_PREFIX } from './types.js';

export { LANGCHAIN_PREFIX };

type Values = Record<string, unknown>;

/** The part of LangChain's BaseMemory the adapter calls. */
export interface LangChainMemory {
  loadMemoryVariables(values: Values): Promise<Values>;
  saveContext(input: Values, output: Values): Promise<void>;
}
type MemoryClass = new (fields: Values) => LangChainMemory;
type MemoryClassName =
  | 'BufferMemory'
  | 'BufferWindowMemory'
  | 'ConversationSummaryMemory'
  | 'ConversationSummaryBufferMemory'
  | 'VectorStoreRetrieverMemory'
  | 'EntityMemory';

/** What the adapter takes from `@langchain/classic` (imported at run time: the package is optional). */
export interface ClassicModules {
  memory: Record<MemoryClassName, MemoryClass>;
  MemoryVectorStore: new (embeddings: Embeddings) => { asRetriever(k: number): unknown };
}

const CLASSIC_PACKAGE = '@langchain/classic';

/** Imports the optional package; the specifiers are variables so TypeScript compiles without it installed. */
async function importClassic(): Promise<ClassicModules> {
  const memorySpecifier: string = `${CLASSIC_PACKAGE}/memory`;
  const vectorSpecifier: string = `${CLASSIC_PACKAGE}/vectorstores/memory`;
  const [memory, vectorstores] = await Promise.all([import(memorySpecifier), import(vectorSpecifier)]);
  return {
    memory: memory as ClassicModules['memory'],
    MemoryVectorStore: (vectorstores as Pick<ClassicModules, 'MemoryVectorStore'>).MemoryVectorStore,
  };
}

function isMissingPackage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    String((error as Error).message).includes(CLASSIC_PACKAGE)
  );
}

// ---------------------------------------------------------------------------------------------
// LangChain's prompts, rendered for chat and for the offline model

/** LangChain's placeholder for an entity it knows nothing about yet. */
const NO_ENTITY_SUMMARY = 'No current information known.';
const SUMMARY_OPENING = 'Progressively summarize the lines of conversation provided';
const EXTRACTION_OPENING =
  'You are an AI assistant reading the transcript of a conversation between an AI and a human. Extract all of the proper nouns';
const ENTITY_SUMMARY_OPENING =
  'You are an AI assistant helping a human keep track of facts about relevant people, places, and concepts';

/** A model request: the membench task and the messages that carry LangChain's prompt. */
export interface RenderedPrompt {
  task: ModelTask;
  messages: BaseMessage[];
}

const userPart = (previousSummary: string, newLines: string): string =>
  `Current summary:\n${previousSummary}\n\nNew lines of conversation:\n${newLines}`;

/**
 * Renders one of LangChain's memory prompts (known strings, recognised by their opening words)
 * as a system message (instructions, examples, reference context) plus a user message under
 * membench's summary headers: the same information in about the same tokens, and parseable by
 * the offline model, which reads only the user message. Unknown prompts pass through as `summarize`.
 */
export function renderMemoryPrompt(prompt: string): RenderedPrompt {
  const split = (task: ModelTask, at: number, user: string): RenderedPrompt =>
    at < 0
      ? { task, messages: [new HumanMessage(prompt)] }
      : { task, messages: [new SystemMessage(prompt.slice(0, at).trim()), new HumanMessage(user)] };

  if (prompt.startsWith(SUMMARY_OPENING)) {
    const at = prompt.lastIndexOf('\nCurrent summary:\n'); // the last one: the first belongs to the example
    return split('summarize', at, prompt.slice(at + 1).replace(/\s*New summary:\s*$/u, ''));
  }
  if (prompt.startsWith(EXTRACTION_OPENING)) {
    const marker = 'Last line of conversation (for extraction):\n';
    const at = prompt.lastIndexOf(marker);
    const line = prompt
      .slice(at + marker.length)
      .replace(/\s*Output:\s*$/u, '')
      .replace(/^Human: /u, '');
    return split('extract-entities', at < 0 ? at : at + marker.length, line.trim());
  }
  if (prompt.startsWith(ENTITY_SUMMARY_OPENING)) {
    const at = prompt.lastIndexOf('\n\nExisting summary of ');
    const summaryAt = prompt.indexOf(':\n', at) + 2;
    const lineAt = prompt.indexOf('\n\nLast line of conversation:\n', summaryAt);
    const endAt = prompt.lastIndexOf('\nUpdated summary');
    if (at < 0 || lineAt < 0 || endAt < lineAt) return split('summarize-entity', -1, '');
    const summary = prompt.slice(summaryAt, lineAt).trim();
    const line = prompt.slice(lineAt + '\n\nLast line of conversation:\n'.length, endAt).trim();
    return split('summarize-entity', at, userPart(summary === NO_ENTITY_SUMMARY ? '' : summary, line));
  }
  return { task: 'summarize', messages: [new HumanMessage(prompt)] };
}

/** Puts a model's answer in the form LangChain parses (the offline model lists entities as JSON). */
export function adaptAnswer(task: ModelTask, text: string): string {
  if (task === 'extract-entities' && text.trim().startsWith('[')) {
    try {
      const entities = JSON.parse(text) as unknown;
      if (Array.isArray(entities)) return entities.length ? entities.map(String).join(', ') : 'NONE';
    } catch {
      // not JSON after all: LangChain gets the text as it is
    }
  }
  if (task === 'summarize-entity' && text.trim() === '') return 'UNCHANGED';
  return text;
}

/** A LangChain chat model over the harness's (metered) model; counts tokens with the harness's counter. */
export class HarnessChatModel extends BaseChatModel {
  constructor(
    private readonly harnessModel: ChatModel,
    private readonly tokenCounter: TokenCounter,
  ) {
    super({});
  }

  override _llmType(): string {
    return 'membench'; // called by LangChain's constructor, before our fields exist
  }

  /** LangChain's summary-buffer measures its buffer with this: same counter as the harness. */
  override async getNumTokens(content: MessageContent): Promise<number> {
    return this.tokenCounter.countText(messageText(new HumanMessage({ content })));
  }

  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const { task, messages: request } = renderMemoryPrompt(messages.map(messageText).join('\n\n'));
    const { text } = await this.harnessModel.chat({ task, messages: request });
    const answer = adaptAnswer(task, text);
    return { generations: [{ text: answer, message: new AIMessage(answer) }] };
  }
}

/** LangChain embeddings over the harness's embedder (one call per saved exchange and per query). */
export class HarnessEmbeddings extends Embeddings {
  constructor(private readonly embedder: Embedder) {
    super({});
  }

  override async embedDocuments(documents: string[]): Promise<number[][]> {
    return (await this.embedder.embed(documents)).map((vector) => Array.from(vector));
  }

  override async embedQuery(document: string): Promise<number[]> {
    const [vector] = await this.embedder.embed([document]);
    return Array.from(vector ?? []);
  }
}

// ---------------------------------------------------------------------------------------------
// The memories and their knobs (LangChain's defaults, so results match what LangChain users get)

const count = (fallback: number) => z.coerce.number().int().min(1).default(fallback);

interface MemoryKind<Options extends z.ZodType> {
  description: string;
  options: Options;
  /** What the memory puts into the context is the messages' own text (StrategyDefinition.keepsVerbatim). */
  keepsVerbatim: boolean;
  build(classic: ClassicModules, context: StrategyContext, options: z.output<Options>): LangChainMemory;
  /** Turns the memory variables into messages. */
  render(variables: Values): BaseMessage[];
}
const kind = <Options extends z.ZodType>(definition: MemoryKind<Options>): MemoryKind<Options> => definition;

const keys = { inputKey: 'input', outputKey: 'output', memoryKey: 'history', returnMessages: true };
const historyMessages = (variables: Values): BaseMessage[] =>
  Array.isArray(variables.history) ? (variables.history as BaseMessage[]) : [];
const textMessage = (text: unknown): BaseMessage[] =>
  typeof text === 'string' && text.trim() ? [new SystemMessage(text)] : [];
const llmFor = (context: StrategyContext) => new HarnessChatModel(context.model, context.tokens);

const KINDS = {
  buffer: kind({
    description: 'LangChain BufferMemory: every exchange',
    keepsVerbatim: true,
    options: z.object({}).strict(),
    build: (classic) => new classic.memory.BufferMemory(keys),
    render: historyMessages,
  }),
  'buffer-window': kind({
    description:
      'LangChain BufferWindowMemory: the last k exchanges (LangChain default k=5; membench window defaults to 2)',
    keepsVerbatim: true,
    options: z.object({ k: count(5) }).strict(),
    build: (classic, _context, options) => new classic.memory.BufferWindowMemory({ ...keys, k: options.k }),
    render: historyMessages,
  }),
  summary: kind({
    description: 'LangChain ConversationSummaryMemory: a running summary, lost on restart',
    keepsVerbatim: false,
    options: z.object({}).strict(),
    build: (classic, context) => new classic.memory.ConversationSummaryMemory({ ...keys, llm: llmFor(context) }),
    render: historyMessages,
  }),
  'summary-buffer': kind({
    description:
      'LangChain ConversationSummaryBufferMemory: summary + recent messages (its JS version does not bound the context)',
    keepsVerbatim: false,
    options: z.object({ maxTokenLimit: count(2000) }).strict(),
    build: (classic, context, options) =>
      new classic.memory.ConversationSummaryBufferMemory({
        ...keys,
        llm: llmFor(context),
        maxTokenLimit: options.maxTokenLimit,
      }),
    render: historyMessages,
  }),
  vector: kind({
    description: 'LangChain VectorStoreRetrieverMemory over MemoryVectorStore: top-k exchanges by similarity',
    keepsVerbatim: true,
    options: z.object({ k: count(4) }).strict(),
    build: (classic, context, options) =>
      new classic.memory.VectorStoreRetrieverMemory({
        vectorStoreRetriever: new classic.MemoryVectorStore(new HarnessEmbeddings(context.embedder)).asRetriever(
          options.k,
        ),
        inputKey: 'input',
        memoryKey: 'history',
      }),
    render: (variables) => textMessage(variables.history),
  }),
  entity: kind({
    description: 'LangChain EntityMemory: per-entity summaries + the last k exchanges',
    keepsVerbatim: false,
    options: z.object({ k: count(3) }).strict(),
    build: (classic, context, options) =>
      new classic.memory.EntityMemory({ ...keys, llm: llmFor(context), k: options.k }),
    render: (variables) => {
      const entities = Object.entries((variables.entities ?? {}) as Record<string, string>);
      // LangChain's ENTITY_MEMORY_CONVERSATION_TEMPLATE puts these under "Context:".
      const context = entities.length
        ? [new SystemMessage(`Context:\n${entities.map(([name, summary]) => `${name}: ${summary}`).join('\n')}`)]
        : [];
      return [...context, ...historyMessages(variables)];
    },
  }),
} satisfies Record<string, MemoryKind<z.ZodType>>;

/** The LangChain memories membench can wrap, as named after `langchain:`. */
export const LANGCHAIN_MEMORY_NAMES = Object.keys(KINDS) as (keyof typeof KINDS)[];

// ---------------------------------------------------------------------------------------------
// The adapter

/** The exchange in flight: the user's input and what the assistant did since. */
interface Exchange {
  input: string[];
  output: string[];
  raw: BaseMessage[];
  /** The assistant has given a final answer (tool steps may still follow and are folded in). */
  answered: boolean;
  /** Tool calls whose result has not arrived: the exchange is not committed while any is open. */
  openCalls: Set<string>;
}
const emptyExchange = (): Exchange => ({ input: [], output: [], raw: [], answered: false, openCalls: new Set() });

/** An assistant or tool message as a line of the exchange's output text. */
function outputLine(message: BaseMessage): string {
  const text = messageText(message);
  if (message.getType() === 'tool') return `[${message.name ?? 'tool'} returned: ${text}]`;
  const calls = message instanceof AIMessage ? (message.tool_calls ?? []) : [];
  return [text, ...calls.map((call) => `[called ${call.name}(${JSON.stringify(call.args ?? {})})]`)]
    .filter(Boolean)
    .join('\n');
}

const isEmpty = (message: BaseMessage): boolean =>
  messageText(message).trim() === '' && !(message instanceof AIMessage && (message.tool_calls?.length ?? 0) > 0);

class LangChainStrategy implements MemoryStrategy {
  readonly capabilities = { persistent: false, explicitMemory: false, backgroundWork: false };
  private pending = emptyExchange();
  /** System messages built from memory text, reused while the text is unchanged (the token counter caches per object). */
  private wrappers = new Map<string, BaseMessage>();

  constructor(
    private readonly memory: LangChainMemory,
    private readonly render: (variables: Values) => BaseMessage[],
  ) {}

  async open(): Promise<void> {
    // Nothing was persisted: LangChain's in-memory classes start empty after every restart.
  }

  async save(event: MemoryEvent): Promise<void> {
    const { message } = event;
    if (message.getType() === 'human') {
      if (this.pending.output.length > 0) await this.commit();
      this.pending.input.push(messageText(message));
    } else {
      const line = outputLine(message);
      if (line) this.pending.output.push(line);
      const calls = message instanceof AIMessage ? (message.tool_calls ?? []) : [];
      for (const call of calls) if (call.id) this.pending.openCalls.add(call.id);
      if (message instanceof ToolMessage) this.pending.openCalls.delete(message.tool_call_id);
      if (message instanceof AIMessage && calls.length === 0) this.pending.answered = true;
    }
    this.pending.raw.push(message);
  }

  async load(input: LoadInput): Promise<LoadResult> {
    if (this.pending.answered && this.pending.openCalls.size === 0) await this.commit();
    const variables = await this.memory.loadMemoryVariables({ input: input.query });
    const remembered = this.render(variables)
      .filter((message) => !isEmpty(message))
      .map((message) => this.stable(message));
    return { messages: [...remembered, ...this.pending.raw] };
  }

  async close(): Promise<void> {
    this.pending = emptyExchange();
  }

  private async commit(): Promise<void> {
    const { input, output } = this.pending;
    this.pending = emptyExchange();
    // A reply whose user message went with a killed process (LangChain's memories keep nothing
    // across a restart): saveContext refuses an empty input, and there is no exchange to save.
    if (input.length === 0) return;
    await this.memory.saveContext({ input: input.join('\n') }, { output: output.join('\n') });
  }

  private stable(message: BaseMessage): BaseMessage {
    if (message.getType() !== 'system') return message;
    const text = messageText(message);
    const known = this.wrappers.get(text);
    if (known) return known;
    if (this.wrappers.size > 16) this.wrappers = new Map();
    this.wrappers.set(text, message);
    return message;
  }
}

/**
 * The definition for `langchain:NAME`. Imports `@langchain/classic` first, so a missing package
 * is reported before any cell runs. `load` is injectable for tests.
 */
export async function langchainDefinition(
  name: string,
  load: () => Promise<ClassicModules> = importClassic,
): Promise<StrategyDefinition> {
  const memoryKind = (KINDS as Record<string, MemoryKind<z.ZodType>>)[name];
  const fullName = `${LANGCHAIN_PREFIX}${name}`;
  if (!memoryKind || !Object.hasOwn(KINDS, name)) {
    throw new MembenchError(
      'UNKNOWN_STRATEGY',
      `unknown LangChain memory "${fullName}": expected one of ${LANGCHAIN_MEMORY_NAMES.map((item) => LANGCHAIN_PREFIX + item).join(', ')}`,
    );
  }
  let classic: ClassicModules;
  try {
    classic = await load();
  } catch (error) {
    if (isMissingPackage(error))
      throw new MembenchError(
        'NOT_SUPPORTED',
        `${fullName} needs the optional package ${CLASSIC_PACKAGE}: npm install ${CLASSIC_PACKAGE}`,
      );
    throw error;
  }
  return {
    name: fullName,
    description: memoryKind.description,
    options: memoryKind.options,
    defaultDurability: 'none',
    keepsVerbatim: memoryKind.keepsVerbatim,
    create(context, options) {
      if (context.durability !== 'none') {
        throw new MembenchError(
          'INVALID_ARGUMENT',
          `${fullName} keeps everything in process memory: durability "${context.durability}" is not available (only "none")`,
        );
      }
      return new LangChainStrategy(memoryKind.build(classic, context, options), memoryKind.render);
    },
  };
}
