/**
 * What an LLM judge is asked (docs/judging.md): one prompt per question type, in the project's
 * own words, with `{{question}}`, `{{gold}}` and `{{response}}` placeholders; `--judge-prompts
 * FILE` (YAML, one template per type) replaces any of them, so a user can run a paper's official
 * prompts verbatim. Which type a probe is comes from its category and the dataset's label.
 */
import { JUDGE_TYPES, type JudgeItem, type JudgeType } from './judge-rules.js';
import { parseMappingText, readBoundedText, type Problem } from '../scenarios/load.js';
import type { ProbeRecord } from './schema.js';
import { finishTemplates } from '../scenarios/templates-file.js';

export const PLACEHOLDERS = ['question', 'gold', 'response'] as const;

const ENDING = 'Reply with exactly one word, yes or no.';

/** membench's own wording of each prompt (never a paper's text: plug those in with --judge-prompts). */
export const MEMBENCH_PROMPTS: Readonly<Record<JudgeType, string>> = {
  default: [
    'You check answers given by a chat assistant that relies on its memory of an earlier conversation.',
    '',
    'Question: {{question}}',
    'Reference answer: {{gold}}',
    "Assistant's answer: {{response}}",
    '',
    "Does the assistant's answer give the reference answer, or one that means the same? Extra detail that does not contradict it is fine. " +
      'An answer that is vague, gives only part of what is asked, or names something else is not correct.',
    ENDING,
  ].join('\n'),
  temporal: [
    'You check answers about dates and durations given by a chat assistant that relies on its memory of an earlier conversation.',
    '',
    'Question: {{question}}',
    'Reference answer: {{gold}}',
    "Assistant's answer: {{response}}",
    '',
    "Does the assistant's answer give the date, time or duration of the reference answer? Dates may be written in any format. " +
      'A count of days, weeks or months that is off by one still counts as correct; any larger difference, or a different date, does not.',
    ENDING,
  ].join('\n'),
  'knowledge-update': [
    'You check answers given by a chat assistant about something that changed during an earlier conversation.',
    '',
    'Question: {{question}}',
    'Reference (most recent) answer: {{gold}}',
    "Assistant's answer: {{response}}",
    '',
    "The reference answer is the latest value the user gave. Does the assistant's answer give that latest value as the current one? " +
      'It still counts when an earlier value is mentioned beside it, as long as the latest one is the answer; an answer that gives only an earlier value is not correct.',
    ENDING,
  ].join('\n'),
  preference: [
    "You check whether a chat assistant used what it remembers about a user's preferences.",
    '',
    'Request: {{question}}',
    'What a good response does (rubric): {{gold}}',
    "Assistant's response: {{response}}",
    '',
    "Does the assistant's response follow the rubric, drawing on the preferences the user stated earlier? " +
      'It need not cover every point; a generic response that ignores those preferences does not follow it.',
    ENDING,
  ].join('\n'),
  abstention: [
    'You check answers given by a chat assistant that relies on its memory of an earlier conversation. ' +
      'This question cannot be answered from that conversation: what it asks about was never said.',
    '',
    'Question: {{question}}',
    "Assistant's answer: {{response}}",
    '',
    'Does the assistant say that it does not know, or that the information is not available in the conversation, instead of giving an answer?',
    ENDING,
  ].join('\n'),
};

/** The prompt set a judge uses, and where it came from. */
export interface PromptSet {
  templates: Readonly<Record<JudgeType, string>>;
  /** `membench`, or `FILE` (with the types the file did not give: `FILE + membench (abstention)`). */
  source: string;
}

export const MEMBENCH_PROMPT_SET: PromptSet = { templates: MEMBENCH_PROMPTS, source: 'membench' };

/** Which prompt judges a probe: abstention by category, then the dataset's own label, then membench's category. */
export function judgeType(probe: Pick<ProbeRecord, 'category' | 'label'>): JudgeType {
  if (probe.category === 'abstention') return 'abstention';
  if (probe.label === 'single-session-preference') return 'preference';
  if (probe.label === 'knowledge-update' || probe.category === 'update') return 'knowledge-update';
  if (probe.label === 'temporal-reasoning' || probe.category === 'temporal') return 'temporal';
  return 'default';
}

