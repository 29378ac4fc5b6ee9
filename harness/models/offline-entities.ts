/**
 * The offline model's entity extraction (docs/design.md §4): capitalised Latin names, "called X" /
 * "my X", and Chinese names, kin, places and objects by marker.
 */
import { boundedMemo, MEMO_CHARS } from '../core/memo.js';

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
/** The Chinese "我的X" nouns (also read by the statements' patterns). */
export const MY_NOUNS_ZH =
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
