/**
 * The scenario format (docs/design.md §2): a scripted conversation with probes, faults and sessions.
 * Each step is an object with exactly one kind key (`user:`, `tool:`, `probe:`...). This file
 * holds the schema and the typed steps; `load.ts` turns files into them.
 */
import { z } from 'zod';
import { isoTimestamp } from '../core/dates.js';
import { rangeSchema, SEED_RANGE } from '../core/numbers.js';
import { LONE_SURROGATE, normalizeText } from '../core/text.js';
import { memoryNameProblem, normalizedMemoryName } from './memory-name.js';
import { MAX_SCENARIO_NAME_CHARS, SCENARIO_NAME_PATTERN, SCENARIO_NAME_RULE } from './scenario-name.js';

export const STEP_KINDS = [
  'user',
  'assistant',
  'tool',
  'remember',
  'forget',
  'probe',
  'session',
  'crash',
  'concurrent',
  'filler',
] as const;
export type StepKind = (typeof STEP_KINDS)[number];

export const PROBE_CATEGORIES = ['extraction', 'multi-hop', 'temporal', 'update', 'abstention'] as const;
export type ProbeCategory = (typeof PROBE_CATEGORIES)[number];

/** How a probe's live answer is scored (docs/design.md §5: `contains`, or the dataset's own scoring). */
export const ANSWER_SCORINGS = ['contains', 'locomo-f1', 'locomo-f1-multi', 'locomo-adversarial'] as const;
export type AnswerScoring = (typeof ANSWER_SCORINGS)[number];

/** The derived documents a scenario may replay in place of a dialog (LoCoMo's RAG databases besides the dialog). */
export const DERIVED_DOCUMENTS = ['observation', 'summary'] as const;
export type DerivedDocuments = (typeof DERIVED_DOCUMENTS)[number];

export const CRASH_POINTS = [
  'before_model_call',
  'after_tool_intent',
  'after_tool_effect',
  'after_tool_result',
  'mid_memory_write',
  'mid_summary',
  'after_ack',
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

const stringList = z.array(
  z
    .string()
    .min(1, 'expected a non-empty string')
    // Normalised to nothing, an expect or forbid string is found in every context.
    .refine(
      (text) => text.length === 0 || normalizeText(text) !== '',
      'holds only white space: it would match every text',
    ),
  { error: 'expected a list of strings' },
);
/**
 * `expect` and `forbid`: strings recall finds inside a context (harness/core/metrics.ts), so each must
 * hold a letter, digit or symbol. Punctuation alone (".", "?!") is in nearly every context, and an
 * invisible character (U+200B) in nearly none: recall would measure the punctuation, not the memory.
 */
const answerList = stringList.superRefine((texts, context) => {
  for (const [index, text] of texts.entries()) {
    const normal = normalizeText(text);
    // Empty, and lone surrogates, are refused in their own words.
    if (normal === '' || LONE_SURROGATE.test(normal) || /[\p{L}\p{N}\p{S}]/u.test(normal)) continue;
    context.addIssue({
      code: 'custom',
      path: [index],
      message: `${JSON.stringify(text)} holds no letter, digit or symbol: recall would find it in nearly every text (punctuation) or in none (an invisible character), whatever the strategy kept`,
    });
  }
});
/** A text a step cannot do without: empty, or only white space (`user: "   "`: a message saying nothing, a probe asking nothing), is refused. */
const nonEmpty = (what: string) =>
  z
    .string({ error: `expected ${what}` })
    .min(1, `expected ${what}, got an empty string`)
    .refine((text) => text.length === 0 || text.trim() !== '', `expected ${what}, got only white space`);
const stepId = z
  .string({ error: 'expected a string id' })
  .regex(/^[\p{L}\p{N}_.:-]+$/u, 'ids use letters, digits, "_", ".", ":" and "-"')
  .optional();
/** An ISO date or date-time (harness/core/dates.ts); one without a zone is UTC, and written so for every reader. */
const timestamp = z
  .string({ error: 'expected an ISO date-time string' })
  .transform((value, context) => {
    const zoned = isoTimestamp(value);
    if (zoned !== undefined) return zoned;
    context.addIssue({
      code: 'custom',
      message: 'not an ISO date or date-time on the calendar, like 2025-05-12 or 2025-05-12T09:30:00Z (no zone: UTC)',
    });
    return z.NEVER;
  })
  .optional();

const userStep = z.object({
  id: stepId,
  user: nonEmpty('the user message'),
  assistant: nonEmpty('the scripted reply').optional(),
  /** The reply's own id: evidence may then cite the reply (`replyId`) and the user message (`id`) apart, as datasets cite one message. */
  replyId: stepId,
  /** `false`: the conversation goes on without a reply to this message (replayed data): saved, no model call. */
  reply: z.literal(false, { error: 'expected false (leave it out for a reply)' }).optional(),
  /**
   * The dataset messages this message was written from (LoCoMo's observations and session
   * summaries cite dia_ids): evidence naming them is found through this step. The harness's alone:
   * never shown to a strategy or the model.
   */
  cites: stringList.optional(),
  /**
   * The message as a paper's retrieval corpus holds it, when that differs from `user` (an importer
   * sets it: LoCoMo's RAG indexes `SPEAKER said, "TEXT"`): read only by rankers reproducing a paper.
   */
  indexText: z.string({ error: 'expected a string' }).optional(),
  /** The same for the reply. */
  replyIndexText: z.string({ error: 'expected a string' }).optional(),
  at: timestamp,
});
/** An assistant message with no user message before it (a replayed session that opens with the assistant). */
const assistantStep = z.object({
  id: stepId,
  assistant: nonEmpty('the assistant message'),
  /** The message as a paper's retrieval corpus holds it, when that differs from `assistant`. */
  indexText: z.string({ error: 'expected a string' }).optional(),
  at: timestamp,
});
/** The first number inside `value` that JSON cannot carry as written, with where it is and why; undefined when there is none. */
function lossyNumber(
  value: unknown,
  at: (string | number)[] = [],
): { at: (string | number)[]; message: string } | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      return {
        at,
        message: `${value} is no finite number: a tool's data travels as JSON, which has none (it became null)`,
      };
    if (Number.isInteger(value) && !Number.isSafeInteger(value))
      return {
        at,
        message: `an integer past 2^53 is not kept to the digit as a number (it read as ${value}): quote it`,
      };
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, item] of Array.isArray(value) ? value.entries() : Object.entries(value)) {
    const found = lossyNumber(item, [...at, key]);
    if (found) return found;
  }
  return undefined;
}