/** What a judge needs of an answered probe's record (older files without gold get none: every answer is then judged against nothing). */
export function judgeItem(probe: ProbeRecord & { answer: string }): JudgeItem {
  return {
    type: judgeType(probe),
    question: probe.question,
    expect: probe.expect ?? [],
    forbid: probe.forbid ?? [],
    response: probe.answer,
  };
}

/** A template with its placeholders filled (several gold strings: any of them). */
export function fillPrompt(template: string, item: JudgeItem): string {
  const gold =
    item.expect.length > 0
      ? item.expect.join(' / ')
      : item.forbid.length > 0
        ? `(none: the question is unanswerable; an unsupported answer would be "${item.forbid.join(' / ')}")`
        : '(none: the question is unanswerable)';
  const values: Record<(typeof PLACEHOLDERS)[number], string> = {
    question: item.question,
    gold,
    response: item.response,
  };
  return template.replace(
    /\{\{\s*(question|gold|response)\s*\}\}/gu,
    (_, name: (typeof PLACEHOLDERS)[number]) => values[name],
  );
}

const PROMPTS_DOCUMENT = {
  noun: 'judge prompts file',
  holds: `one template per question type (${JUDGE_TYPES.join(', ')})`,
};

/** Checks a judge prompts file's text: every problem located as `file:line:col: path: message`. */
export function parsePromptsText(text: string, file: string): PromptSet {
  const parsed = parseMappingText(text, file, PROMPTS_DOCUMENT);
  const problems: Problem[] = [...parsed.problems];
  const templates: Record<JudgeType, string> = { ...MEMBENCH_PROMPTS };
  const given: JudgeType[] = [];
  let empty = false;
  if (parsed.value) {
    const { value, locate } = parsed;
    const fail = (key: string, at: { line: number; col: number }, message: string): number =>
      problems.push({ file, ...at, path: key, message, severity: 'error' });
    for (const [key, template] of Object.entries(value)) {
      if (!(JUDGE_TYPES as readonly string[]).includes(key)) {
        fail(key, locate.key([key]), `unknown question type "${key}" (known: ${JUDGE_TYPES.join(', ')})`);
        continue;
      }
      if (typeof template !== 'string' || template.trim().length === 0) {
        fail(key, locate.value([key]), 'expected a non-empty template (a string, e.g. a YAML block with |)');
        continue;
      }
      const unknown = [...template.matchAll(/\{\{\s*([^}]*?)\s*\}\}/gu)]
        .map((match) => match[1]!)
        .filter((name) => !(PLACEHOLDERS as readonly string[]).includes(name));
      if (unknown.length > 0)
        fail(
          key,
          locate.value([key]),
          `unknown placeholder {{${unknown[0]}}} (known: ${PLACEHOLDERS.map((name) => `{{${name}}}`).join(', ')})`,
        );
      else if (!/\{\{\s*response\s*\}\}/u.test(template))
        fail(
          key,
          locate.value([key]),
          'the template never shows the answer: put {{response}} where the judge should read it',
        );
      else {
        templates[key as JudgeType] = template;
        given.push(key as JudgeType);
      }
    }
    empty = Object.keys(value).length === 0;
  }
  return finishTemplates({ file, document: PROMPTS_DOCUMENT, problems, empty, kinds: JUDGE_TYPES, given, templates });
}

/**
 * A judge prompts file larger than this is refused: a template is filled and sent once per judged
 * answer, and 256 KiB is some 64 000 tokens per request, past what a judge prompt needs (a 30 MB
 * file held a run for minutes at gigabytes of memory).
 */
export const MAX_JUDGE_PROMPTS_BYTES = 256 * 1024;

/** Reads `--judge-prompts FILE` (UTF-8, at most MAX_JUDGE_PROMPTS_BYTES). */
export async function loadPrompts(file: string): Promise<PromptSet> {
  return parsePromptsText(await readBoundedText(file, MAX_JUDGE_PROMPTS_BYTES, PROMPTS_DOCUMENT), file);
}
