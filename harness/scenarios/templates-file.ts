/**
 * The end of reading a file of prompt templates (the judge's `--judge-prompts`, the dataset
 * questions' `--question-prompts`): every problem reported at once, located, and the kinds the file
 * leaves out named as membench's own wording.
 */
import { MembenchError } from '../core/errors.js';
import { formatProblem, type Problem } from './load.js';

/** Throws every error of the file (an empty file is one), or returns its templates and where each kind's wording comes from. */
export function finishTemplates<Kind extends string, Templates>(input: {
  file: string;
  document: { noun: string; holds: string };
  problems: readonly Problem[];
  /** The file parsed to an empty mapping. */
  empty: boolean;
  kinds: readonly Kind[];
  given: readonly Kind[];
  templates: Templates;
}): { templates: Templates; source: string } {
  const { file, document } = input;
  const problems = input.empty
    ? [
        ...input.problems,
        {
          file,
          line: 1,
          col: 1,
          path: '(document)',
          message: `no template: expected ${document.holds}`,
          severity: 'error',
        } satisfies Problem,
      ]
    : input.problems;
  const errors = problems.filter((problem) => problem.severity === 'error');
  if (errors.length > 0)
    throw new MembenchError('INVALID_ARGUMENT', `${file}: not a valid ${document.noun}`, errors.map(formatProblem));
  const rest = input.kinds.filter((kind) => !input.given.includes(kind));
  return {
    templates: input.templates,
    source: rest.length === 0 ? file : `${file} + membench (${rest.join(', ')})`,
  };
}
