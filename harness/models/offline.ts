/**
 * The offline reference model and hashed embedder (docs/design.md §4): deterministic, no network,
 * and blind to gold data by construction: it only ever receives the messages of a request.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { messageText, roleOf, TokenCounter } from '../core/tokens.js';
import {
  contentWords,
  hasCjk,
  matchTerms,
  normalizeText,
  sentences,
  shortenText,
  slugify,
  termSet,
  withoutLeadingNote,
} from '../core/text.js';
import { parseExtractMemoriesPrompt, parseSummarizePrompt } from '../core/prompts.js';
import type { ChatModel, ChatRequest, ChatResponse, Embedder } from './types.js';
import { fnv1a } from '../core/hash.js';
import { MembenchError } from '../core/errors.js';
import { boundedMemo, MEMO_CHARS } from '../core/memo.js';

const DEFAULT_SUMMARY_TOKENS = 256;

/** A term's weight in the question: longer terms say more than short ones. */
const termWeight = (term: string): number => 1 + Math.min(term.length, 8) / 8;

/**
 * The answerer declines when no sentence covers at least this share of the question's weighted
 * terms: below it the best match is about something else (an abstention question about an oven
 * brand must not be answered with the sentence about the pot).
 */
export const DECLINE_BELOW = 0.2;

/**
 * Sentences whose score is at least this share of the best one count as answering the question
 * equally well; among them the most recent is quoted (after a correction, the new value).
 */
export const RECENT_WITHIN = 0.75;

/** The share of the question's weighted terms a sentence holds (0..1); questions answer nothing. */
function answerScore(questionTerms: ReadonlySet<string>, questionWeight: number, sentence: string): number {
  if (/[?？]\s*$/u.test(sentence) || questionWeight === 0) return 0;
  let shared = 0;
  for (const term of termSet(sentence)) if (questionTerms.has(term)) shared += termWeight(term);
  return shared / questionWeight;
}

function speakerLines(messages: readonly BaseMessage[]): string[] {
  return messages.map((message) => messageText(message)).filter((text) => text.trim().length > 0);
}

/** A sentence a summary may keep, with how much it matters and the topic it states a value of. */
interface SummaryFact {
  text: string;
  salience: number;
  topic?: string;
}

const NUMBER = /\d|[一二两三四五六七八九十百千万]+(?:个|口|位|斤|两|点|号|月|岁|天|次|块|张|朵)/u;
const DATE_WORD =
  /\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december|today|tomorrow|yesterday|tonight|weekend)\b|周[一二三四五六日末]|星期|今天|明天|昨天|上周|下周/iu;

/**
 * How much a statement is worth keeping in a summary: a first-person fact or preference of the
 * user's most (2), a correction more (+1), numbers, dates and names a little (+0.5 each);
 * chit-chat scores low and questions 0 (they are kept only when there is room).
 */
function salienceOf(statement: string, fromUser: boolean): number {
  let score = 0.25;
  if (fromUser && (FIRST_PERSON_EN.test(statement) || FIRST_PERSON_ZH.test(statement))) score += 2;
  if (CORRECTION.test(statement)) score += 1;
  if (NUMBER.test(statement)) score += 0.5;
  if (DATE_WORD.test(statement)) score += 0.5;
  if (extractEntities(statement).length > 0) score += 0.5;
  if (REQUEST.test(statement)) score = Math.min(score, 0.5);
  return score;
}

/** Later copies win: a fact repeated keeps its latest position. */
function dedupeFacts(facts: readonly SummaryFact[]): SummaryFact[] {
  const seen = new Set<string>();
  const out: SummaryFact[] = [];
  for (let i = facts.length - 1; i >= 0; i--) {
    const key = normalizeText(facts[i]!.text);
    if (seen.has(key)) continue;
    seen.add(key);
    out.unshift(facts[i]!);
  }
  return out;
}

