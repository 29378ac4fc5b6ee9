/**
 * LoCoMo (snap-research/locomo, `data/locomo10.json`): a list of samples, each
 * `{qa, conversation, event_summary, observation, session_summary, sample_id}`. One sample
 * becomes one scenario: its sessions in order, then every QA item as a probe.
 *
 * Turns. Every utterance is kept, verbatim, as "Speaker: text" (plus " [shares CAPTION]" when
 * it shares an image, as the dataset's own evaluate_gpts.py renders `blip_caption`). A
 * session's utterances are paired in order: the 1st, 3rd, 5th... is the `user` message of a
 * step and the one after it the scripted `assistant` reply, whoever the speakers are, so the
 * conversation needs no model-written replies; the name prefix keeps who said what even when a
 * session opens with speaker_b. A session with an odd number of utterances ends in a step
 * with `reply: false`: its last utterance is saved and nobody answers it (no model-written
 * reply is ever inserted into the conversation). The evidence unit is one utterance, as
 * in the dataset: a step's `id` is the dia_id of its first utterance and its `replyId` that of
 * the second, and evidence cites the utterance it names (exchanges stay the unit of storage). The session's date is
 * the `at` of its `session: new` step and of each of its turns, so every saved message carries
 * it ("[8 May 2023, 13:56] Caroline: ..."). `event_summary` is never imported. Each utterance also
 * carries what LoCoMo's dialog RAG indexes for it (`indexText`: `SPEAKER said, "TEXT"`, its
 * `clean_text` when the file has one, no caption; task_eval/evaluate_gpts.py `prepare_for_rag`),
 * which only a ranker reproducing the paper reads (bm25 `ranker=okapi-paper`).
 *
 * Derived documents (only when asked for: `--protocol locomo`): LoCoMo's observations and session
 * summaries, each replayed as a scenario of its own (locomo-derived.ts).
 *
 * Categories, as the dataset's own scoring code uses them (task_eval/evaluation.py,
 * evaluation_stats.py and evaluate_gpts.py in snap-research/locomo; several papers number them
 * differently): 1 multi-hop (scored by F1 over the comma-separated parts of the answer; only
 * category 1 gets the evidence-span statistic), 2 temporal (asked with a hint to answer with a
 * date worked out from the sessions' dates, as evaluate_gpts.py appends one), 3 open-domain (only
 * the answer's part before ";" is scored), 4 single-hop, 5 adversarial (asked as a choice between
 * "Not mentioned in the conversation" and the adversarial answer, in an order drawn per question,
 * as evaluate_gpts.py asks it; right when the answer says "no information available" / "not
 * mentioned"). The question as asked is the probe's `ask` (its templates in
 * harness/scenarios/importers/question-prompts.ts, `--question-prompts` to replace them);
 * retrieval looks for the question alone.
 * evaluation_stats.py prints them in the order [4, 1, 2, 3, 5], the paper's columns single-hop,
 * multi-hop, temporal, open-domain, adversarial. They map to membench categories below; the
 * dataset's own name is the probe's `label` (reports break recall down by it) and its number
 * stays in the probe id (`qa12-cat4`). Answers are scored as evaluation.py does (`scoring:
 * locomo-f1`, `locomo-f1-multi` for category 1, `locomo-adversarial` for category 5); adversarial
 * items are abstention probes, left out of every recall figure.
 *
 * Repairs (each reported): a numeric answer becomes a string; a category-5 item carries
 * `adversarial_answer` instead of `answer` and becomes an `abstention` probe (no `expect`) with
 * the adversarial answer as `forbid` (an older layout put it in `answer`: used the same way);
 * evidence strings holding several ids ("D8:6; D9:17", "D9:1 D4:4 D4:6") are split; "D:11:26"
 * and "D30:05" are read as D11:26 and D30:5; ids naming no turn ("D10:19", "D") are dropped;
 * an id listed twice stays listed twice (LoCoMo's recall counts each listing).
 * A probe whose evidence is all dropped is kept without evidence: the dataset's own scoring
 * counts an item without evidence as fully recalled and scores its answer all the same, so
 * the answer still measures memory; only evidence coverage is left out for it. Skipped (each
 * reported): items with no question, a category outside 1-5, or (categories 1-4) no answer.
 */
