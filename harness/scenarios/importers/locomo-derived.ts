/**
 * LoCoMo's derived documents, read only when asked for (`--protocol locomo`). LoCoMo's RAG evaluation
 * (task_eval/evaluate_gpts.py `prepare_for_rag`, `get_rag_context`) retrieves over one of three
 * databases: the dialogs, the observations or the session summaries. `observation` holds
 * `session_N_observation: {speaker: [[text, dia_id], ...]}` (the dia_id a string, possibly several
 * joined by commas, or a list), `session_summary` holds `session_N_summary: text`. Each becomes a
 * scenario of its own that replays those documents in place of the dialog (one message per
 * document, dated with its session, no reply) and asks the dialog's questions; a document
 * `cites` the dialog's ids (an observation its dia_ids, a summary every dia_id numbered with its
 * session, as the code's `ev.split(':')[0][1:] in sessions` compares them), which only the harness
 * reads. A sample without the field gets no such scenario (reported); a field of the wrong type
 * is bad input (an error naming the file and the field: the field's schema in locomo-format.ts).
 */
import path from 'node:path';
import type { z } from 'zod';
import { MembenchError } from '../../core/errors.js';
import { shortenText } from '../../core/text.js';
import { cleanText, converted, shownValue, type ImportLog, type ScenarioDocument } from './shared.js';
import {
  canonicalDiaId,
  LOCOMO_OBSERVATION_CITE,
  LOCOMO_OBSERVATION_PAIR,
  LOCOMO_OBSERVATIONS,
  LOCOMO_SESSION_OBSERVATIONS,
  LOCOMO_SPEAKER_OBSERVATIONS,
  LOCOMO_SUMMARIES,
  LOCOMO_SUMMARY,
} from './locomo-format.js';

/**
 * `value` read through its schema: a derived field that is not in LoCoMo's layout is bad input (its
 * citations cannot be read), not a repair: the error names the file, the field (`where` and the
 * path of zod's first issue under it), what the layout holds there and what the file has.
 */
function read<S extends z.ZodType>(schema: S, value: unknown, file: string, where: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return value as z.output<S>;
  const issue = parsed.error.issues[0]!;
  let at = value;
  let path = where;
  for (const key of issue.path) {
    at = (at as Record<PropertyKey, unknown>)[key];
    path += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  }
  const got = Array.isArray(at) ? 'a list' : at === null ? 'null' : `${typeof at} ${shownValue(at)}`;
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `${file}: ${path}: expected ${issue.message}, got ${shortenText(got, 81)}`,
  );
}

/** The derived field's `session_N_KIND` entries by session number, in order (other keys reported and ignored). */
function sessionEntries(
  field: Record<string, unknown>,
  kind: 'observation' | 'summary',
  where: string,
  log: ImportLog,
): [number, unknown][] {
  const entries: [number, unknown][] = [];
  for (const [key, value] of Object.entries(field)) {
    const match = new RegExp(`^session_(\\d+)_${kind}$`, 'u').exec(key);
    if (match) entries.push([Number(match[1]), value]);
    else log.repair(`${where}.${key}`, `${kind}-key-unknown`, `not a session_N_${kind} entry: ignored`);
  }
  return entries.sort(([a], [b]) => a - b);
}

/** The dialog's step ids an observation's dia_id field names ("D1:3", "D1:3, D1:5" or a list); unknown ids reported and dropped. */
function citedSteps(
  raw: unknown,
  stepOf: ReadonlyMap<string, string>,
  file: string,
  where: string,
  log: ImportLog,
): string[] {
  const cited = read(LOCOMO_OBSERVATION_CITE, raw, file, where);
  const pieces = (typeof cited === 'string' ? [cited] : cited).flatMap((entry) =>
    entry.split(/[;,\s]+/u).filter((piece) => piece.length > 0),
  );
  const steps: string[] = [];
  for (const piece of pieces) {
    const diaId = canonicalDiaId(piece);
    const step = diaId === undefined ? undefined : stepOf.get(diaId);
    if (step === undefined)
      log.repair(where, 'observation-cite-unknown', `${JSON.stringify(piece)} names no turn: not cited`);
    else if (!steps.includes(step)) steps.push(step);
  }
  return steps;
}

/** A dated session opening, as the dialog's. */
const sessionOpening = (at: string | undefined): Record<string, unknown> => ({
  session: 'new',
  ...(at !== undefined ? { at } : {}),
});

/** One derived document: a message with no reply, dated with its session, citing dialog ids; `raw`, the file's text when cleaning changed it (what LoCoMo's RAG indexes). */
const documentStep = (
  id: string,
  text: string,
  at: string | undefined,
  cites: string[],
  raw: unknown,
): Record<string, unknown> => ({
  id,
  user: text,
  ...(typeof raw === 'string' && raw !== text ? { indexText: raw } : {}),
  reply: false,
  ...(cites.length > 0 ? { cites } : {}),
  ...(at !== undefined ? { at } : {}),
});

/** What the derived fields' readers share: the sample's session dates, the dialog's step ids, where errors point. */
interface DerivedContext {
  datesOf: ReadonlyMap<number, string | undefined>;
  stepOf: ReadonlyMap<string, string>;
  label: string;
  file: string;
  log: ImportLog;
}