/** The most salient facts that fit the budget (ties: the more recent), in their original order. */
function keepSalient(facts: readonly SummaryFact[], budget: number, counter: TokenCounter): string[] {
  const order = facts
    .map((fact, index) => ({ fact, index }))
    .sort((a, b) => b.fact.salience - a.fact.salience || b.index - a.index);
  const kept = new Set<number>();
  let used = 0;
  for (const { fact, index } of order) {
    const cost = counter.countText(fact.text) + 1;
    if (used + cost > budget) continue;
    kept.add(index);
    used += cost;
  }
  return facts.filter((_, index) => kept.has(index)).map((fact) => fact.text);
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
      case 'extract-memories':
        return JSON.stringify(
          extractMemories(
            messages
              .filter((m) => roleOf(m) !== 'system')
              .map(messageText)
              .join('\n'),
          ),
        );
      case 'extract-facts':
        return JSON.stringify(
          extractFacts(
            messages
              .filter((m) => roleOf(m) !== 'system')
              .map(messageText)
              .join('\n'),
          ),
        );
      case 'judge':
        // Judging reads gold answers, which the reference model must never see: the offline judge is rules (harness/core/judge-rules.ts).
        throw new MembenchError('NOT_SUPPORTED', 'the offline model does not judge answers: use --judge offline');
    }
  }

  /**
   * Quotes the context sentence that best answers the question: every statement (the statement
   * part of a question included) is scored by the share of the question's weighted terms it
   * holds; below DECLINE_BELOW it declines; among the sentences within RECENT_WITHIN of the best
   * score the most recent is quoted, so a corrected value wins over the old one. A question that
   * offers answers to choose from is answered with one of them (`choose`).
   */
  private answer(messages: readonly BaseMessage[]): string {
    const question = messages.at(-1);
    if (!question) return '';
    const asked = readQuestion(withoutLeadingNote(messageText(question)));
    const questionTerms = termSet(asked.question);
    let questionWeight = 0;
    for (const term of questionTerms) questionWeight += termWeight(term);
    const context = messages.slice(0, -1).filter((message) => roleOf(message) !== 'system' || !isInstruction(message));
    const scored: { sentence: string; score: number }[] = [];
    for (const line of speakerLines(context)) {
      for (const raw of sentences(line)) {
        const sentence = statementOf(raw.replace(SPEAKER_PREFIX, '')) ?? '';
        const score = sentence ? answerScore(questionTerms, questionWeight, sentence) : 0;
        if (score > 0) scored.push({ sentence, score });
      }
    }
    const best = Math.max(0, ...scored.map((item) => item.score));
    const found =
      best < DECLINE_BELOW ? undefined : scored.findLast((item) => item.score >= best * RECENT_WITHIN)!.sentence;
    if (asked.choices.length >= 2) {
      const chosen = choose(asked.choices, found);
      if (chosen !== undefined) return chosen;
    }
    return found ?? (hasCjk(asked.question) ? '我不知道。' : "I don't know.");
  }

  private reply(messages: readonly BaseMessage[]): string {
    const last = messages.at(-1);
    const text = last ? messageText(last) : '';
    return hasCjk(text) ? '好的。' : 'OK.';
  }

  /**
   * An extractive running summary that keeps what matters: every sentence of the previous
   * summary and the new lines is scored by salience (`salience`), a statement about a topic
   * that it corrects (or that holds one value at a time: where I live, how many we are)
   * replaces the earlier statement about the same topic, and the most salient sentences that fit
   * the budget are kept (ties: the more recent), in conversation order.
   */
  private summarize(messages: readonly BaseMessage[], budget: number): string {
    const prompt = messages
      .filter((message) => roleOf(message) !== 'system')
      .map(messageText)
      .join('\n');
    const { previousSummary, newLines } = parseSummarizePrompt(prompt);
    const facts: SummaryFact[] = [];
    const add = (line: string, fromUser: boolean): void => {
      for (const raw of sentences(line)) {
        const fact = sentenceFact(`${fromUser ? 'u' : 'a'}${raw}`);
        if (fact === null) continue;
        if (fact.replaces) {
          for (let i = facts.length - 1; i >= 0; i--) if (facts[i]!.topic === fact.fact.topic) facts.splice(i, 1);
        }
        facts.push(fact.fact);
      }
    };
    // The previous summary holds what was already judged worth keeping: its facts stay the user's.
    // (A fold that found a newer summary passes the lines first, as the older information.)
    for (const line of previousSummary.split('\n'))
      add(line.replace(SPEAKER_PREFIX, ''), !/^(ai|assistant|tool|system)\s*:/iu.test(line));
    for (const line of newLines.split('\n')) add(line.replace(SPEAKER_PREFIX, ''), /^(human|user)\s*:/iu.test(line));
    return keepSalient(dedupeFacts(facts), budget, this.counter).join(' ');
  }
}

