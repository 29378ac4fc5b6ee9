/**
 * The offline model's memory extraction: `extract-memories` (the durable first-person facts a
 * file-index memory keeps, one memory per topic) and `extract-facts` (a peer's fact extraction).
 */
import { parseExtractMemoriesPrompt } from '../core/prompts.js';
import { contentWords, hasCjk, matchTerms, normalizeText, sentences, shortenText } from '../core/text.js';
import {
  ACKNOWLEDGEMENT,
  CORRECTION,
  FIRST_PERSON_EN,
  FIRST_PERSON_ZH,
  named,
  REQUEST,
  statementOf,
  type Topic,
  topicOf,
} from './offline-statements.js';

/** Index descriptions written offline: the first sentence, short (the index is loaded on every turn). */
const DESCRIPTION_CHARS = 100;
/** A closing "too" / "as well": the statement adds to what the memory says, whatever the topic (也 is too ambiguous). */
const ADDITION = /\b(?:too|as well)\W*$/iu;
const PRONOUN = /\b(?:it|that|this)\b|它|那个/iu;

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
