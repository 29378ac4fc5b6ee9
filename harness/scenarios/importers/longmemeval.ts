/**
 * LongMemEval (xiaowu0162/LongMemEval: longmemeval_s.json, longmemeval_m.json,
 * longmemeval_oracle.json, and the *_cleaned.json re-release): a list of questions, each with
 * its own haystack `{question_id, question_type, question, answer, question_date,
 * haystack_session_ids, haystack_dates, haystack_sessions: [[{role, content, has_answer?}]],
 * answer_session_ids}`. Every question has a different haystack, so one question becomes one
 * scenario: its sessions in date order, then the question as the only probe.
 *
 * Turns. Every turn is saved as it is: a user turn is a `user` step and the assistant turn after
 * it that step's scripted reply; a user turn nobody answered is a `user` step with `reply:
 * false`, and an assistant turn with no user turn before it (a session that opens with the
 * assistant) an `assistant` step, so no model-written reply enters the haystack and no turn is
 * dropped. The session's date is the `at` of its `session: new` step and of its turns (every
 * saved message carries it). The
 * text saved is the turn's content trimmed; when trimming changed it, the step also keeps the
 * content as the file has it (`indexText`), which the paper's retrieval corpus indexes (read only
 * by bm25 `ranker=okapi-paper`). The
 * evidence unit is one turn, as in the dataset: each turn keeps its own id (a user turn's is
 * the step's `id`, its reply's the `replyId`, both `SESSION.tINDEX`), and the evidence is the
 * turns marked `has_answer: true` (the label the dataset's turn-level recall uses; it marks
 * assistant turns too, for single-session-assistant questions). Strategies never see these
 * ids (the answer sessions' ids begin with `answer_`): the agent loop hands them opaque ones. The
 * probe is asked as "[Current date: DATE] QUESTION", since LongMemEval's own generation prompt
 * gives the reader the question date ("Current Date: {}\nQuestion: {}") and temporal questions
 * ("how many days ago...") need it.
 *
 * Categories: single-session-user / -assistant / -preference → extraction, multi-session →
 * multi-hop, temporal-reasoning → temporal, knowledge-update → update; a question_id ending in
 * `_abs` is an `abstention` probe without `expect`, and without evidence (the README: its
 * retrieval evaluation skips abstention questions, which "do not have a ground truth answer
 * location"). The question_type is the probe's `label` (reports break recall down by it) and a
 * scenario tag. Preference answers are rubrics, not
 * strings the conversation contains: their context recall is always a miss by construction,
 * judge them by evidence coverage and answer accuracy.
 *
 * Repairs (each reported): numeric answers become strings; sessions out of date order (the
 * oracle file is not sorted) are sorted by date; empty or malformed turns are dropped, and
 * sessions left with no turn (an empty list included) ignored; missing or unparsable dates leave the session without a timestamp; when no turn carries
 * `has_answer`, the answer sessions' turns are the evidence (a session id used twice names the first
 * session with it); a turn marked `has_answer` in a session whose id does not hold `answer` stays
 * evidence, said (LongMemEval's retrieval code counts only answer sessions' turns). Skipped: no question_id or a
 * duplicate one, an unknown question_type, no question, no answer (except abstention).
 */
import path from 'node:path';
import {
  cleanText,
  converted,
  IdAllocator,
  numberText,
  badField,
  missingField,
  shownValue,
  toStepId,
  utcInstant,
  type Converted,
  type DatasetConverter,
  type ImportLog,
} from './shared.js';
import { isRecord } from '../../core/guards.js';
import { counted } from '../../core/plural.js';
import { LONGMEMEVAL_FORMAT, LONGMEMEVAL_TYPES } from './longmemeval-format.js';