/**
 * What one sentence of a summarize prompt adds (key: "u" or "a" for who said it, then the
 * sentence): the fact kept (null: none), and whether it replaces the earlier facts of its topic.
 * A pure function of the sentence, memoised (its facts are shared, never changed): every fold re-reads the previous summary's sentences, and entity
 * drafts fold the same lines into several entities.
 */
const sentenceFact = boundedMemo(MEMO_CHARS.sentences, (key): { fact: SummaryFact; replaces: boolean } | null => {
  const fromUser = key.startsWith('u');
  const raw = key.slice(1);
  if (ACKNOWLEDGEMENT.test(raw) || matchTerms(raw).length === 0) return null;
  const statement = statementOf(raw);
  if (!statement) return { fact: { text: raw, salience: 0 }, replaces: false };
  const salience = salienceOf(statement, fromUser);
  const topic = salience >= 2 ? topicOf(statement) : undefined;
  return {
    fact: { text: statement, salience, ...(topic ? { topic: topic.name } : {}) },
    replaces: topic !== undefined && (topic.single || CORRECTION.test(statement)),
  };
});

/** "(a) …", "(b) …" marks of the answers a question offers. */
const CHOICE_MARK = /\(([a-h])\)\s*/gu;

/**
 * A question as the offline answerer reads it: the question itself (up to its question mark, when
 * more text follows: a hint or a choice is instruction, not what is asked about) and the answers it
 * offers as "(a) … (b) …", in order (none when it offers no choice).
 */
export function readQuestion(text: string): { question: string; choices: string[] } {
  const marks: RegExpExecArray[] = [];
  for (const mark of text.matchAll(CHOICE_MARK)) {
    if (mark[1] === String.fromCharCode(97 + marks.length)) marks.push(mark);
    else if (marks.length >= 2) break;
  }
  const choices =
    marks.length >= 2
      ? marks.map((mark, i) =>
          text
            .slice(mark.index + mark[0].length, marks[i + 1]?.index ?? text.length)
            .trim()
            .replace(/\s*[.;,]$/u, ''),
        )
      : [];
  const mark = text.indexOf('?');
  const end =
    mark >= 0 && text.slice(mark + 1).trim() !== '' ? mark + 1 : choices.length > 0 ? marks[0]!.index : text.length;
  return { question: text.slice(0, end).trim(), choices };
}

/** An offered answer that says the conversation does not tell. */
const NOT_TOLD =
  /\b(not mentioned|no information|not (?:said|stated|in the conversation)|cannot be answered|unknown)\b/iu;

/**
 * The offered answer a found sentence supports (at least half of the answer's content words in
 * it), or, when none is supported or nothing was found, the answer saying the conversation does not
 * tell; undefined when no offered answer fits.
 */
function choose(choices: readonly string[], found: string | undefined): string | undefined {
  const notTold = choices.find((choice) => NOT_TOLD.test(choice));
  if (found !== undefined) {
    const said = new Set(contentWords(found));
    const supported = choices.find((choice) => {
      if (choice === notTold) return false;
      const wanted = contentWords(choice);
      if (wanted.length === 0) return normalizeText(found).includes(normalizeText(choice));
      return wanted.filter((word) => said.has(word)).length * 2 >= wanted.length;
    });
    if (supported !== undefined) return supported;
  }
  return notTold;
}

function isInstruction(message: BaseMessage): boolean {
  return roleOf(message) === 'system' && messageText(message).startsWith('Answer the last question');
}