import { counted } from '../../core/plural.js';
import path from 'node:path';
import type { ProbeCategory } from '../format.js';
import {
  cleanText,
  converted,
  type ConvertOptions,
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
import { MONTH_NAMES } from '../../core/text.js';
import { derivedDocuments } from './locomo-derived.js';
import { canonicalDiaId, LOCOMO_FORMAT } from './locomo-format.js';
import { adversarialAsk, MEMBENCH_QUESTION_PROMPT_SET, temporalAsk, type QuestionPrompts } from './question-prompts.js';

/** LoCoMo category number → its name and the membench probe category. */
export const LOCOMO_CATEGORIES: Readonly<Record<number, { name: string; category: ProbeCategory }>> = {
  1: { name: 'multi-hop', category: 'multi-hop' },
  2: { name: 'temporal', category: 'temporal' },
  3: { name: 'open-domain', category: 'extraction' },
  4: { name: 'single-hop', category: 'extraction' },
  5: { name: 'adversarial', category: 'abstention' },
};

const MONTHS = MONTH_NAMES.map((month) => month.toLowerCase());

/** "1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00Z" (the dataset has no time zone: read as UTC). */
export function parseLocomoDate(text: string): string | undefined {
  const match = /^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})\s*$/iu.exec(text);
  if (!match) return undefined;
  const [, hourText, minuteText, half, dayText, monthText, yearText] = match;
  const month = MONTHS.findIndex(
    (name) =>
      name === monthText!.toLowerCase() || (monthText!.length >= 3 && name.startsWith(monthText!.toLowerCase())),
  );
  const hour12 = Number(hourText);
  const minute = Number(minuteText);
  const day = Number(dayText);
  const year = Number(yearText);
  if (month < 0 || hour12 < 1 || hour12 > 12 || minute > 59) return undefined;
  const hour = (hour12 % 12) + (half!.toLowerCase() === 'p' ? 12 : 0);
  return utcInstant(year, month + 1, day, hour, minute);
}

interface Utterance {
  content: string;
  /** What LoCoMo's dialog RAG indexes for it. */
  indexText: string;
  diaId?: string;
}

interface Session {
  number: number;
  at?: string;
  utterances: Utterance[];
}

