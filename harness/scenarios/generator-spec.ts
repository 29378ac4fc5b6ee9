/**
 * The generator's spec: every knob of a generated workload in one YAML (or JSON) file, e.g.
 * scenarios/suites/generated.yaml. Validated with zod at the edge and located like scenario files
 * (`file:line:col: path: message`), with the same parser (`parseMappingText`); unknown keys are
 * errors, since a misspelt knob would silently change the workload.
 */
import path from 'node:path';
import { z } from 'zod';
import { isoInstant } from '../core/dates.js';
import { MembenchError } from '../core/errors.js';
import { didYouMean, kindOf } from '../core/user-input.js';
import { rangeSchema, SEED_RANGE } from '../core/numbers.js';
import { bankCapacity, GENERATED_LANGUAGES } from './generator-bank.js';
import { MAX_SCENARIO_NAME_CHARS, SCENARIO_NAME_PATTERN, SCENARIO_NAME_RULE } from './scenario-name.js';
import {
  describeIssue,
  formatPath,
  formatProblem,
  MAX_SCENARIO_BYTES,
  parseMappingText,
  readDocumentFile,
  type DocumentKind,
  type Problem,
} from './load.js';

const whole = (what: string) => z.number({ error: `expected a number of ${what}` }).int('expected a whole number');
const count = (what: string, fallback: number) => whole(what).min(0, 'expected 0 or more').default(fallback);
const share = (fallback: number) =>
  z
    .number({ error: 'expected a share from 0 to 1' })
    .min(0, 'expected a share from 0 to 1')
    .max(1, 'expected a share from 0 to 1')
    .default(fallback);

/** `3` or `[1, 3]` → `{ min, max }`, both within [lo, hi]. */
const range = (what: string, lo: number, hi: number) =>
  z
    .preprocess(
      // A number is [n, n]; `{ min, max }`, the parsed form, reads back as itself (a spec object handed to generateWorkload).
      (value) =>
        typeof value === 'number'
          ? [value, value]
          : typeof value === 'object' &&
              value !== null &&
              !Array.isArray(value) &&
              Object.keys(value).sort().join() === 'max,min'
            ? [(value as { min: unknown }).min, (value as { max: unknown }).max]
            : value,
      z
        .array(whole(what).min(lo, `expected at least ${lo}`).max(hi, `expected at most ${hi}`), {
          error: `expected a number or [smallest, largest] ${what}`,
        })
        .length(2, `expected [smallest, largest] ${what}`),
    )
    .refine((pair) => pair[0]! <= pair[1]!, 'expected [smallest, largest]: the first is larger')
    .transform((pair) => ({ min: pair[0]!, max: pair[1]! }));

/**
 * The distances probes are asked at by default: every distance from 1 to 32 exchanges after the
 * fact, then four per doubling up to 256, so a sweep of window's K (or any knob measured in
 * exchanges) sees recall change at each step instead of at powers of two only.
 */
export const DEFAULT_DISTANCES = [
  ...Array.from({ length: 32 }, (_, index) => index + 1),
  ...Array.from({ length: 12 }, (_, index) => Math.round(32 * 2 ** ((index + 1) / 4))),
];

/** The doubling a distance falls in: 1 → 0, 2 → 1, 3–4 → 2, 5–8 → 3, … */
const doubling = (distance: number): number => Math.ceil(Math.log2(distance));

/**
 * The distances fact number `index` of a conversation is probed at. Spread (the default): one per
 * doubling of the spec's distances, the facts taking turns over the distances within it, so the
 * probes cover every listed distance at the cost of one probe per doubling and fact (a list of
 * powers of two gives every fact every distance). Not spread: every fact at every distance.
 */
export function factDistances(spec: Pick<GeneratorSpec, 'distances' | 'spread'>, index: number): number[] {
  if (!spec.spread) return spec.distances;
  const byDoubling = new Map<number, number[]>();
  for (const distance of spec.distances)
    byDoubling.set(doubling(distance), [...(byDoubling.get(doubling(distance)) ?? []), distance]);
  return [...byDoubling].map(([step, members]) => members[(index + step) % members.length]!);
}

