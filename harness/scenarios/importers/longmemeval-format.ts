/**
 * LongMemEval's published format (xiaowu0162/LongMemEval: longmemeval_s.json, longmemeval_m.json,
 * longmemeval_oracle.json and the *_cleaned.json re-release), described once in zod: one element
 * of the list is a question with its own haystack. What the importer needs to import the question is
 * required here (without it the question is skipped, reported where it is: `question_id`,
 * `question_type`, `question`, `answer` except for `_abs` questions, `haystack_sessions`); the rest
 * is optional, and the haystack is read tolerantly (its known quirks are repaired and reported by
 * longmemeval.ts).
 */
import { z } from 'zod';
import type { ProbeCategory } from '../format.js';
import type { DatasetFormat } from './shared.js';

/** LongMemEval question_type → membench probe category (abstention comes from the `_abs` suffix). */
export const LONGMEMEVAL_TYPES: Readonly<Record<string, ProbeCategory>> = {
  'single-session-user': 'extraction',
  'single-session-assistant': 'extraction',
  'single-session-preference': 'extraction',
  'multi-session': 'multi-hop',
  'temporal-reasoning': 'temporal',
  'knowledge-update': 'update',
};

/** One turn of a haystack session; `has_answer` marks the evidence turns. */
export const LONGMEMEVAL_TURN = z.looseObject({
  role: z.enum(['user', 'assistant']),
  content: z.string(),
  has_answer: z.boolean().optional(),
});

/** One question, as the published list holds it (`answer` a string or a number; `_abs` questions have none to find). */
export const LONGMEMEVAL_QUESTION = z
  .looseObject({
    question_id: z.union([z.string(), z.number()]),
    question_type: z.enum(Object.keys(LONGMEMEVAL_TYPES) as [string, ...string[]]),
    question: z.string(),
    answer: z.union([z.string(), z.number()]).optional(),
    question_date: z.string().optional(),
    haystack_session_ids: z.array(z.union([z.string(), z.number()])).optional(),
    haystack_dates: z.array(z.string()).optional(),
    haystack_sessions: z.array(z.array(LONGMEMEVAL_TURN)),
    answer_session_ids: z.array(z.union([z.string(), z.number()])).optional(),
  })
  .refine((question) => question.answer !== undefined || String(question.question_id).endsWith('_abs'), {
    path: ['answer'],
    error: 'required unless the question_id ends in _abs',
  });

/** A question as the published file writes it, for the importer conformance suite; `say` is the first turn's content. */
function example(say: string): z.input<typeof LONGMEMEVAL_QUESTION> {
  return {
    question_id: 'q-1',
    question_type: 'single-session-user',
    question: 'What pot do I have?',
    answer: 'a cast-iron pot',
    question_date: '2023/05/30 (Tue) 23:40',
    haystack_session_ids: ['s-1', 'answer_s-2'],
    haystack_dates: ['2023/05/20 (Sat) 02:21', '2023/05/22 (Mon) 14:10'],
    haystack_sessions: [
      [
        { role: 'user', content: say },
        { role: 'assistant', content: 'Nice, what kind?' },
      ],
      [
        { role: 'user', content: 'I only have one cast-iron pot.', has_answer: true },
        { role: 'assistant', content: 'That works for stews.' },
      ],
    ],
    answer_session_ids: ['answer_s-2'],
  };
}

/** LongMemEval's format: the question schema, an example, and where each required field's absence is reported. */
export const LONGMEMEVAL_FORMAT: DatasetFormat = {
  element: LONGMEMEVAL_QUESTION,
  example,
  required: [
    { path: ['question_id'], where: 'question[0]' },
    { path: ['question_type'], where: 'q-1' },
    { path: ['question'], where: 'q-1' },
    { path: ['answer'], where: 'q-1' },
    { path: ['haystack_sessions'], where: 'q-1' },
  ],
};
