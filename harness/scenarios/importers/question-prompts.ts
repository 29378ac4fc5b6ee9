/**
 * How an imported LoCoMo question is put to the model (docs/datasets.md): its temporal questions
 * (category 2) with a hint to answer with a date worked out from the sessions' dates, its
 * adversarial questions (category 5) as a choice between "Not mentioned in the conversation" and
 * the adversarial answer, as LoCoMo's evaluate_gpts.py poses them. The wording is membench's own;
 * `--question-prompts FILE` (YAML, a template per kind) replaces it, so the original templates can
 * be plugged in without being shipped.
 */
import { fnv1a } from '../../core/hash.js';
import { MembenchError } from '../../core/errors.js';
import { parseMappingText, readBoundedText, type Problem } from '../load.js';
import { finishTemplates } from '../templates-file.js';

/** The kinds of question that get a template, and the placeholders each may use. */
export const QUESTION_KINDS = {
  temporal: ['question'],
  adversarial: ['question', 'a', 'b'],
} as const;
export type QuestionKind = keyof typeof QUESTION_KINDS;

/** The option an adversarial question offers beside the adversarial answer (LoCoMo's; its scoring credits "not mentioned"). */
export const NOT_MENTIONED = 'Not mentioned in the conversation';

/** membench's own wording (never a paper's text: plug that in with --question-prompts). */
export const MEMBENCH_QUESTION_PROMPTS: Readonly<Record<QuestionKind, string>> = {
  temporal:
    "{{question}} Give the date, working it out from the dates of the conversation's sessions; an approximate date is fine.",
  adversarial: '{{question}} Choose one answer: (a) {{a}} (b) {{b}}.',
};

/** The templates an import uses, and where they came from. */
export interface QuestionPrompts {
  templates: Readonly<Record<QuestionKind, string>>;
  /** `membench`, or the file (with the kinds it did not give: `FILE + membench (temporal)`). */
  source: string;
}

export const MEMBENCH_QUESTION_PROMPT_SET: QuestionPrompts = {
  templates: MEMBENCH_QUESTION_PROMPTS,
  source: 'membench',
};

/** A template with its placeholders filled. */
export function fillQuestion(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{\s*([a-z]+)\s*\}\}/gu, (whole, name: string) => values[name] ?? whole);
}

/** The temporal question as asked. */
export function temporalAsk(prompts: QuestionPrompts, question: string): string {
  return fillQuestion(prompts.templates.temporal, { question });
}

/**
 * The adversarial question as asked, and its choices in their order. LoCoMo's code draws the order
 * with an unseeded coin per question; here the coin is a hash of `key` (the question's place in
 * the file), so an import always asks the same.
 */
export function adversarialAsk(
  prompts: QuestionPrompts,
  question: string,
  adversarialAnswer: string,
  key: string,
): { ask: string; choices: [string, string] } {
  const choices: [string, string] =
    (fnv1a(key) >>> 16) & 1 ? [adversarialAnswer, NOT_MENTIONED] : [NOT_MENTIONED, adversarialAnswer];
  return { ask: fillQuestion(prompts.templates.adversarial, { question, a: choices[0], b: choices[1] }), choices };
}

const PROMPTS_DOCUMENT = {
  noun: 'question prompts file',
  holds: `a template per kind of question (${Object.keys(QUESTION_KINDS).join(', ')})`,
};

/** Checks a question prompts file's text: every problem located as `file:line:col: path: message`. */
export function parseQuestionPromptsText(text: string, file: string): QuestionPrompts {
  const parsed = parseMappingText(text, file, PROMPTS_DOCUMENT);
  const problems: Problem[] = [...parsed.problems];
  const templates: Record<QuestionKind, string> = { ...MEMBENCH_QUESTION_PROMPTS };
  const given: QuestionKind[] = [];
  const kinds = Object.keys(QUESTION_KINDS) as QuestionKind[];
  let empty = false;
  if (parsed.value) {
    const { value, locate } = parsed;
    const fail = (key: string, at: { line: number; col: number }, message: string): number =>
      problems.push({ file, ...at, path: key, message, severity: 'error' });
    for (const [key, template] of Object.entries(value)) {
      if (!(kinds as string[]).includes(key)) {
        fail(key, locate.key([key]), `unknown kind of question "${key}" (known: ${kinds.join(', ')})`);
        continue;
      }
      const kind = key as QuestionKind;
      if (typeof template !== 'string' || template.trim().length === 0) {
        fail(key, locate.value([key]), 'expected a non-empty template (a string, e.g. a YAML block with |)');
        continue;
      }
      const known: readonly string[] = QUESTION_KINDS[kind];
      const used = [...template.matchAll(/\{\{\s*([^}]*?)\s*\}\}/gu)].map((match) => match[1]!);
      const unknown = used.find((name) => !known.includes(name));
      const missing = known.find((name) => !used.includes(name));
      const list = known.map((name) => `{{${name}}}`).join(', ');
      if (unknown !== undefined) fail(key, locate.value([key]), `unknown placeholder {{${unknown}}} (known: ${list})`);
      else if (missing !== undefined)
        fail(key, locate.value([key]), `the template never shows {{${missing}}}: a ${kind} template uses ${list}`);
      else {
        templates[kind] = template.trim();
        given.push(kind);
      }
    }
    empty = Object.keys(value).length === 0;
  }
  return finishTemplates({ file, document: PROMPTS_DOCUMENT, problems, empty, kinds, given, templates });
}

/** The largest question prompts file read: a few templates of a few lines each fit in far less. */
export const MAX_QUESTION_PROMPTS_BYTES = 256 * 1024;

/**
 * Reads `--question-prompts FILE` for an import of `dataset`: bounded in size, UTF-8, every problem
 * located. The templates word LoCoMo's questions only: for another dataset the file is refused (it
 * was read and then ignored, without a word).
 */
export async function loadQuestionPrompts(file: string, dataset: string): Promise<QuestionPrompts> {
  if (dataset !== 'locomo')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--question-prompts ${file}: the templates word LoCoMo's temporal and adversarial questions; ${dataset} asks its questions as the file writes them: drop --question-prompts`,
    );
  return parseQuestionPromptsText(await readBoundedText(file, MAX_QUESTION_PROMPTS_BYTES, PROMPTS_DOCUMENT), file);
}