const factsSchema = z.strictObject({
  /** One fact, stated once (a passing mention or a `remember`), probed at every distance. */
  fact: count('facts', 12),
  /** A fact and a similar one about someone else (the distractor's value is a `forbid`). */
  distractor: count('distractor pairs', 6),
  /** A fact corrected 1 to 3 times, sometimes back to an earlier value; outdated values are `forbid`. */
  update: count('correction chains', 6),
  /** Two facts joined by a name (my brother-in-law is Karim; Karim is a locksmith). */
  'multi-hop': count('two-fact links', 4),
  /** A dated activity, asked about by day ("What did I do last Tuesday?"). */
  temporal: count('dated activities', 4),
  /** Questions about things never said (no `expect`). */
  abstention: count('abstention questions', 12),
});

const updatesSchema = z.strictObject({
  /** Corrections per chain, `[shortest, longest]`, spread evenly. */
  chain: range('corrections', 1, 3).default({ min: 1, max: 3 }),
  /** The share of chains (of 2 or more corrections) whose last correction returns to an earlier value. */
  revertShare: share(0.3),
});

const isoDate = z
  .string({ error: 'expected a date, e.g. 2025-03-03' })
  .regex(/^\d{4}-\d{2}-\d{2}$/u, 'expected a date as YYYY-MM-DD')
  .refine((value) => isoInstant(value) !== undefined, 'not a date');

const sessionsSchema = z.strictObject({
  /** Exchanges per session: a `session: new` (dated) starts every this many. */
  every: whole('exchanges').min(1, 'expected at least 1 exchange').default(24),
  /** The date of the first session. */
  start: isoDate.default('2025-03-03'),
  /** Days from one session to the next, `[fewest, most]`: each session is a day of its own. */
  daysApart: range('days', 1, 365).default({ min: 1, max: 3 }),
});

const fillerSchema = z.strictObject({
  /** The language of the filler exchanges: `same` as the conversation, or en, zh, mixed. */
  language: z.enum(['same', 'en', 'zh', 'mixed'], { error: 'expected one of same, en, zh, mixed' }).default('same'),
});

/** A spec's name leaves room for its scenarios' `-en` / `-zh` within a scenario name's limit. */
const SPEC_NAME_CHARS = MAX_SCENARIO_NAME_CHARS - 3;

const specSchema = z.strictObject({
  /** Names the scenarios: NAME-en, NAME-zh. */
  name: z
    .string({ error: 'expected a name' })
    .regex(SCENARIO_NAME_PATTERN, SCENARIO_NAME_RULE)
    .max(SPEC_NAME_CHARS, {
      error: (issue) =>
        `use at most ${SPEC_NAME_CHARS} characters (its scenarios are NAME-en and NAME-zh, whose names become file names), got ${String(issue.input).length}`,
    }),
  description: z.string({ error: 'expected a one-line description' }).optional(),
  /** The scenarios' `group` (default: the name), under which reports pool them. */
  group: z
    .string({ error: 'expected a group name' })
    .min(1, 'expected a group name, got an empty string')
    .refine((group) => group.length === 0 || group.trim() !== '', 'expected a group name, got only white space')
    .optional(),
  seed: rangeSchema(SEED_RANGE).default(42),
  /** One conversation per language. */
  languages: z
    .array(z.enum(GENERATED_LANGUAGES, { error: `expected one of ${GENERATED_LANGUAGES.join(', ')}` }), {
      error: 'expected a list of languages, e.g. [en, zh]',
    })
    .min(1, 'expected at least one language')
    .refine((languages) => new Set(languages).size === languages.length, 'a language is listed twice')
    .default(['en', 'zh']),
  /** User exchanges per conversation: the planted statements plus the filler around them. */
  exchanges: whole('exchanges')
    .min(1, 'expected at least 1 exchange')
    .max(20_000, 'expected at most 20000 exchanges')
    .default(280),
  /** Exchanges from a fact (its own exchange counted as 1) to the probes asking for it. */
  distances: z
    .array(whole('exchanges').min(1, 'expected a distance of at least 1'), {
      error: 'expected a list of distances, e.g. [1, 2, 4, 8]',
    })
    .min(1, 'expected at least one distance')
    .refine((distances) => new Set(distances).size === distances.length, 'a distance is listed twice')
    .transform((distances) => [...distances].sort((a, b) => a - b))
    .default(DEFAULT_DISTANCES),
  /** Each fact probed once per doubling of `distances`, the facts taking turns over its distances (true), or at every distance (false). */
  spread: z.boolean({ error: 'expected true or false' }).default(true),
  facts: factsSchema.prefault({}),
  updates: updatesSchema.prefault({}),
  /** The share of facts stated with an explicit `remember` step rather than mentioned in passing. */
  rememberShare: share(0.5),
  filler: fillerSchema.prefault({}),
  sessions: sessionsSchema.prefault({}),
});