/**
 * The walk both derived fields take: the field read through its schema, its `session_N_KIND`
 * entries in session order, each session's documents (`documentsOf`) behind a dated session
 * opening, a session without documents left out; undefined when no session has any.
 */
function sessionSteps(
  raw: unknown,
  kind: 'observation' | 'summary',
  field: z.ZodType<Record<string, unknown>>,
  context: DerivedContext,
  documentsOf: (number: number, entry: unknown, at: string) => Record<string, unknown>[],
): Record<string, unknown>[] | undefined {
  const where = `${context.label} ${kind === 'summary' ? 'session_summary' : 'observation'}`;
  const entries = sessionEntries(read(field, raw, context.file, where), kind, where, context.log);
  const steps: Record<string, unknown>[] = [];
  for (const [number, entry] of entries) {
    const at = `${where}.session_${number}_${kind}`;
    const documents = documentsOf(number, entry, at);
    // Kept, as LoCoMo's retrieval indexes every entry of the field; but undated and citing no turn.
    if (documents.length > 0 && !context.datesOf.has(number))
      context.log.repair(
        at,
        `${kind}-session-unknown`,
        `the conversation has no session_${number}: its ${kind === 'summary' ? 'summary is' : 'observations are'} kept, undated`,
      );
    if (documents.length > 0) steps.push(sessionOpening(context.datesOf.get(number)), ...documents);
  }
  return steps.length > 0 ? steps : undefined;
}

/** The observation documents' steps (session openings and one step per observation), or undefined when there are none. */
function observationSteps(raw: unknown, context: DerivedContext): Record<string, unknown>[] | undefined {
  const { datesOf, stepOf, file, log } = context;
  return sessionSteps(raw, 'observation', LOCOMO_OBSERVATIONS, context, (number, perSpeaker, at) => {
    const speakers = read(LOCOMO_SESSION_OBSERVATIONS, perSpeaker, file, at);
    const documents: Record<string, unknown>[] = [];
    for (const [speaker, list] of Object.entries(speakers)) {
      read(LOCOMO_SPEAKER_OBSERVATIONS, list, file, `${at}.${speaker}`).forEach((pair, index) => {
        const entryAt = `${at}.${speaker}[${index}]`;
        const entry = read(LOCOMO_OBSERVATION_PAIR, pair, file, entryAt);
        const text = cleanText(entry[0]);
        if (text === undefined) return log.repair(entryAt, 'observation-empty', 'an empty observation: left out');
        const cites = citedSteps(entry[1], stepOf, file, `${entryAt}[1]`, log);
        documents.push(documentStep(`O${number}.${documents.length + 1}`, text, datesOf.get(number), cites, entry[0]));
      });
    }
    return documents;
  });
}

/** The session-summary documents' steps (one session per summary), or undefined when there are none. */
function summarySteps(raw: unknown, context: DerivedContext): Record<string, unknown>[] | undefined {
  const { datesOf, stepOf, file, log } = context;
  return sessionSteps(raw, 'summary', LOCOMO_SUMMARIES, context, (number, entry, at) => {
    const summary = read(LOCOMO_SUMMARY, entry, file, at);
    const text = cleanText(summary);
    if (text === undefined) {
      log.repair(at, 'summary-empty', 'an empty summary: left out');
      return [];
    }
    // LoCoMo's code credits a retrieved summary of session N with every evidence id numbered DN.
    const cites = [...stepOf].filter(([diaId]) => diaId.startsWith(`D${number}:`)).map(([, step]) => step);
    return [documentStep(`S${number}`, text, datesOf.get(number), cites, summary)];
  });
}

/** The sample's derived-document scenarios (without probes: the import adds the dialog's), each field absent or empty reported. */
export function derivedDocuments(
  raw: Record<string, unknown>,
  sessions: readonly { number: number; at?: string }[],
  stepOf: ReadonlyMap<string, string>,
  label: string,
  file: string,
  log: ImportLog,
): ScenarioDocument[] {
  const context: DerivedContext = {
    datesOf: new Map(sessions.map((session) => [session.number, session.at])),
    stepOf,
    label,
    file,
    log,
  };
  const documents: ScenarioDocument[] = [];
  for (const [field, kind, read] of [
    ['observation', 'observation', observationSteps],
    ['session_summary', 'summary', summarySteps],
  ] as const) {
    const steps = raw[field] === undefined ? undefined : read(raw[field], context);
    if (steps === undefined) {
      log.repair(
        `${label} ${field}`,
        `${kind}-missing`,
        `${raw[field] === undefined ? `no ${field}` : `no ${kind} in ${field}`}: the ${kind} unit is skipped for this conversation`,
      );
      continue;
    }
    const { document } = converted(
      'locomo',
      file,
      `${label}-${kind}`,
      `LoCoMo ${label}, its ${kind === 'summary' ? 'session summaries' : 'observations'} replayed in place of the dialog (LoCoMo's ${kind} retrieval unit); imported from ${path.basename(file)}.`,
      steps,
      [],
      [kind],
    );
    // A group of its own: the derived corpus's figures never pool with the dialog's.
    documents.push({
      ...document,
      group: `${document.group} ${kind === 'summary' ? 'session summaries' : 'observations'}`,
      documents: kind,
    });
  }
  return documents;
}
