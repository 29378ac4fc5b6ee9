/**
 * How the offline model reads what people say (docs/design.md §4): which lines are statements,
 * which statements are first-person facts, corrections, requests or acknowledgements, and the topic
 * a fact is about. Shared by the answerer, the summariser and the memory extractors.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { hasCjk, slugify } from '../core/text.js';
import { messageText } from '../core/tokens.js';
import { MY_NOUNS_ZH } from './offline-entities.js';

/** The non-empty texts of messages, in order. */
export function speakerLines(messages: readonly BaseMessage[]): string[] {
  return messages.map((message) => messageText(message)).filter((text) => text.trim().length > 0);
}

/** A sentence that only acknowledges ("ok", "好的"): nothing to keep. */
export const ACKNOWLEDGEMENT = /^(ok|okay|sure|got it|noted|好的|好|嗯|收到|明白|没问题)[.!。！,，]?$/iu;
/** A "Human:" / "AI:" … prefix of a transcript line. */
export const SPEAKER_PREFIX = /^(human|ai|user|assistant|tool|system)\s*:\s*/iu;

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
/** An English statement about the speaker ("my …", "I live …", "we have …"). */
export const FIRST_PERSON_EN =
  /\b(?:my|I'm|I am|I've|I have|I had|I live|I lived|I prefer|I like|I love|I hate|I don't|I do not|I never|I always|I usually|I only|I still|I just|I use|I own|I work|I take|I drink|I eat|I moved|I switched|we're|we are|we have|we've|our)\b|\ballergic\b/iu;
// 我 as the subject (not the object of 帮/给/教 …), with a marker of a fact about the speaker.
const NOT_OBJECT = '(?:^|[^帮给教让叫跟和对替为向问诉])';
/** A Chinese statement about the speaker. */
export const FIRST_PERSON_ZH = new RegExp(
  `${NOT_OBJECT}我(?:家|们家|的)|${NOT_OBJECT}我.{0,8}?(?:是|有|住|搬|喜欢|爱|讨厌|过敏|不吃|不喝|吃素|用|叫|姓|养|每次|总是|一直|从来|习惯|${MY_NOUNS_ZH}|爸妈)`,
  'u',
);
/** A request or thanks, not a statement of fact. */
export const REQUEST =
  /^(?:please|could you|can you|would you|let's|add|put|help|tell me|remind me|thanks|thank you)\b|^(?:请|帮我|麻烦|给我|告诉我|谢谢)/iu;
const QUESTION =
  /[?？]$|[吗呢][。！]?$|^(?:what|how|which|why|when|where|who|whose|can|could|should|would|do|does|did|is|are|will|shall)\b/iu;
/** Words that correct or change an earlier value. */
export const CORRECTION =
  /\b(?:actually|now|no longer|anymore|chang(?:e|ed)|moved|switched|instead|back to|again|correction|cancell?ed)\b|其实|现在|改|换|搬|又|不再|取消|变成|更正/iu;
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

/** What a fact is about: its name (a memory's file name), whether it holds one value at a time. */
export interface Topic {
  name: string;
  single: boolean;
  /** A table topic's pattern, to recognise the same topic under another existing name. */
  pattern?: RegExp;
}

/** The topic of a name (a table topic when the name is one of theirs); undefined for an empty name. */
export const named = (name: string | undefined, single: boolean): Topic | undefined => {
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
export function topicOf(sentence: string): Topic | undefined {
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
export function statementOf(sentence: string): string | undefined {
  if (!QUESTION.test(sentence)) return sentence;
  const clauses = sentence.split(/(?<=[，,])\s*/u);
  const kept = clauses
    .slice(0, -1)
    .filter((_clause, i, all) => !all.slice(0, i + 1).some((c) => QUESTION.test(c.replace(/[，,]$/u, ''))));
  return kept.length > 0 ? kept.join('').replace(/[，,]\s*$/u, '') : undefined;
}