/** A validated spec, defaults filled in. */
export type GeneratorSpec = z.output<typeof specSchema>;

/** Known keys of each mapping in a spec, for "unknown key" messages. */
const KNOWN_KEYS: Record<string, readonly string[]> = {
  '': Object.keys(specSchema.shape),
  facts: Object.keys(factsSchema.shape),
  updates: Object.keys(updatesSchema.shape),
  sessions: Object.keys(sessionsSchema.shape),
  filler: Object.keys(fillerSchema.shape),
};

type PathSegment = string | number;

/** What the parsed knobs cannot say alone: the bank's capacity, room in the conversation, sessions for dated facts. */
function crossChecks(
  spec: GeneratorSpec,
  given: (...at: string[]) => boolean,
  problem: (at: readonly PathSegment[], message: string) => void,
): void {
  const { facts, exchanges, distances, updates, sessions } = spec;
  const probed = facts.fact + facts.distractor + facts.update + facts['multi-hop'] + facts.temporal;
  if (probed + facts.abstention === 0) problem(['facts'], 'nothing to probe: every count is 0');
  if (!given('distances') && distances.at(-1)! > exchanges)
    problem(
      ['exchanges'],
      `${exchanges} exchanges are fewer than the largest default distance, ${distances.at(-1)}: raise exchanges or set distances`,
    );
  else {
    distances.forEach((distance, index) => {
      if (distance > exchanges)
        problem(
          ['distances', index],
          `distance ${distance} does not fit in a conversation of ${exchanges} exchanges (raise exchanges)`,
        );
    });
  }
  const planted =
    facts.fact +
    2 * facts.distractor +
    facts.update * (1 + updates.chain.max) +
    2 * facts['multi-hop'] +
    facts.temporal;
  if (planted > exchanges)
    problem(
      ['exchanges'],
      `${exchanges} exchanges cannot hold the up to ${planted} statements the facts need (fact + 2 × distractor + update × (1 + longest chain) + 2 × multi-hop + temporal)`,
    );
  const sessionCount = Math.ceil(exchanges / sessions.every);
  if (facts.temporal > sessionCount)
    problem(
      ['facts', 'temporal'],
      `each dated activity needs a day of its own: ${exchanges} exchanges in sessions of ${sessions.every} make ${sessionCount} days`,
    );
  if (given('updates', 'revertShare') && updates.revertShare > 0 && facts.update > 0 && updates.chain.max < 2)
    problem(
      ['updates', 'revertShare'],
      'a revert needs a chain of at least 2 corrections (raise the longest in updates.chain)',
    );
  for (const language of spec.languages) {
    const capacity = bankCapacity(language, updates.chain.max);
    const owners = facts.fact + 2 * facts.distractor + facts.update;
    const values = facts.fact + 2 * facts.distractor + facts.update * (updates.chain.max + 1);
    if (owners > capacity.owners)
      problem(
        ['facts'],
        `the ${language} fact bank holds ${capacity.owners} (topic, owner) pairs; fact + 2 × distractor + update asks for ${owners}`,
      );
    else if (values > capacity.values)
      problem(
        ['facts'],
        `the ${language} fact bank holds ${capacity.values} values; fact + 2 × distractor + update × (1 + longest chain) asks for ${values}`,
      );
    if (facts.update > capacity.chains)
      problem(
        ['facts', 'update'],
        `the ${language} fact bank holds ${capacity.chains} correction chains of ${updates.chain.max} correction${updates.chain.max === 1 ? '' : 's'}`,
      );
    if (facts['multi-hop'] > capacity.multiHop)
      problem(['facts', 'multi-hop'], `the ${language} bank holds ${capacity.multiHop} two-fact links`);
    if (facts.temporal > capacity.temporal)
      problem(['facts', 'temporal'], `the ${language} bank holds ${capacity.temporal} dated activities`);
    if (facts.abstention > capacity.abstention)
      problem(['facts', 'abstention'], `the ${language} bank holds ${capacity.abstention} never-stated subjects`);
  }
}