/** "2023/05/30 (Tue) 23:40" → "2023-05-30T23:40:00Z" (no time zone in the dataset: read as UTC). */
export function parseLongMemEvalDate(text: string): string | undefined {
  const match = /^\s*(\d{4})\/(\d{1,2})\/(\d{1,2})(?:\s*\([A-Za-z]{3}\))?(?:\s+(\d{1,2}):(\d{2}))?\s*$/u.exec(text);
  if (!match) return undefined;
  const [, year, month, day, hour = '0', minute = '0'] = match;
  return utcInstant(Number(year), Number(month), Number(day), Number(hour), Number(minute));
}

interface Exchange {
  user?: string;
  assistant?: string;
  /** The turns' content as the file has it, when cleaning changed it (the paper's retrieval corpus indexes it untrimmed). */
  userRaw?: string;
  assistantRaw?: string;
  /** Index of its first turn in the session. */
  index: number;
  /** Index of the assistant turn of a user turn's reply. */
  replyIndex?: number;
  /** The first turn (user, or an assistant turn on its own) is marked has_answer. */
  hasAnswer: boolean;
  /** The reply is marked has_answer. */
  replyHasAnswer: boolean;
}

interface Session {
  id: string;
  /** An earlier session has the same id: answer_session_ids name that one, not this. */
  idTaken?: boolean;
  date?: string;
  at?: string;
  position: number;
  turns: unknown;
}

/**
 * Turns of one session → exchanges, every turn kept as it is: a user turn and the assistant turn
 * right after it form one exchange; a user turn with no reply after it is saved unanswered
 * (`reply: false`), and an assistant turn with no user turn before it (a session opening with
 * the assistant, or two assistant turns in a row) is saved on its own.
 */
/**
 * A turn's `has_answer` (a boolean in the published file; absent: false). `"true"` / `"false"`
 * and 1 / 0 are read as the boolean they spell, said as a repair; anything else is said and read
 * as false, where it was dropped silently (a turn marked `"true"` lost its evidence).
 */
function readHasAnswer(value: unknown, at: string, item: string, log: ImportLog): boolean {
  if (value === undefined || typeof value === 'boolean') return value === true;
  const shown = shownValue(value);
  const spelled = shown === '"true"' || shown === '1' ? true : shown === '"false"' || shown === '0' ? false : undefined;
  log.repair(
    `${at} has_answer`,
    'has-answer-not-boolean',
    spelled === undefined
      ? `has_answer ${shown} is not true or false: read as false`
      : `has_answer ${shown} is not a boolean: read as ${spelled}`,
    item,
  );
  return spelled ?? false;
}

function readExchanges(turns: unknown[], where: string, item: string, log: ImportLog): Exchange[] {
  const exchanges: Exchange[] = [];
  turns.forEach((turn: unknown, index) => {
    const at = `${where}[${index}]`;
    if (!isRecord(turn) || (turn.role !== 'user' && turn.role !== 'assistant')) {
      log.repair(
        at,
        'turn-dropped',
        isRecord(turn) ? `${badField('role', turn.role, 'user or assistant')}: dropped` : 'not a turn object: dropped',
        item,
      );
      return;
    }
    const content = cleanText(turn.content) ?? numberText(turn.content);
    if (content === undefined) {
      const what = missingField('content', turn.content, 'a string');
      const turnOf = turn.role === 'user' ? 'a user turn' : 'an assistant turn';
      log.repair(
        at,
        'turn-empty',
        `${what === 'no content' ? `${turnOf} without content` : `${turnOf} whose ${what}`}: dropped`,
        item,
      );
      return;
    }
    if (typeof turn.content !== 'string')
      log.repair(
        at,
        'content-number',
        `content ${shownValue(turn.content)} is a number: read as the text "${content}"`,
        item,
      );
    const hasAnswer = readHasAnswer(turn.has_answer, at, item, log);
    const current = exchanges.at(-1);
    const raw = typeof turn.content === 'string' && turn.content !== content ? turn.content : undefined;
    if (turn.role === 'user')
      exchanges.push({
        user: content,
        index,
        hasAnswer,
        replyHasAnswer: false,
        ...(raw !== undefined ? { userRaw: raw } : {}),
      });
    else if (current?.user !== undefined && current.assistant === undefined) {
      current.assistant = content;
      current.replyIndex = index;
      current.replyHasAnswer = hasAnswer;
      if (raw !== undefined) current.assistantRaw = raw;
    } else
      exchanges.push({
        assistant: content,
        index,
        hasAnswer,
        replyHasAnswer: false,
        ...(raw !== undefined ? { assistantRaw: raw } : {}),
      });
  });
  return exchanges;
}

