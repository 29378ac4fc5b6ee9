/**
 * The offline reference model and hashed embedder (DESIGN §4): deterministic, no network,
 * and blind to gold data by construction: it only ever receives the messages of a request.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { messageText, roleOf, TokenCounter } from '../tokens.js';
import { hasCjk, matchTerms, normalizeText, sentences } from '../text.js';
import { parseSummarizePrompt } from '../prompts.js';
import type { ChatModel, ChatRequest, ChatResponse, Embedder } from './types.js';

const DEFAULT_SUMMARY_TOKENS = 256;

/**
 * Scores how well a sentence answers a question: shared terms (longer ones worth more), a small
 * bonus for the new information it adds, and nothing at all for a question (questions do not
 * answer questions).
 */
function answerScore(questionTerms: ReadonlySet<string>, sentence: string): number {
  if (/[?？]\s*$/u.test(sentence)) return 0;
  let shared = 0;
  let novel = 0;
  for (const term of new Set(matchTerms(sentence))) {
    if (questionTerms.has(term)) shared += 1 + Math.min(term.length, 8) / 8;
    else novel++;
  }
  return shared > 0 ? shared + 0.02 * Math.min(novel, 5) : 0;
}

function speakerLines(messages: readonly BaseMessage[]): string[] {
  return messages.map((message) => messageText(message)).filter((text) => text.trim().length > 0);
}

/** Keeps the most recent sentences that fit the budget, in their original order. */
function fitToBudget(parts: readonly string[], budget: number, counter: TokenCounter): string[] {
  const kept: string[] = [];
  let used = 0;
  for (let i = parts.length - 1; i >= 0; i--) {
    const part = parts[i]!;
    const cost = counter.countText(part) + 1;
    if (used + cost > budget) break;
    kept.unshift(part);
    used += cost;
  }
  return kept;
}

function dedupe(parts: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (let i = parts.length - 1; i >= 0; i--) {
    const key = normalizeText(parts[i]!);
    if (seen.has(key)) continue;
    seen.add(key);
    out.unshift(parts[i]!);
  }
  return out;
}

const ACKNOWLEDGEMENT = /^(ok|okay|sure|got it|noted|好的|好|嗯|收到|明白|没问题)[.!。！,，]?$/iu;
const SPEAKER_PREFIX = /^(human|ai|user|assistant|tool|system)\s*:\s*/iu;

/** Deterministic stand-in for a chat model: extractive summaries, pattern entities, quoting answers. */
export class OfflineModel implements ChatModel {
  readonly id = 'offline';
  readonly offline = true;
  private readonly counter = new TokenCounter('offline');

  async chat(request: ChatRequest): Promise<ChatResponse> {
    return { text: this.respond(request), cached: false };
  }

  /** The synchronous core, exposed for tests. */
  respond(request: ChatRequest): string {
    const { messages } = request;
    switch (request.task) {
      case 'answer':
        return this.answer(messages);
      case 'reply':
        return this.reply(messages);
      case 'summarize':
      case 'summarize-entity':
        return this.summarize(messages, request.maxOutputTokens ?? DEFAULT_SUMMARY_TOKENS);
      case 'extract-entities':
        return JSON.stringify(extractEntities(speakerLines(messages.filter((m) => roleOf(m) !== 'system')).join('\n')));
    }
  }

  private answer(messages: readonly BaseMessage[]): string {
    const question = messages.at(-1);
    if (!question) return '';
    const questionText = messageText(question);
    const questionTerms = new Set(matchTerms(questionText));
    const context = messages.slice(0, -1).filter((message) => roleOf(message) !== 'system' || !isInstruction(message));
    let best = '';
    let bestScore = 0;
    for (const line of speakerLines(context)) {
      for (const sentence of sentences(line)) {
        const score = answerScore(questionTerms, sentence);
        // ">=" prefers the later sentence on ties: the most recent statement wins, as after a correction.
        if (score > 0 && score >= bestScore) {
          best = sentence.replace(SPEAKER_PREFIX, '');
          bestScore = score;
        }
      }
    }
    if (best) return best;
    return hasCjk(questionText) ? '我不知道。' : "I don't know.";
  }

  private reply(messages: readonly BaseMessage[]): string {
    const last = messages.at(-1);
    const text = last ? messageText(last) : '';
    return hasCjk(text) ? '好的。' : 'OK.';
  }