const SPEC_DOCUMENT: DocumentKind = { noun: 'generator spec', holds: '`name` and the knobs of a generated workload' };

/** A checked spec, or the located problems. */
export interface SpecCheck {
  spec?: GeneratorSpec;
  problems: Problem[];
}

/** Validates spec text; `file` names it in messages and, without a `name`, names the workload. */
export function checkSpecText(text: string, file: string): SpecCheck {
  const parsed = parseMappingText(text, file, SPEC_DOCUMENT);
  if (parsed.value === undefined) return { problems: parsed.problems };
  const { value, locate, problems } = parsed;
  const error = (at: readonly PathSegment[], message: string, where = locate.value(at)): void => {
    problems.push({ file, ...where, path: formatPath(at), message, severity: 'error' });
  };
  const fallbackName =
    path
      .basename(file)
      .replace(/\.(ya?ml|json)$/iu, '')
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/gu, '-')
      .replace(/^[^a-z0-9]+/u, '') || 'generated';
  const result = specSchema.safeParse({ name: fallbackName, ...value }, { reportInput: true });
  if (!result.success) {
    for (const issue of result.error.issues) {
      const at = issue.path as PathSegment[];
      if (issue.code !== 'unrecognized_keys') {
        error(at, describeIssue(issue));
        continue;
      }
      const known = KNOWN_KEYS[at.join('.')] ?? [];
      for (const key of issue.keys)
        error(
          [...at, key],
          `unknown key "${key}"${didYouMean(key, known)} (known: ${known.join(', ')})`,
          locate.key([...at, key]),
        );
    }
  } else {
    const given = (...at: string[]): boolean =>
      at.reduce<unknown>(
        (node, key) => (node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined),
        value,
      ) !== undefined;
    crossChecks(result.data, given, error);
  }
  problems.sort((a, b) => a.line - b.line || a.col - b.col);
  return problems.length > 0 || !result.success ? { problems } : { spec: result.data, problems };
}

/**
 * A spec object a program hands `generateWorkload`, checked as a spec file's knobs are (its
 * defaults filled in), or a MembenchError naming each bad knob: `{ seed: 'x' }` failed inside the
 * generator with a TypeError.
 */
export function checkedSpec(value: unknown): GeneratorSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `generateWorkload: expected a generator spec object, got ${kindOf(value)}`,
    );
  const result = specSchema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  throw new MembenchError(
    'INVALID_ARGUMENT',
    'generateWorkload: not a valid generator spec',
    result.error.issues.map(
      (issue) => `${formatPath(issue.path as PathSegment[]) || '(spec)'}: ${describeIssue(issue)}`,
    ),
  );
}

/** Validates a spec file: size, encoding, YAML, knobs. */
export async function checkSpecFile(file: string): Promise<SpecCheck> {
  const read = await readDocumentFile(file, MAX_SCENARIO_BYTES, SPEC_DOCUMENT);
  return 'text' in read ? checkSpecText(read.text, file) : read;
}

/** Loads a spec file or throws a MembenchError listing every located problem (exit 2). */
export async function loadSpecFile(file: string): Promise<GeneratorSpec> {
  const { spec, problems } = await checkSpecFile(file);
  if (!spec) throw invalidSpec(file, problems);
  return spec;
}

/** The error for an invalid spec: one line per problem. */
export function invalidSpec(file: string, problems: readonly Problem[]): MembenchError {
  return new MembenchError(
    'INVALID_SCENARIO',
    `${file}: invalid generator spec (${problems.length} problem${problems.length === 1 ? '' : 's'})`,
    problems.map(formatProblem),
  );
}