function readSessions(raw: Record<string, unknown>, item: string, log: ImportLog): Session[] | undefined {
  const lists = raw.haystack_sessions;
  if (!Array.isArray(lists)) return undefined;
  const ids = Array.isArray(raw.haystack_session_ids) ? raw.haystack_session_ids : [];
  const dates = Array.isArray(raw.haystack_dates) ? raw.haystack_dates : [];
  if (ids.length !== lists.length)
    log.repair(
      `${item} haystack_session_ids`,
      'session-ids-mismatch',
      `${counted(ids.length, 'session ids')} for ${counted(lists.length, 'sessions')}: missing ones numbered`,
      item,
    );
  if (dates.length !== lists.length)
    log.repair(
      `${item} haystack_dates`,
      'dates-mismatch',
      `${counted(dates.length, 'dates')} for ${counted(lists.length, 'sessions')}: sessions without one have no timestamp`,
      item,
    );
  const positions = new Map<string, number>();
  const sessions = lists.map((turns: unknown, position): Session => {
    const rawId = ids[position];
    const id = typeof rawId === 'string' ? rawId : (numberText(rawId) ?? `session-${position + 1}`);
    const first = positions.get(id);
    if (first === undefined) positions.set(id, position);
    else
      log.repair(
        `${item} haystack_session_ids[${position}]`,
        'session-id-duplicate',
        `session id ${JSON.stringify(id)} is used by an earlier session (haystack_session_ids[${first}]): answer_session_ids name that one only`,
        item,
      );
    const rawDate = dates[position];
    const at = typeof rawDate === 'string' ? parseLongMemEvalDate(rawDate) : undefined;
    if (rawDate !== undefined && at === undefined)
      log.repair(
        `${item} haystack_dates[${position}]`,
        'date-unparsed',
        `${JSON.stringify(rawDate)} is not a date like "2023/05/20 (Sat) 02:21": session imported without a timestamp`,
        item,
      );
    return {
      id,
      ...(first !== undefined ? { idTaken: true } : {}),
      position,
      turns,
      ...(typeof rawDate === 'string' ? { date: rawDate } : {}),
      ...(at !== undefined ? { at } : {}),
    };
  });
  const dated = sessions.every((session) => session.at !== undefined);
  const sorted = dated ? [...sessions].sort((a, b) => a.at!.localeCompare(b.at!) || a.position - b.position) : sessions;
  if (sorted.some((session, index) => session !== sessions[index]))
    log.repair(
      `${item} haystack_dates`,
      'sessions-reordered',
      'sessions are not in date order (as in longmemeval_oracle.json): sorted by date',
      item,
    );
  return sorted;
}