const LATIN_NAME = /\b[A-Z][\p{L}'’-]+(?:\s+[A-Z][\p{L}'’-]+)*/gu;
const NOT_NAMES = new Set(
  (
    'I The A An My Your What When Where Who How Why Please OK Yes No Remember Can Do Is ' +
    'We You He She It They Hi Hello Hey Oh And But So Then Also Just Let Here There This That If For By Of In On At To With ' +
    'Nice Good Great Sure Thanks Thank Sorry Fine Perfect Lovely Noted Okay Got Sounds Well Right Done Not ' +
    'Any Anything Some Most All Every Each Both First Next Last Once After Before Now Later ' +
    'Should Could Would Will Shall Does Did Are Was Were Which Be Have Has ' +
    'Human AI Tool User Assistant System'
  ).split(' '),
);
/** Things people talk about as "my X" / "我的X": family, pets, belongings, plans. */
const MY_NOUNS_EN =
  'son|daughter|kids?|children|wife|husband|partner|mother|mom|mum|father|dad|parents|brother|sister|friend|boss|cat|dog|flight|car|oven|pot|coffee|address';
const MY_NOUNS_ZH =
  '儿子|女儿|孩子|老婆|老公|妻子|丈夫|父母|爸爸|妈妈|哥哥|姐姐|弟弟|妹妹|朋友|同事|老板|猫|狗|航班|车|锅|烤箱|地址';
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
  // Summaries re-read the sentences they keep at every fold: memoised (a copy: callers own the list).
  return [...(text.length <= ENTITY_MEMO_CHARS ? entitiesOfShort(text) : entitiesOf(text))];
}

/** Texts up to this long have their entities memoised (sentences; whole prompts are not kept). */
const ENTITY_MEMO_CHARS = 2048;
const entitiesOfShort = boundedMemo(MEMO_CHARS.sentences, (text) => entitiesOf(text));

