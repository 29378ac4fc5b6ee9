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

const LATIN_NAME = /\b[A-Z][\p{L}'-]+(?:\s+[A-Z][\p{L}'-]+)*/gu;
const NOT_NAMES = new Set(['I', 'The', 'A', 'An', 'My', 'Your', 'What', 'When', 'Where', 'Who', 'How', 'Why', 'Please', 'OK', 'Yes', 'No', 'Remember', 'Can', 'Do', 'Is']);

/** Entities by pattern: capitalised Latin names, and Chinese names after 叫 / 是 markers. */
export function extractEntities(text: string): string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(LATIN_NAME)) {
    const name = match[0].split(/\s+/u).filter((part) => !NOT_NAMES.has(part)).join(' ');
    if (name.length > 1) found.add(name);
  }
  for (const match of text.matchAll(/(?:叫|名叫|叫做)([\p{Script=Han}]{2,4})/gu)) found.add(match[1]!);
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