  private summarize(messages: readonly BaseMessage[], budget: number): string {
    const prompt = messages.filter((message) => roleOf(message) !== 'system').map(messageText).join('\n');
    const { previousSummary, newLines } = parseSummarizePrompt(prompt);
    const parts: string[] = [];
    for (const line of [previousSummary, ...newLines.split('\n')]) {
      for (const sentence of sentences(line.replace(SPEAKER_PREFIX, ''))) {
        if (!ACKNOWLEDGEMENT.test(sentence) && matchTerms(sentence).length > 0) parts.push(sentence);
      }
    }
    return fitToBudget(dedupe(parts), budget, this.counter).join(' ');
  }
}

function isInstruction(message: BaseMessage): boolean {
  return roleOf(message) === 'system' && messageText(message).startsWith('Answer the last question');
}

const LATIN_NAME = /\b[A-Z][\p{L}'’-]+(?:\s+[A-Z][\p{L}'’-]+)*/gu;
const NOT_NAMES = new Set(
  ('I The A An My Your What When Where Who How Why Please OK Yes No Remember Can Do Is ' +
    'We You He She It They Hi Hello Hey Oh And But So Then Also Just Let Here There This That If For By Of In On At To With ' +
    'Nice Good Great Sure Thanks Thank Sorry Fine Perfect Lovely Noted Okay Got Sounds Well Right Done Not ' +
    'Any Anything Some Most All Every Each Both First Next Last Once After Before Now Later ' +
    'Should Could Would Will Shall Does Did Are Was Were Which Be Have Has ' +
    'Human AI Tool User Assistant System').split(' '),
);
/** Things people talk about as "my X" / "我的X": family, pets, belongings, plans. */
const MY_NOUNS_EN = 'son|daughter|kids?|children|wife|husband|partner|mother|mom|mum|father|dad|parents|brother|sister|friend|boss|cat|dog|flight|car|oven|pot|coffee|address';
const MY_NOUNS_ZH = '儿子|女儿|孩子|老婆|老公|妻子|丈夫|父母|爸爸|妈妈|哥哥|姐姐|弟弟|妹妹|朋友|同事|老板|猫|狗|航班|车|锅|烤箱|地址';
const HAN = '\\p{Script=Han}';
const ZH_END = '(?=[，。！？、；,.!?;\\s了的吧吗呢]|$)';
const ZH_PATTERNS = [
  new RegExp(`(?:叫|名叫|叫做)([${HAN}]{2,4})`, 'gu'),
  new RegExp(`我(?:的|家|们家|家的)?(${MY_NOUNS_ZH})`, 'gu'),
  new RegExp(`对([${HAN}]{1,4}?)过敏`, 'gu'),
  new RegExp(`(?:住在|搬到|搬回|去|到)([${HAN}]{2,3}?)${ZH_END}`, 'gu'),
  new RegExp(`(?:做|吃|买|用|炖|炒|一口|一个|一只)([${HAN}]{2,4})(?=[，。！？、；,.!?;\\s吧吗呢]|$)`, 'gu'),
];
/** Captures that are function words, pronouns or quantities rather than things. */
const ZH_NOT_THING = /^[的它他她我你这那哪什怎几两一来]|了$/u;

/** Entities by pattern: capitalised Latin names, "called X" / "my X", and Chinese names, kin, places and objects by marker. */
export function extractEntities(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(LATIN_NAME)) {
    const name = match[0].split(/\s+/u).filter((part) => !NOT_NAMES.has(part.replace(/['’].*$/u, ''))).join(' ');
    if (name.length > 1) found.add(name);
  }
  for (const match of text.matchAll(/\b(?:called|named)\s+([\p{L}][\p{L}'-]+)/giu)) found.add(match[1]!);
  for (const match of text.matchAll(new RegExp(`\\bmy\\s+(${MY_NOUNS_EN})\\b`, 'giu'))) found.add(match[1]!.toLowerCase());
  for (const pattern of ZH_PATTERNS) {
    for (const match of text.matchAll(pattern)) if (!ZH_NOT_THING.test(match[1]!)) found.add(match[1]!);
  }
  return [...found];
}

function fnv1a(text: string, seed: number): number {
  let hash = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Hashes words and CJK bigrams into a fixed-size, L2-normalised vector (the feature-hashing trick). */
export class HashedEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;

  constructor(dimensions = 256) {
    this.dimensions = dimensions;
    this.id = `hashed-${dimensions}`;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => this.embedOne(text));
  }

  embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.dimensions);
    for (const term of matchTerms(text)) {
      const hash = fnv1a(term, 0);
      const sign = fnv1a(term, 0x9e3779b9) & 1 ? 1 : -1;
      vector[hash % this.dimensions]! += sign;
    }
    let norm = 0;
    for (const value of vector) norm += value * value;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
    return vector;
  }
}