function entitiesOf(text: string): readonly string[] {
  const found = new Set<string>();
  for (const match of text.matchAll(LATIN_NAME)) {
    const name = match[0]
      .split(/\s+/u)
      .filter((part) => !NOT_NAMES.has(part.replace(/['’].*$/u, '')))
      .join(' ');
    if (name.length > 1) found.add(name);
  }
  for (const match of text.matchAll(/\b(?:called|named)\s+([\p{L}][\p{L}'-]+)/giu)) found.add(match[1]!);
  for (const match of text.matchAll(new RegExp(`\\bmy\\s+(${MY_NOUNS_EN})\\b`, 'giu')))
    found.add(match[1]!.toLowerCase());
  for (const pattern of ZH_PATTERNS) {
    for (const match of text.matchAll(pattern)) if (!ZH_NOT_THING.test(match[1]!)) found.add(match[1]!);
  }
  return [...found];
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

// ---- extract-memories: durable first-person facts, one memory per topic ----

/**
 * Topics with fixed names in both languages, so a statement and its later correction land in
 * the same file whatever the wording. `single`: one value at a time (a new statement replaces).
 */
const TOPICS: readonly { en: string; zh: string; single: boolean; pattern: RegExp }[] = [
  { en: 'allergy', zh: '过敏', single: false, pattern: /allerg|过敏/iu },
  {
    en: 'home-city',
    zh: '住址',
    single: true,
    pattern:
      /\b(?:I live|I'm (?:living|moving)|I am (?:living|moving)|I(?: have|'ve)? moved|moved back|my (?:home|address|city))\b|住在|住址|搬到|搬回|搬家|家住/iu,
  },
  {
    en: 'headcount',
    zh: '人数',
    single: true,
    pattern:
      /\bfamily of \w+|\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+) (?:of us|people|guests)\b|[一二两三四五六七八九十\d]+(?:口人|个人|位客人)/iu,
  },
  { en: 'flight', zh: '航班', single: true, pattern: /\bmy flight\b|航班/iu },
  { en: 'coffee', zh: '咖啡', single: false, pattern: /\bmy coffee\b|咖啡/iu },
  {
    en: 'diet',
    zh: '饮食',
    single: false,
    pattern: /\b(?:vegetarian|vegan|I (?:don't|do not|never) eat)\b|吃素|素食/iu,
  },
];
const FIRST_PERSON_EN =
  /\b(?:my|I'm|I am|I've|I have|I had|I live|I lived|I prefer|I like|I love|I hate|I don't|I do not|I never|I always|I usually|I only|I still|I just|I use|I own|I work|I take|I drink|I eat|I moved|I switched|we're|we are|we have|we've|our)\b|\ballergic\b/iu;
// 我 as the subject (not the object of 帮/给/教 …), with a marker of a fact about the speaker.
const NOT_OBJECT = '(?:^|[^帮给教让叫跟和对替为向问诉])';
const FIRST_PERSON_ZH = new RegExp(
  `${NOT_OBJECT}我(?:家|们家|的)|${NOT_OBJECT}我.{0,8}?(?:是|有|住|搬|喜欢|爱|讨厌|过敏|不吃|不喝|吃素|用|叫|姓|养|每次|总是|一直|从来|习惯|${MY_NOUNS_ZH}|爸妈)`,
  'u',
);
const REQUEST =
  /^(?:please|could you|can you|would you|let's|add|put|help|tell me|remind me|thanks|thank you)\b|^(?:请|帮我|麻烦|给我|告诉我|谢谢)/iu;
const QUESTION =
  /[?？]$|[吗呢][。！]?$|^(?:what|how|which|why|when|where|who|whose|can|could|should|would|do|does|did|is|are|will|shall)\b/iu;
const CORRECTION =
  /\b(?:actually|now|no longer|anymore|chang(?:e|ed)|moved|switched|instead|back to|again|correction|cancell?ed)\b|其实|现在|改|换|搬|又|不再|取消|变成|更正/iu;
/** Index descriptions written offline: the first sentence, short (the index is loaded on every turn). */
const DESCRIPTION_CHARS = 100;
/** A closing "too" / "as well": the statement adds to what the memory says, whatever the topic (也 is too ambiguous). */
const ADDITION = /\b(?:too|as well)\W*$/iu;
const PRONOUN = /\b(?:it|that|this)\b|它|那个/iu;
const NP_SKIP = new Set(
  'the a an one only just some any this that these those our my your own very two three four'.split(' '),
);
const NP_STOP = new Set(
  (
    'is are was were be been am has have had do does did i you he she it we they me us them to with in on at for from of by and or but so ' +
    "which who when while as than then now again back can could will would should may might must not no doesn't don't isn't " +
    'likes loves hates prefers eats drinks lives works goes takes uses wants needs moved changed switched started joined joining coming going trying got'
  ).split(' '),
);
const HAN_RUN = '[\\p{Script=Han}]{1,4}?';
const ZH_END_MEMORY = '(?=[，。！？、；,.!?;\\s的了吧吗呢]|$)';
const ZH_KIN = new RegExp(`我(?:的|家|们家)?(${MY_NOUNS_ZH}|爸妈)`, 'u');
const ZH_OWN = new RegExp(
  `我(?:家|们家)?(?:只|还|也|就|都)?有(?:[一二两三四五六七八九十几\\d]+)?[口个只台辆把件位条张本部套]?(${HAN_RUN})${ZH_END_MEMORY}`,
  'u',
);
const ZH_ATTRIBUTE = new RegExp(`我(?:的|最喜欢的|最爱的)(${HAN_RUN})(?:是|在|改|换)`, 'u');

/** Up to three words of a noun phrase at the start of `text` ("the only pot I have" → "pot"), lower case. */
function nounPhrase(text: string): string | undefined {
  const kept: string[] = [];
  for (const token of text.split(/\s+/u)) {
    const word = token.toLowerCase().replace(/^[^\p{L}\p{N}]+/u, '');
    const clean = word.replace(/(?:'s)?[^\p{L}\p{N}-]*$/u, '');
    if (!clean) break;
    if (kept.length === 0 && (NP_SKIP.has(clean) || /^\d+$/u.test(clean))) {
      if (clean !== word) break;
      continue;
    }
    if (NP_STOP.has(clean)) break;
    kept.push(clean);
    if (kept.length === 3 || clean !== word) break; // punctuation or a possessive ends the phrase
  }
  return kept.length > 0 ? kept.join(' ') : undefined;
}

interface Topic {
  name: string;
  single: boolean;
  /** A table topic's pattern, to recognise the same topic under another existing name. */
  pattern?: RegExp;
}

const named = (name: string | undefined, single: boolean): Topic | undefined => {
  const slug = name === undefined ? undefined : slugify(name) || undefined;
  const table = TOPICS.find((topic) => topic.en === slug || topic.zh === slug);
  if (table) return { name: slug!, single: table.single, pattern: table.pattern };
  return slug ? { name: slug, single } : undefined;
};

/**
 * The topic a fact is about, from its wording alone: a table topic (allergy, home city, head
 * count …), else "my X" / 我(的)X, else the subject of "X is …", else the object of "I have X" /
 * 我有X. Undefined when none is found (the caller may fall back to content words).
 */
function topicOf(sentence: string): Topic | undefined {
  const zh = hasCjk(sentence);
  const table = TOPICS.find((topic) => topic.pattern.test(sentence));
  if (table) return { name: zh ? table.zh : table.en, single: table.single, pattern: table.pattern };
  if (zh) {
    const attribute = ZH_ATTRIBUTE.exec(sentence);
    if (attribute) return named(`${/我最/u.test(attribute[0]) ? '最喜欢的' : ''}${attribute[1]!}`, true);
    return named(ZH_KIN.exec(sentence)?.[1] ?? ZH_OWN.exec(sentence)?.[1], false);
  }
  for (const match of sentence.matchAll(/\bmy\s+/giu)) {
    const phrase = nounPhrase(sentence.slice(match.index + match[0].length));
    if (!phrase) continue;
    const rest = sentence.slice(match.index + match[0].length + phrase.length);
    return named(phrase, /favou?rite/iu.test(phrase) || /^\s*(?:is|are)\b/iu.test(rest));
  }
  const subject = /^(.*?)\b(?:is|are|was|were)\b/iu.exec(sentence)?.[1];
  if (subject && !/^\s*(?:\w+,\s*)?(?:i|it|we|you|he|she|they|that|this|there|what|which)\b/iu.test(subject)) {
    const topic = named(nounPhrase(subject.replace(/^\s*\w+,\s*/u, '')), true);
    if (topic) return topic;
  }
  const owned = /\b(?:I|we)(?:'ve| have| only have| still have| also have| own| use| got|'ve got)\s+/iu.exec(sentence);
  return owned ? named(nounPhrase(sentence.slice(owned.index + owned[0].length)), false) : undefined;
}

/** The statement part of a sentence: a question's leading clauses ("我家只有一口铸铁锅，可以用它来炖吗？"), else the sentence. */
function statementOf(sentence: string): string | undefined {
  if (!QUESTION.test(sentence)) return sentence;
  const clauses = sentence.split(/(?<=[，,])\s*/u);
  const kept = clauses
    .slice(0, -1)
    .filter((_clause, i, all) => !all.slice(0, i + 1).some((c) => QUESTION.test(c.replace(/[，,]$/u, ''))));
  return kept.length > 0 ? kept.join('').replace(/[，,]\s*$/u, '') : undefined;
}

/**
 * The offline `extract-memories` task: first-person factual user sentences (skipping questions,
 * requests and acknowledgements), grouped by topic into memories. A topic that an index line
 * already covers reuses that memory's name; a correction ("actually", "moved", 又, 改 …) or a
 * single-valued topic replaces the old content, anything else is appended to the related body
 * shown in the prompt. Sentences with only a pronoun ("It's back to Tuesday") are kept when they
 * correct a memory the assistant's reply names ("your flight"). Deterministic; sees only messages.
 */
export function extractMemories(
  prompt: string,
): { name: string; description: string; content: string; type: 'user' }[] {
  const input = parseExtractMemoriesPrompt(prompt);
  const index = input.indexLines
    .map((line) => /^- \[([^\]]+)\]\([^)]*\) — (.*)$/u.exec(line))
    .flatMap((m) => (m ? [{ name: m[1]!, description: m[2]! }] : []));
  // A body missing from the related section is shown in full by its index line.
  const related = new Map(
    index.filter((entry) => !entry.description.endsWith('…')).map((entry) => [entry.name, entry.description]),
  );
  for (const memory of input.related) related.set(memory.name, memory.body);
  const replyTopic = named(
    /\byour\s+(.+)/iu.exec(input.reply)?.[1]?.split(/\s+(?:is|are|was|has)\b/iu)[0] ??
      /你的(\p{Script=Han}{1,4}?)(?:是|在|改|换|已|又|还|了|，|。)/u.exec(input.reply)?.[1],
    true,
  );
  const groups = new Map<string, { sentences: string[]; replace: boolean; cjk: boolean }>();
  for (const line of input.userMessages) {
    for (const raw of sentences(line.replace(/[’]/gu, "'"))) {
      const sentence = statementOf(raw);
      if (!sentence || REQUEST.test(sentence) || ACKNOWLEDGEMENT.test(sentence)) continue;
      let topic: Topic | undefined;
      if (FIRST_PERSON_EN.test(sentence) || FIRST_PERSON_ZH.test(sentence)) {
        topic =
          topicOf(sentence) ??
          named(
            contentWords(sentence)
              .filter((word) => !word.includes("'"))
              .slice(0, 3)
              .join('-'),
            false,
          );
      } else if (
        CORRECTION.test(sentence) &&
        PRONOUN.test(sentence) &&
        replyTopic &&
        index.some((entry) => entry.name === replyTopic.name)
      ) {
        topic = replyTopic;
      }
      if (!topic) continue;
      const existing =
        index.find((entry) => entry.name === topic.name) ??
        (topic.pattern ? index.find((entry) => topic.pattern!.test(entry.description)) : undefined);
      const name = existing?.name ?? topic.name;
      const group = groups.get(name) ?? { sentences: [], replace: false, cjk: false };
      group.sentences.push(sentence);
      group.replace ||= (topic.single && !ADDITION.test(sentence)) || CORRECTION.test(sentence);
      group.cjk ||= hasCjk(sentence);
      groups.set(name, group);
    }
  }
  const out: { name: string; description: string; content: string; type: 'user' }[] = [];
  for (const [name, group] of groups) {
    const joined = group.sentences.join(group.cjk ? '' : ' ');
    const body = related.get(name);
    if (body !== undefined && normalizeText(body).includes(normalizeText(joined))) continue; // nothing new
    const content = body !== undefined && !group.replace ? `${body}${group.cjk ? '' : ' '}${joined}` : joined;
    // The description: a replacement's last sentence (the new value), else the memory's first sentence.
    const shown = group.replace ? group.sentences.at(-1)! : (sentences(content)[0] ?? content);
    out.push({ name, description: shortenText(shown, DESCRIPTION_CHARS), content, type: 'user' });
  }
  return out;
}

/**
 * The offline `extract-facts` task (a peer's fact extraction, as mem0 asks for it): every
 * statement in the user's message(s) of an extract-memories prompt, one fact per sentence, about
 * anyone (not only the user); questions keep their statement part, requests and acknowledgements
 * are dropped, repeats kept once. Deterministic; sees only the messages.
 */
export function extractFacts(prompt: string): string[] {
  const facts: string[] = [];
  for (const line of parseExtractMemoriesPrompt(prompt).userMessages) {
    for (const raw of sentences(line)) {
      const sentence = statementOf(raw.trim());
      if (!sentence || REQUEST.test(sentence) || ACKNOWLEDGEMENT.test(sentence) || matchTerms(sentence).length === 0)
        continue;
      if (!facts.some((fact) => normalizeText(fact) === normalizeText(sentence))) facts.push(sentence);
    }
  }
  return facts;
}