function readSessions(conversation: Record<string, unknown>, label: string, log: ImportLog): Session[] {
  const lists = new Map<number, unknown>();
  const dates = new Map<number, unknown>();
  // session_1 and session_01 name one number: the first key in the file keeps it, a later one is said and ignored.
  const keys = new Map<string, string>();
  const keep = (into: Map<number, unknown>, kind: string, number: number, key: string, value: unknown): void => {
    const first = keys.get(`${kind}${number}`);
    if (first === undefined) {
      keys.set(`${kind}${number}`, key);
      into.set(number, value);
    } else
      log.repair(
        `${label} ${key}`,
        'session-key-duplicate',
        `names the same session as ${first}: ignored, ${first} kept`,
      );
  };
  for (const [key, value] of Object.entries(conversation)) {
    // Up to nine digits: a longer number is no session LoCoMo has (and would not print as written).
    const session = /^session_(\d{1,9})$/u.exec(key);
    const date = /^session_(\d{1,9})_date_time$/u.exec(key);
    if (session) keep(lists, 'session', Number(session[1]), key, value);
    else if (date) keep(dates, 'date', Number(date[1]), key, value);
    // A mistyped session key (`session3`, `Session_3`) would lose its turns without a word.
    else if (/session/iu.test(key))
      log.repair(
        `${label} ${key}`,
        'session-key-unknown',
        "not a key LoCoMo's conversation has (session_N, session_N_date_time): ignored",
      );
  }
  for (const number of [...dates.keys()].sort((a, b) => a - b)) {
    if (!lists.has(number))
      log.repair(
        `${label} session_${number}_date_time`,
        'date-without-session',
        `a date for session ${number}, which does not exist: ignored`,
      );
  }
  const sessions: Session[] = [];
  for (const number of [...lists.keys()].sort((a, b) => a - b)) {
    const where = `${label} session_${number}`;
    const list = lists.get(number);
    if (!Array.isArray(list)) {
      log.repair(where, 'session-not-list', 'not a list of turns: ignored');
      continue;
    }
    if (list.length === 0) {
      log.repair(where, 'session-empty', 'an empty session: ignored');
      continue;
    }
    const rawDate = dates.get(number);
    let at: string | undefined;
    if (rawDate === undefined)
      log.repair(where, 'session-without-date', `no session_${number}_date_time: imported without a timestamp`);
    else {
      at = typeof rawDate === 'string' ? parseLocomoDate(rawDate) : undefined;
      if (at === undefined)
        log.repair(
          `${where}_date_time`,
          'date-unparsed',
          `${JSON.stringify(rawDate)} is not a date like "1:56 pm on 8 May, 2023": session imported without a timestamp`,
        );
    }
    const utterances: Utterance[] = [];
    list.forEach((turn: unknown, index) => {
      const at = `${where}[${index}]`;
      if (!isRecord(turn)) return log.repair(at, 'turn-dropped', 'not a turn object: dropped');
      const text = cleanText(turn.text) ?? numberText(turn.text);
      const caption = cleanText(turn.blip_caption);
      // A shared image with no words is still a turn (LoCoMo's own prompts render it "X said, "" and shared …").
      if (text === undefined && caption === undefined)
        return log.repair(at, 'turn-dropped', 'a turn without text: dropped');
      if (text === undefined)
        log.repair(at, 'text-empty', "a turn with no text but a shared image: kept as the image's caption");
      else if (typeof turn.text !== 'string')
        log.repair(at, 'text-number', `text ${shownValue(turn.text)} is a number: read as the text "${text}"`);
      const speaker = cleanText(turn.speaker);
      if (speaker === undefined) log.repair(at, 'speaker-missing', 'a turn without a speaker: kept without a name');
      if (
        caption === undefined &&
        turn.blip_caption !== undefined &&
        turn.blip_caption !== null &&
        typeof turn.blip_caption !== 'string'
      )
        log.repair(
          at,
          'caption-dropped',
          `${badField('blip_caption', turn.blip_caption, 'a string')}: the turn kept without it`,
        );
      const shared = caption === undefined ? [] : [`[shares ${caption}]`];
      const content = `${speaker === undefined ? '' : `${speaker}: `}${[...(text === undefined ? [] : [text]), ...shared].join(' ')}`;
      const rawId = typeof turn.dia_id === 'string' ? turn.dia_id : undefined;
      const diaId = rawId === undefined ? undefined : canonicalDiaId(rawId);
      if (diaId === undefined)
        log.repair(
          at,
          'dia-id-missing',
          `${rawId === undefined ? 'no dia_id' : `dia_id ${JSON.stringify(rawId)} is not like "D1:3"`}: evidence cannot name this turn`,
        );
      // D2:1 in session_1: evidence citing D2:1 means this turn, though its id says session 2 (kept as the file has it).
      else if (Number(diaId.slice(1, diaId.indexOf(':'))) !== number)
        log.repair(
          at,
          'dia-id-session',
          `dia_id ${diaId} names session ${diaId.slice(1, diaId.indexOf(':'))}, but the turn is in session ${number}: kept as written`,
        );
      // LoCoMo's dialog RAG (task_eval/evaluate_gpts.py, prepare_for_rag) indexes an utterance as `SPEAKER said, "TEXT"`, no caption.
      // Its `clean_text`, which locomo10.json does not carry: its `text` then.
      const said = [turn.clean_text, turn.text].find((value) => typeof value === 'string') ?? text ?? '';
      const indexText = `${typeof turn.speaker === 'string' ? turn.speaker : ''} said, "${said}"`;
      utterances.push({ content, indexText, ...(diaId !== undefined ? { diaId } : {}) });
    });
    if (utterances.length > 0) sessions.push({ number, ...(at !== undefined ? { at } : {}), utterances });
  }
  // Replayed in their numbers' order, as LoCoMo's own code reads them; a date before an earlier
  // session's is said (temporal questions are asked to work dates out from these).
  let latest: Session | undefined;
  for (const session of sessions) {
    if (session.at === undefined) continue;
    if (latest?.at !== undefined && session.at < latest.at)
      log.repair(
        `${label} session_${session.number}_date_time`,
        'session-dates-backwards',
        `dated ${session.at}, before session ${latest.number} (${latest.at}): replayed in the sessions' order, as numbered`,
      );
    else latest = session;
  }
  return sessions;
}

