/**
 * Datasets' own answer scoring, so a live run can stand beside published numbers: LoCoMo's token
 * F1 as its `task_eval/evaluation.py` computes it (snap-research/locomo): `normalize_answer`
 * (commas dropped, lower case, ASCII punctuation removed, the words a/an/the/and removed,
 * whitespace collapsed), Porter-stemmed tokens, F1 over token counts; multi-hop answers
 * (category 1) are split at commas and each gold part takes its best-matching predicted part;
 * open-domain gold (category 3) is cut at its first ";" (the importer does it); adversarial
 * questions (category 5) score 1 when the answer holds one of two abstention phrases.
 * Words are stemmed as NLTK's `PorterStemmer()` stems them in its default mode, as the Python code
 * does (`porter-nltk.ts`; the original Porter algorithm stems "one", "they", "day", "use"… apart).
 */
import { nltkPorterStem } from '../core/porter-nltk.js';

const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/gu;

/** LoCoMo's `normalize_answer`. */
export function locomoNormalize(text: string): string {
  const lowered = text.replace(/,/gu, '').toLowerCase().replace(PUNCTUATION, '');
  return lowered
    .replace(/\b(a|an|the|and)\b/gu, ' ')
    .split(/\s+/u)
    .filter((word) => word.length > 0)
    .join(' ');
}

function stems(text: string): string[] {
  return locomoNormalize(text)
    .split(' ')
    .filter((word) => word.length > 0)
    .map((word) => nltkPorterStem(word));
}

/** LoCoMo's `f1_score`: token F1 of the stemmed, normalised answer against one gold answer. */
export function tokenF1(prediction: string, gold: string): number {
  const predicted = stems(prediction);
  const truth = stems(gold);
  const counts = new Map<string, number>();
  for (const token of truth) counts.set(token, (counts.get(token) ?? 0) + 1);
  let same = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      same++;
      counts.set(token, left - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / predicted.length;
  const recall = same / truth.length;
  return (2 * precision * recall) / (precision + recall);
}

/** LoCoMo's `f1` for multi-hop answers: the mean over comma-separated gold parts of the best F1 against any predicted part. */
export function multiTokenF1(prediction: string, gold: string): number {
  const predictions = prediction.split(',').map((part) => part.trim());
  const truths = gold.split(',').map((part) => part.trim());
  return (
    truths.reduce((sum, truth) => sum + Math.max(...predictions.map((part) => tokenF1(part, truth))), 0) / truths.length
  );
}

/**
 * The answer a reply to a choice question gives, read as LoCoMo's evaluate_gpts.py reads it
 * (`get_cat_5_answer`): a reply of one character is a letter ("a" the first choice, any other the
 * second), a reply of three characters a letter in brackets ("(a)" the first, any other the
 * second); a longer reply is the answer as written. Without choices the reply is the answer.
 */
export function chosenAnswer(reply: string, choices: readonly string[] | undefined): string {
  if (choices === undefined || choices.length === 0) return reply;
  const said = reply.trim().toLowerCase();
  let letter: string | undefined;
  if (said.length === 1) letter = said;
  else if (said.length === 3) letter = /^\(([a-z])\)$/u.exec(said)?.[1];
  else return reply;
  const index = letter === undefined ? -1 : letter.charCodeAt(0) - 'a'.charCodeAt(0);
  return choices[index >= 0 && index < choices.length ? index : 1] ?? reply;
}

/** evaluation.py's category-5 check: the lower-cased answer holds one of these phrases. */
export const LOCOMO_ABSTENTION_PHRASES = ['no information available', 'not mentioned'] as const;

/** LoCoMo's adversarial score: 1 when the answer says the information is not there in one of evaluation.py's phrases, else 0. */
export function adversarialScore(prediction: string): number {
  const lowered = prediction.toLowerCase();
  return LOCOMO_ABSTENTION_PHRASES.some((phrase) => lowered.includes(phrase)) ? 1 : 0;
}

/** The dataset's own score of an answer under a probe's `scoring` (undefined for `contains`, or without gold where gold is needed). */
export function datasetScore(
  scoring: string | undefined,
  prediction: string,
  expect: readonly string[] | undefined,
): number | undefined {
  if (scoring === 'locomo-adversarial') return adversarialScore(prediction);
  const f1 = scoring === 'locomo-f1' ? tokenF1 : scoring === 'locomo-f1-multi' ? multiTokenF1 : undefined;
  if (!f1 || !expect || expect.length === 0) return undefined;
  return Math.max(...expect.map((gold) => f1(prediction, gold)));
}