/** LongMemEval: one scenario per question. */
export const longmemeval: DatasetConverter = {
  units: 'questions',
  itemsName: 'questions',
  format: LONGMEMEVAL_FORMAT,
  convert(raw: unknown, index: number, log: ImportLog, file: string): Converted | undefined {
    if (!isRecord(raw)) {
      log.skip(`question[${index}]`, 'question-not-object', 'not a question object: skipped');
      return undefined;
    }
    const questionId = numberText(raw.question_id) ?? cleanText(raw.question_id);
    const item = questionId ?? `question[${index}]`;
    if (!log.item(item)) {
      const duplicate = `${item} (question[${index}])`;
      log.item(duplicate);
      log.skip(
        duplicate,
        'question-duplicate',
        `question_id ${item} is used by an earlier question: skipped`,
        duplicate,
      );
      return undefined;
    }
    const skip = (code: string, message: string): undefined => {
      log.skip(item, code, message, item);
      return undefined;
    };
    if (questionId === undefined)
      return skip('question-id-missing', missingField('question_id', raw.question_id, 'a string or a number'));
    const type = cleanText(raw.question_type) ?? '';
    const typeCategory = LONGMEMEVAL_TYPES[type];
    if (typeCategory === undefined)
      return skip(
        'question-type-unknown',
        badField('question_type', raw.question_type, `one of ${Object.keys(LONGMEMEVAL_TYPES).join(', ')}`),
      );
    const abstention = questionId.endsWith('_abs');
    const question = cleanText(raw.question);
    if (question === undefined) return skip('question-missing', missingField('question', raw.question, 'a string'));
    let answer = cleanText(raw.answer);
    const answerNumber = numberText(raw.answer);
    if (answerNumber !== undefined) {
      answer = answerNumber;
      log.repair(item, 'answer-number', `answer ${answerNumber} is a number: written as the string "${answer}"`, item);
    }
    if (answer === undefined && !abstention)
      return skip('answer-missing', missingField('answer', raw.answer, 'a string or a number'));
    const sessions = readSessions(raw, item, log);
    if (sessions === undefined) return skip('haystack-missing', 'haystack_sessions is not a list of sessions');

    const steps: Record<string, unknown>[] = [];
    const ids = new IdAllocator();
    const evidence: string[] = [];
    const stepsBySession = new Map<string, string[]>();
    let turns = 0;
    let sessionCount = 0;
    for (const session of sessions) {
      const where = `${item} haystack_sessions[${session.position}]`;
      if (!Array.isArray(session.turns)) {
        log.repair(where, 'session-not-list', 'not a list of turns: ignored', item);
        continue;
      }
      const exchanges = readExchanges(session.turns, where, item, log);
      if (exchanges.length === 0) {
        // Said either way: the import's session count would otherwise fall short of haystack_sessions without a word.
        log.repair(
          where,
          'session-empty',
          session.turns.length > 0 ? 'no turn left: ignored' : 'an empty session (no turns): ignored',
          item,
        );
        continue;
      }
      steps.push({ session: 'new', ...(session.at !== undefined ? { at: session.at } : {}) });
      sessionCount++;
      const sessionSteps: string[] = [];
      let outsideAnswer = 0;
      for (const exchange of exchanges) {
        // Every turn keeps its own id (the reply's is the step's `replyId`): evidence cites the turn marked has_answer.
        const id = ids.take(`${toStepId(session.id)}.t${exchange.index}`);
        const replyId =
          exchange.replyIndex === undefined ? undefined : ids.take(`${toStepId(session.id)}.t${exchange.replyIndex}`);
        // The paper's corpus indexes a turn's content as the file has it: kept beside the cleaned text when they differ.
        const message =
          exchange.user === undefined
            ? {
                assistant: exchange.assistant,
                ...(exchange.assistantRaw !== undefined ? { indexText: exchange.assistantRaw } : {}),
              }
            : {
                user: exchange.user,
                ...(exchange.userRaw !== undefined ? { indexText: exchange.userRaw } : {}),
                ...(exchange.assistant !== undefined
                  ? {
                      assistant: exchange.assistant,
                      ...(replyId !== undefined ? { replyId } : {}),
                      ...(exchange.assistantRaw !== undefined ? { replyIndexText: exchange.assistantRaw } : {}),
                    }
                  : { reply: false }),
              };
        steps.push({ id, ...message, ...(session.at !== undefined ? { at: session.at } : {}) });
        sessionSteps.push(id, ...(replyId !== undefined ? [replyId] : []));
        if (exchange.hasAnswer) evidence.push(id);
        if (exchange.replyHasAnswer && replyId !== undefined) evidence.push(replyId);
        if (!session.id.includes('answer'))
          outsideAnswer += Number(exchange.hasAnswer) + Number(exchange.replyHasAnswer && replyId !== undefined);
        turns += exchange.user !== undefined && exchange.assistant !== undefined ? 2 : 1;
      }
      if (!session.idTaken) stepsBySession.set(session.id, sessionSteps);
      if (outsideAnswer > 0)
        log.repair(
          where,
          'has-answer-outside-answer-session',
          `${counted(outsideAnswer, 'turns')} marked has_answer in session ${session.id}, whose id does not hold "answer": kept as evidence (LongMemEval's retrieval code counts a turn gold only in a session whose id holds "answer", so its recall for this question differs from membench's)`,
          item,
        );
    }

    const answerSessions =
      abstention || evidence.length > 0 ? undefined : answerSessionSteps(raw.answer_session_ids, stepsBySession);
    const probeEvidence = abstention ? [] : evidence.length > 0 ? evidence : answerSessions!.steps;
    if (answerSessions && answerSessions.unknown.length > 0 && answerSessions.steps.length > 0)
      log.repair(
        item,
        'answer-session-unknown',
        `answer_session_ids ${answerSessions.unknown.join(', ')} ${answerSessions.unknown.length === 1 ? 'names' : 'name'} no haystack session: the other answer sessions' turns are the evidence`,
        item,
      );
    if (!abstention && evidence.length === 0) {
      log.repair(
        item,
        probeEvidence.length > 0 ? 'evidence-from-sessions' : 'evidence-none',
        probeEvidence.length > 0
          ? "no turn is marked has_answer: the answer sessions' turns are the evidence"
          : Array.isArray(raw.answer_session_ids)
            ? `no turn is marked has_answer and no answer session is in the haystack${answerSessions!.unknown.length > 0 ? ` (answer_session_ids ${answerSessions!.unknown.join(', ')})` : ''}: probe kept without evidence`
            : `no turn is marked has_answer and ${badField('answer_session_ids', raw.answer_session_ids, 'a list of session ids')}: probe kept without evidence`,
        item,
      );
    }
    const rawDate = cleanText(raw.question_date);
    const dated = rawDate !== undefined && parseLongMemEvalDate(rawDate) !== undefined;
    if (!dated)
      log.repair(
        `${item} question_date`,
        'date-unparsed',
        `${badField('question_date', raw.question_date, 'a date like "2023/05/30 (Tue) 23:40"')}: asked without the current date`,
        item,
      );
    steps.push({
      id: ids.take(toStepId(questionId)),
      probe: dated ? `[Current date: ${rawDate}] ${question}` : question,
      ...(abstention ? {} : { expect: [answer] }),
      category: abstention ? 'abstention' : typeCategory,
      label: type,
      ...(probeEvidence.length > 0 ? { evidence: probeEvidence } : {}),
    });
    return converted(
      'longmemeval',
      file,
      questionId,
      `LongMemEval ${questionId} (${type}${abstention ? ', abstention' : ''}): ${counted(sessionCount, 'sessions')} (${counted(turns, 'turns')}) and one question; imported from ${path.basename(file)}.`,
      steps,
      [item],
      [type, ...(abstention ? ['abstention'] : [])],
    );
  },
};

function answerSessionSteps(
  raw: unknown,
  stepsBySession: ReadonlyMap<string, string[]>,
): { steps: string[]; unknown: string[] } {
  if (!Array.isArray(raw)) return { steps: [], unknown: [] };
  const steps: string[] = [];
  const unknown: string[] = [];
  for (const id of raw as unknown[]) {
    const text = typeof id === 'string' ? id : numberText(id);
    const found = text === undefined ? undefined : stepsBySession.get(text);
    if (found) steps.push(...found);
    else unknown.push(shownValue(id));
  }
  return { steps, unknown };
}