/** A tool's args or result: any data, but no number JSON would change (`1e400`, `.nan`, 12345678901234567890). */
const toolData = <T extends z.ZodType>(schema: T) =>
  schema.superRefine((value, context) => {
    const found = lossyNumber(value);
    if (found) context.addIssue({ code: 'custom', path: found.at, message: found.message });
  });

const toolStep = z.object({
  id: stepId,
  tool: nonEmpty('a tool name'),
  args: toolData(
    z.record(z.string(), z.unknown(), { error: 'expected a mapping of argument names to values' }).default({}),
  ),
  result: toolData(z.unknown()).optional(),
  effect: z.boolean({ error: 'expected true or false' }).default(false),
});
const rememberStep = z.object({
  id: stepId,
  remember: nonEmpty('what to remember'),
  // The rule file-index applies when it writes the memory, so `validate` refuses what `run` would.
  name: z
    .string({ error: 'expected a memory name' })
    .min(1, 'expected a memory name, got an empty string')
    .superRefine((name, context) => {
      const problem = memoryNameProblem(normalizedMemoryName(name));
      if (problem) context.addIssue({ code: 'custom', message: problem });
    })
    .optional(),
  type: z.enum(['user', 'feedback', 'project', 'reference']).optional(),
  priority: z.enum(['high', 'normal', 'low']).optional(),
  scope: z.enum(['global', 'project']).optional(),
  description: z.string({ error: 'expected a one-line description' }).optional(),
  expires: timestamp,
});
const forgetStep = z.object({ id: stepId, forget: nonEmpty('the memory name or text to forget') });
const probeStep = z
  .object({
    id: stepId,
    probe: nonEmpty('the probe question'),
    expect: answerList.optional(),
    forbid: answerList.default([]),
    category: z.enum(PROBE_CATEGORIES).default('extraction'),
    /** The dataset's own category for this question (LoCoMo's `single-hop`, LongMemEval's `temporal-reasoning`), reported beside membench's. */
    label: nonEmpty('a category label').optional(),
    /** How a live answer is scored: `contains` (an expect string, no forbid string) or LoCoMo's token F1 (`locomo-f1`; `locomo-f1-multi` for its multi-hop answers; `locomo-adversarial`: its abstention phrases). */
    scoring: z.enum(ANSWER_SCORINGS, { error: `expected one of ${ANSWER_SCORINGS.join(', ')}` }).optional(),
    evidence: stringList.default([]),
    /** The question as the model is asked it (a dataset's hint or choice of answers added); `probe` stays what retrieval looks for. */
    ask: nonEmpty('the question as the model is asked it').optional(),
    /** The answers `ask` offers, in the order of its letters (a), (b)…: a reply that is only a letter is read as that answer. */
    choices: z
      .array(nonEmpty('an answer to choose'), { error: 'expected a list of answers' })
      .min(2, 'expected at least two answers to choose from')
      .optional(),
  })
  .superRefine((probe, context) => {
    if (probe.choices !== undefined && probe.ask === undefined)
      context.addIssue({
        code: 'custom',
        path: ['choices'],
        message: 'choices need `ask`: the question text that offers them to the model',
      });
    if (probe.category === 'abstention') return;
    if (probe.expect === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['expect'],
        message: 'required: a probe needs `expect` (any of these strings counts) unless its category is abstention',
      });
    } else if (probe.expect.length === 0) {
      context.addIssue({
        code: 'custom',
        path: ['expect'],
        message: 'expected at least one string (an empty list is for abstention probes only)',
      });
    } else {
      // A context or answer that holds the expected string would hold the forbidden one: recalled and stale at once.
      // Matching finds a string inside a text, so a forbid string inside an expected one is found with it.
      const expected = probe.expect.map((text) => [text, normalizeText(text)] as const);
      for (const [index, text] of probe.forbid.entries()) {
        const forbidden = normalizeText(text);
        const holder = forbidden === '' ? undefined : expected.find(([, normal]) => normal.includes(forbidden));
        if (holder === undefined) continue;
        context.addIssue({
          code: 'custom',
          path: ['forbid', index],
          message: `${
            holder[1] === forbidden ? `"${text}" is also in expect` : `"${text}" is part of the expected "${holder[0]}"`
          }: every answer that recalls it would count as stale`,
        });
        break;
      }
    }
  });