/** Session steps: `session: new`, then utterances paired into user / assistant steps. */
function sessionSteps(
  sessions: readonly Session[],
  label: string,
  log: ImportLog,
): { steps: Record<string, unknown>[]; stepOf: Map<string, string>; turns: number } {
  const steps: Record<string, unknown>[] = [];
  const stepOf = new Map<string, string>();
  const ids = new IdAllocator();
  let turns = 0;
  for (const session of sessions) {
    steps.push({ session: 'new', ...(session.at !== undefined ? { at: session.at } : {}) });
    for (let i = 0; i < session.utterances.length; i += 2) {
      const first = session.utterances[i]!;
      const second = session.utterances[i + 1];
      // Each utterance keeps its own id (the user message's is the step's `id`, the reply's its `replyId`): evidence cites one utterance.
      const [id, replyId] = [first, second].map((utterance) => {
        if (utterance?.diaId === undefined) return undefined;
        const taken = ids.take(toStepId(utterance.diaId));
        if (stepOf.has(utterance.diaId))
          log.repair(
            `${label} ${utterance.diaId}`,
            'dia-id-duplicate',
            `dia_id ${utterance.diaId} is used twice: evidence names its first turn`,
          );
        else stepOf.set(utterance.diaId, taken);
        return taken;
      });
      steps.push({
        ...(id !== undefined ? { id } : {}),
        user: first.content,
        indexText: first.indexText,
        ...(second
          ? {
              assistant: second.content,
              replyIndexText: second.indexText,
              ...(replyId !== undefined ? { replyId } : {}),
            }
          : { reply: false }),
        ...(session.at !== undefined ? { at: session.at } : {}),
      });
      turns += second ? 2 : 1;
    }
  }
  return { steps, stepOf, turns };
}

function readEvidence(
  raw: unknown,
  stepOf: ReadonlyMap<string, string>,
  where: string,
  item: string,
  log: ImportLog,
): string[] {
  if (raw === undefined) return [];
  let entries: unknown[];
  if (Array.isArray(raw)) entries = raw;
  else if (typeof raw === 'string') {
    log.repair(
      where,
      'evidence-not-list',
      `evidence ${JSON.stringify(raw)} is a string, not a list: read as a list of one`,
      item,
    );
    entries = [raw];
  } else {
    log.repair(where, 'evidence-not-list', `${badField('evidence', raw, 'a list of dialogue ids')}: dropped`, item);
    return [];
  }
  const out: string[] = [];
  for (const entry of entries) {
    if (typeof entry !== 'string') {
      log.repair(where, 'evidence-malformed', `evidence entry ${JSON.stringify(entry)} is not a string: dropped`, item);
      continue;
    }
    const pieces = entry.split(/[;,\s]+/u).filter((piece) => piece.length > 0);
    if (pieces.length > 1)
      log.repair(
        where,
        'evidence-split',
        `evidence ${JSON.stringify(entry)} holds several ids: split into ${pieces.join(', ')}`,
        item,
      );
    for (const piece of pieces) {
      const diaId = canonicalDiaId(piece);
      if (diaId === undefined) {
        log.repair(
          where,
          'evidence-malformed',
          `evidence ${JSON.stringify(piece)} is not a dialogue id like "D1:3": dropped`,
          item,
        );
        continue;
      }
      if (diaId !== piece)
        log.repair(where, 'evidence-normalized', `evidence ${JSON.stringify(piece)} read as ${diaId}`, item);
      const step = stepOf.get(diaId);
      if (step === undefined)
        log.repair(where, 'evidence-unknown', `evidence ${diaId} names no turn of the conversation: dropped`, item);
      else {
        // LoCoMo's recall iterates the list, so an id listed twice counts twice there: it stays listed twice.
        if (out.includes(step))
          log.repair(
            where,
            'evidence-duplicate',
            `evidence ${diaId} is listed more than once: kept each time (LoCoMo's recall counts every listing)`,
            item,
          );
        out.push(step);
      }
    }
  }
  if (out.length === 0 && entries.length > 0)
    log.repair(where, 'evidence-none-left', 'no evidence id names a turn: probe kept without evidence', item);
  return out;
}

