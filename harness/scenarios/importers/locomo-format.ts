/**
 * LoCoMo's published format (snap-research/locomo, `data/locomo10.json`), described once in zod:
 * one element of the list is a sample. What the importer needs to import an item is required here
 * (a sample without `conversation`, a QA item without `question`, `category` or, in categories 1-4,
 * `answer` is skipped, each reported where it is); what the published file holds beside it is
 * optional. The dialog is read tolerantly (its known quirks are repaired and reported by
 * locomo.ts); the derived documents (`observation`, `session_summary`) are read through their
 * schemas, and any other layout is bad input, located to the field.
 */
import { z } from 'zod';
import type { DatasetFormat } from './shared.js';

/** A text field as the file writes it: a string (numbers are accepted and written as strings). */
const text = z.union([z.string(), z.number()]);

/** "D:11:26" → D11:26, "D30:05" → D30:5, "(D1:3)" → D1:3; undefined when it is no dialogue id. */
export function canonicalDiaId(raw: string): string | undefined {
  const match = /^\(?D:?(\d+):0*(\d+)\)?$/u.exec(raw.trim());
  return match ? `D${Number(match[1])}:${Number(match[2])}` : undefined;
}

/** One utterance of a session. */
export const LOCOMO_TURN = z.looseObject({
  speaker: z.string(),
  dia_id: z.string(),
  text,
  /** An image shared in the turn, and its caption (rendered "[shares CAPTION]"). */
  img_url: z.union([z.string(), z.array(z.string())]).optional(),
  blip_caption: z.string().optional(),
});

/** One QA item: `adversarial_answer` instead of `answer` in category 5. */
export const LOCOMO_QA = z
  .looseObject({
    question: z.string(),
    category: z.union([z.number(), z.string()]),
    answer: text.optional(),
    adversarial_answer: text.optional(),
    evidence: z.union([z.array(z.string()), z.string()]).optional(),
  })
  .refine((qa) => qa.answer !== undefined || String(qa.category) === '5', {
    path: ['answer'],
    error: 'required in categories 1-4',
  });

/** `conversation`: `speaker_a`, `speaker_b`, and `session_N` lists with their `session_N_date_time`. */
export const LOCOMO_CONVERSATION = z.record(z.string(), z.unknown());

/** `session_N_observation`: per speaker, `[text, dia_id]` pairs (the dia_id a string, possibly several joined, or a list). */
export const LOCOMO_OBSERVATIONS = z.record(z.string(), z.unknown(), {
  error: 'an object of session_N_observation entries',
});
/** One session's observations: speaker → a list of pairs. */
export const LOCOMO_SESSION_OBSERVATIONS = z.record(z.string(), z.unknown(), {
  error: 'an object of speaker → [[text, dia_id], ...]',
});
export const LOCOMO_SPEAKER_OBSERVATIONS = z.array(z.unknown(), { error: 'a list of [text, dia_id] pairs' });
/** One observation: its text and the dia_id(s) it cites (read through LOCOMO_OBSERVATION_CITE once the text is known to say something). */
export const LOCOMO_OBSERVATION_PAIR = z
  .array(z.unknown(), { error: 'a pair [observation text, dia_id]' })
  .min(2, { error: 'a pair [observation text, dia_id]' })
  .pipe(z.tuple([z.string({ error: 'the observation text' }), z.unknown()]).rest(z.unknown()));
export const LOCOMO_OBSERVATION_CITE = z.union([z.string(), z.array(z.string())], {
  error: 'a dia_id like "D1:3" or a list of them',
});

/** `session_N_summary`: the session's summary text. */
export const LOCOMO_SUMMARIES = z.record(z.string(), z.unknown(), {
  error: 'an object of session_N_summary entries',
});
export const LOCOMO_SUMMARY = z.string({ error: 'the summary text' });

/** One sample, as the published list holds it. */
export const LOCOMO_SAMPLE = z.looseObject({
  sample_id: text.optional(),
  conversation: LOCOMO_CONVERSATION,
  qa: z.array(LOCOMO_QA).optional(),
  event_summary: z.unknown().optional(),
  observation: z
    .record(z.string(), z.record(z.string(), z.array(z.tuple([z.string(), LOCOMO_OBSERVATION_CITE]))))
    .optional(),
  session_summary: z.record(z.string(), LOCOMO_SUMMARY).optional(),
});

/** A sample as the published file writes it, for the importer conformance suite; `say` is the first utterance's text. */
function example(say: string): z.input<typeof LOCOMO_SAMPLE> {
  return {
    sample_id: 'conv-1',
    conversation: {
      speaker_a: 'Ana',
      speaker_b: 'Bo',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        { speaker: 'Ana', dia_id: 'D1:1', text: say },
        { speaker: 'Bo', dia_id: 'D1:2', text: 'Nice, what kind?' },
        {
          speaker: 'Ana',
          dia_id: 'D1:3',
          text: 'A cast-iron pot.',
          img_url: ['https://example.org/pot.jpg'],
          blip_caption: 'a photo of a black pot',
        },
        { speaker: 'Bo', dia_id: 'D1:4', text: 'Good for stews.' },
      ],
    },
    qa: [
      { question: 'What did Ana buy?', answer: 'a cast-iron pot', evidence: ['D1:3'], category: 4 },
      { question: 'What did Bo buy?', adversarial_answer: 'a pan', evidence: [], category: 5 },
    ],
    event_summary: { events_session_1: { Ana: ['Ana buys a pot.'], Bo: [], date: '8 May, 2023' } },
    observation: { session_1_observation: { Ana: [['Ana bought a cast-iron pot.', 'D1:3']], Bo: [] } },
    session_summary: { session_1_summary: 'Ana bought a cast-iron pot.' },
  };
}

/** LoCoMo's format: the sample schema, an example, and where each required field's absence is reported. */
export const LOCOMO_FORMAT: DatasetFormat = {
  element: LOCOMO_SAMPLE,
  example,
  required: [
    { path: ['conversation'], where: 'conv-1' },
    { path: ['qa', 0, 'question'], where: 'conv-1 qa[0]' },
    { path: ['qa', 0, 'category'], where: 'conv-1 qa[0]' },
    { path: ['qa', 0, 'answer'], where: 'conv-1 qa[0]' },
  ],
};