const sessionStep = z.object({ id: stepId, session: z.literal('new', { error: 'expected "new"' }), at: timestamp });
const crashStep = z.object({ id: stepId, crash: z.enum(CRASH_POINTS) });
const fillerStep = z.object({
  id: stepId,
  filler: z
    .number({ error: 'expected a number of turns' })
    .int('expected a whole number')
    .min(1, 'expected at least 1 turn')
    .max(100_000, 'expected at most 100000 turns'),
  seed: rangeSchema(SEED_RANGE).optional(),
  language: z.enum(['en', 'zh', 'mixed']).optional(),
});

/** Schemas by kind. `concurrent` holds lists of steps, checked recursively by the loader. */
export const STEP_SCHEMAS = {
  user: userStep,
  assistant: assistantStep,
  tool: toolStep,
  remember: rememberStep,
  forget: forgetStep,
  probe: probeStep,
  session: sessionStep,
  crash: crashStep,
  concurrent: z.object({
    id: stepId,
    concurrent: z
      .array(
        z
          .array(z.unknown(), { error: 'expected a list of steps per session' })
          .min(1, 'expected at least one step: an empty session runs nothing'),
        { error: 'expected a list of sessions, each a list of steps' },
      )
      .min(2, 'expected at least two sessions'),
  }),
  filler: fillerStep,
} satisfies Record<StepKind, z.ZodType>;

export const scenarioHeader = z.object({
  name: z
    .string({ error: 'expected a scenario name' })
    .regex(SCENARIO_NAME_PATTERN, SCENARIO_NAME_RULE)
    .max(MAX_SCENARIO_NAME_CHARS, {
      error: (issue) =>
        `use at most ${MAX_SCENARIO_NAME_CHARS} characters (a scenario name becomes file names), got ${String(issue.input).length}`,
    }),
  description: z.string().optional(),
  language: z.string().optional(),
  tags: z.array(z.string()).optional(),
  /** The suite or dataset the scenario belongs to (`generated`, `locomo:locomo10.json`): reports pool a group's scenarios into one. */
  group: nonEmpty('a group name').optional(),
  /** What the conversation's messages are when not the dialog itself: a dataset's derived documents (LoCoMo's observations or session summaries), replayed in place of it. */
  documents: z.enum(DERIVED_DOCUMENTS, { error: `expected one of ${DERIVED_DOCUMENTS.join(', ')}` }).optional(),
  steps: z.array(z.unknown(), { error: 'expected a list of steps' }).min(1, 'expected at least one step'),
});

export type UserStep = z.output<typeof userStep> & { kind: 'user' };
export type AssistantStep = z.output<typeof assistantStep> & { kind: 'assistant' };
export type ToolStep = z.output<typeof toolStep> & { kind: 'tool' };
export type RememberStep = z.output<typeof rememberStep> & { kind: 'remember' };
export type ForgetStep = z.output<typeof forgetStep> & { kind: 'forget' };
export type ProbeStep = z.output<typeof probeStep> & { kind: 'probe' };
export type SessionStep = z.output<typeof sessionStep> & { kind: 'session' };
export type CrashStep = z.output<typeof crashStep> & { kind: 'crash' };
export type FillerStep = z.output<typeof fillerStep> & { kind: 'filler' };
export interface ConcurrentStep {
  kind: 'concurrent';
  id?: string;
  concurrent: Step[][];
}

export type Step =
  | UserStep
  | AssistantStep
  | ToolStep
  | RememberStep
  | ForgetStep
  | ProbeStep
  | SessionStep
  | CrashStep
  | FillerStep
  | ConcurrentStep;

/** A validated scenario, ready to run. */
export interface Scenario {
  name: string;
  description?: string;
  language?: string;
  tags?: string[];
  /** The suite or dataset it belongs to: reports pool a group's scenarios into one. */
  group?: string;
  /** What its messages are when not the dialog: a dataset's derived documents, replayed in place of it. */
  documents?: DerivedDocuments;
  /** Where it came from (a path, or `builtin:NAME`). */
  source: string;
  steps: Step[];
}