/** An answer field as text: numbers become strings (reported), quotes around the whole answer go. */
function answerText(raw: unknown, where: string, item: string, log: ImportLog): string | undefined {
  let text: string | undefined;
  const number = numberText(raw);
  if (number !== undefined) {
    text = number;
    log.repair(where, 'answer-number', `answer ${number} is a number: written as the string "${text}"`, item);
  } else text = cleanText(raw);
  if (text === undefined) return undefined;
  const unquoted = (/^["“]([^"“”]+)["”]$/u.exec(text) ?? /^'([^']+)'$/u.exec(text))?.[1]?.trim();
  if (unquoted) {
    log.repair(where, 'answer-quoted', `answer ${text} is wrapped in quotes: matched as ${unquoted}`, item);
    return unquoted;
  }
  return text;
}

function readCategory(raw: unknown): number | undefined {
  const value = typeof raw === 'string' && /^\d+$/u.test(raw.trim()) ? Number(raw) : raw;
  return typeof value === 'number' && LOCOMO_CATEGORIES[value] !== undefined ? value : undefined;
}

function readProbe(
  qa: unknown,
  index: number,
  label: string,
  stepOf: ReadonlyMap<string, string>,
  log: ImportLog,
  prompts: QuestionPrompts,
): Record<string, unknown> | undefined {
  const where = `${label} qa[${index}]`;
  const item = where;
  log.item(item);
  const skip = (code: string, message: string): undefined => {
    log.skip(where, code, message, item);
    return undefined;
  };
  if (!isRecord(qa)) return skip('qa-not-object', 'not a QA object');
  const question = cleanText(qa.question);
  if (question === undefined) return skip('question-missing', 'no question');
  const category = readCategory(qa.category);
  if (category === undefined) return skip('category-unknown', badField('category', qa.category, 'one of 1-5'));
  if (typeof qa.category === 'string')
    log.repair(where, 'category-string', `category "${qa.category}" is a string: read as ${category}`, item);
  const probe: Record<string, unknown> = { id: `qa${index}-cat${category}`, probe: question };
  if (category === 5) {
    let adversarial = answerText(qa.adversarial_answer, where, item, log);
    if (adversarial === undefined && qa.answer !== undefined) {
      adversarial = answerText(qa.answer, where, item, log);
      if (adversarial !== undefined)
        log.repair(
          where,
          'adversarial-from-answer',
          'a category-5 item with `answer` instead of `adversarial_answer`: used as the adversarial answer (forbid)',
          item,
        );
    }
    if (adversarial === undefined)
      log.repair(
        where,
        'adversarial-missing',
        'a category-5 item without an adversarial answer: abstention probe without forbid',
        item,
      );
    if (adversarial !== undefined) {
      probe.forbid = [adversarial];
      // Asked as LoCoMo asks it: a choice between "not mentioned" and the adversarial answer.
      Object.assign(probe, adversarialAsk(prompts, question, adversarial, where));
    }
  } else {
    let answer = answerText(qa.answer, where, item, log);
    if (answer === undefined) {
      const what = missingField('answer', qa.answer, 'a string or a number');
      return skip(
        'answer-missing',
        `a category-${category} item ${what === 'no answer' ? 'without an answer' : `whose ${what}`}`,
      );
    }
    // evaluation.py scores only the part before ";" of an open-domain answer.
    if (category === 3 && answer.includes(';')) answer = answer.split(';')[0]!.trim() || answer;
    probe.expect = [answer];
    if (category === 2) probe.ask = temporalAsk(prompts, question);
  }
  probe.category = LOCOMO_CATEGORIES[category]!.category;
  probe.label = LOCOMO_CATEGORIES[category]!.name;
  probe.scoring = category === 1 ? 'locomo-f1-multi' : category === 5 ? 'locomo-adversarial' : 'locomo-f1';
  const evidence = readEvidence(qa.evidence, stepOf, where, item, log);
  if (evidence.length > 0) probe.evidence = evidence;
  return probe;
}

/** LoCoMo: one scenario per sample (and, asked for, one per derived-document field). */
export const locomo: DatasetConverter = {
  units: 'conversations',
  itemsName: 'QA items',
  format: LOCOMO_FORMAT,
  convert(raw: unknown, index: number, log: ImportLog, file: string, options?: ConvertOptions): Converted | undefined {
    if (!isRecord(raw)) {
      log.skip(`sample[${index}]`, 'sample-not-object', 'not a sample object: skipped');
      return undefined;
    }
    let id = numberText(raw.sample_id) ?? cleanText(raw.sample_id);
    let label: string;
    if (id === undefined) {
      // A name no earlier sample has: `sample-3`, or `sample-3-2` after a sample_id "sample-3".
      const base = `sample-${index + 1}`;
      id = base;
      for (let n = 2; !log.unitId(id); n++) id = `${base}-${n}`;
      log.repair(`sample[${index}]`, 'sample-id-missing', `no sample_id: named ${id}`);
      label = id;
    } else if (!log.unitId(id)) {
      // A sample_id an earlier sample has: imported too (its scenario renamed); its issues and QA
      // items are told apart by its place in the list, so the counts add up.
      label = `${id} (sample[${index}])`;
    } else label = id;
    const qaList = Array.isArray(raw.qa) ? raw.qa : [];
    if (!Array.isArray(raw.qa) || raw.qa.length === 0)
      log.repair(
        `${label} qa`,
        'qa-missing',
        raw.qa === undefined
          ? 'no qa list: a scenario without probes'
          : Array.isArray(raw.qa)
            ? 'an empty qa list: a scenario without probes'
            : 'qa is not a list: a scenario without probes',
      );
    const skipAll = (code: string, message: string): undefined => {
      qaList.forEach((_qa, qaIndex) => {
        const item = `${label} qa[${qaIndex}]`;
        log.item(item);
        log.skip(item, code, message, item);
      });
      if (qaList.length === 0) log.skip(label, code, message);
      return undefined;
    };
    if (!isRecord(raw.conversation)) return skipAll('conversation-missing', 'the sample has no conversation object');
    const sessions = readSessions(raw.conversation, label, log);
    if (sessions.length === 0) return skipAll('no-turns', 'the conversation has no turns to replay');
    const { steps, stepOf, turns } = sessionSteps(sessions, label, log);
    const items: string[] = [];
    qaList.forEach((qa, qaIndex) => {
      const probe = readProbe(qa, qaIndex, label, stepOf, log, options?.questions ?? MEMBENCH_QUESTION_PROMPT_SET);
      if (probe) {
        steps.push(probe);
        items.push(`${label} qa[${qaIndex}]`);
      }
    });
    const speakers = [cleanText(raw.conversation.speaker_a), cleanText(raw.conversation.speaker_b)].filter(
      (name) => name !== undefined,
    );
    const between = speakers.length === 2 ? ` between ${speakers[0]} and ${speakers[1]}` : '';
    const dialog = converted(
      'locomo',
      file,
      id,
      `LoCoMo ${id}: a conversation${between} over ${counted(sessions.length, 'sessions')} (${counted(turns, 'turns')}) with ${counted(items.length, 'questions')}; imported from ${path.basename(file)}.`,
      steps,
      items,
    );
    return options?.documents ? { ...dialog, derived: derivedDocuments(raw, sessions, stepOf, id, file, log) } : dialog;
  },
};
