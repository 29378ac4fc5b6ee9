/**
 * Token counting with tiktoken's encodings (counted by `bpe.ts`, over tiktoken's ranks), the way
 * OpenAI bills chat requests: per-message overhead,
 * each message counted once and cached on the message object, so a strategy that keeps its
 * messages never pays for re-tokenising the history on every turn.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { BpeCounter, type BpeEncoding } from './bpe.js';
import { MembenchError } from './errors.js';
import { kindOf } from './user-input.js';

export type EncodingName = BpeEncoding;

/** Tokens every chat message costs beyond its content (role and separators), per OpenAI's cookbook. */
export const TOKENS_PER_MESSAGE = 3;
/** Tokens that prime the assistant's reply, added once per request. */
export const TOKENS_PER_REPLY = 3;

/** o200k_base for the gpt-4o / gpt-4.1 / gpt-4.5 / gpt-5 families and o-series models; cl100k_base otherwise. */
export function encodingForModel(model: string): EncodingName {
  const name = model.replace(/^[a-z-]+:/u, '').toLowerCase();
  if (/^(gpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|chatgpt-4o|o\d)/u.test(name)) return 'o200k_base';
  return 'cl100k_base';
}

/** Whether `encodingForModel` knows `model` (or it names an encoding), rather than falling back to cl100k_base for a name it has never seen. */
export function knownTokenizerModel(model: string): boolean {
  const name = model.replace(/^[a-z-]+:/u, '').toLowerCase();
  return (
    encodingForModel(name) === 'o200k_base' ||
    /^(gpt-4|gpt-3\.5|gpt-35|text-embedding-|cl100k_base$|o200k_base$)/u.test(name)
  );
}

const encoders = new Map<EncodingName, BpeCounter>();
function encoderFor(encoding: EncodingName): BpeCounter {
  let encoder = encoders.get(encoding);
  if (!encoder) {
    encoder = BpeCounter.load(encoding);
    encoders.set(encoding, encoder);
  }
  return encoder;
}

/** The text of a message's content, whatever shape LangChain gave it. */
export function messageText(message: BaseMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  return content
    .map((part) => (typeof part === 'string' ? part : 'text' in part && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/**
 * The texts of a message that `countMessage` counts besides its role, each named by its field in a
 * chat-completions message (`content`, `tool_calls[0].function.arguments`, `name`): the local
 * endpoint bounds each of them before counting (answers.ts), so none escapes the bound.
 */
export function countedTexts(message: BaseMessage): { field: string; text: string }[] {
  const texts = [{ field: 'content', text: messageText(message) }];
  const toolCalls =
    'tool_calls' in message ? (message.tool_calls as { name: string; args: unknown }[] | undefined) : undefined;
  toolCalls?.forEach((call, index) => {
    const field = `tool_calls[${index}].function`;
    texts.push(
      { field: `${field}.name`, text: call.name },
      { field: `${field}.arguments`, text: JSON.stringify(call.args ?? {}) },
    );
  });
  if (message.name) texts.push({ field: 'name', text: message.name });
  return texts;
}

/** OpenAI role name of a LangChain message. */
export function roleOf(message: BaseMessage): string {
  switch (message.getType()) {
    case 'human':
      return 'user';
    case 'ai':
      return 'assistant';
    case 'system':
      return 'system';
    case 'tool':
      return 'tool';
    default:
      return message.getType();
  }
}

/**
 * Recently counted texts kept per counter, and the longest text kept (a key holds its text alive).
 * More than a long context holds: a store's load returns new message objects each turn, and a
 * memory smaller than the context would evict every text before the next turn counts it again.
 */
export const RECENT_TEXTS = 8192;
const RECENT_TEXT_CHARS = 20_000;

/** Counts tokens for one encoding; counts each message object once, and a text seen a moment ago once. */
export class TokenCounter {
  readonly encoding: EncodingName;
  /** Number of texts handed to the tokenizer: tests use it to prove nothing is re-tokenised. */
  encodeCalls = 0;
  private readonly perMessage = new WeakMap<BaseMessage, number>();
  /** The same text is often counted twice in a row (a model's reply metered, then checked against a budget; every message's role). */
  private readonly recent = new Map<string, number>();

  constructor(model: string) {
    if (typeof model !== 'string')
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `TokenCounter: expected a model name (e.g. gpt-4o), got ${kindOf(model)}`,
      );
    this.encoding = encodingForModel(model);
  }

  /** Tokens of a plain text (no chat overhead). */
  countText(text: string): number {
    if (text.length === 0) return 0;
    const known = this.recent.get(text);
    if (known !== undefined) return known;
    this.encodeCalls++;
    const tokens = encoderFor(this.encoding).count(text);
    if (text.length <= RECENT_TEXT_CHARS) {
      if (this.recent.size >= RECENT_TEXTS) this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(text, tokens);
    }
    return tokens;
  }

  /** Tokens of one message in a chat request: overhead + role + content + tool calls + name. */
  countMessage(message: BaseMessage): number {
    const cached = this.perMessage.get(message);
    if (cached !== undefined) return cached;
    let total = TOKENS_PER_MESSAGE + this.countText(roleOf(message)) + (message.name ? 1 : 0);
    for (const { text } of countedTexts(message)) total += this.countText(text);
    this.perMessage.set(message, total);
    return total;
  }

  /** Tokens of a whole chat request: every message plus the reply priming. */
  countMessages(messages: readonly BaseMessage[]): number {
    if (messages.length === 0) return 0;
    let total = TOKENS_PER_REPLY;
    for (const message of messages) total += this.countMessage(message);
    return total;
  }
}
