/**
 * Reads scenario files (YAML or JSON), validates them and locates every problem at
 * `file:line:col: path: message`. Nothing runs until every selected file is valid.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import {
  isMap,
  isNode,
  isScalar,
  LineCounter,
  parseAllDocuments,
  parseDocument,
  type Document,
  type YAMLError,
} from 'yaml';
import type { z } from 'zod';
import { MembenchError } from '../core/errors.js';
import { jsonSyntaxError, positionOf } from '../core/json-errors.js';
import { LONE_SURROGATE_PROBLEM, loneSurrogatesIn } from '../core/text.js';
import { describeInput, didYouMean, formatPath, kindOf, typoOf } from '../core/user-input.js';
import { stepMessages } from './evidence.js';
import { scenarioWarnings } from './scenario-warnings.js';
import { repeatedKeyMessage, unreadTag, yamlNodeProblem } from './yaml-nodes.js';
import {
  scenarioHeader,
  STEP_KINDS,
  STEP_SCHEMAS,
  type CrashPoint,
  type Scenario,
  type Step,
  type StepKind,
} from './format.js';

/** Scenario files larger than this are refused before they are read. */
export const MAX_SCENARIO_BYTES = 16 * 1024 * 1024;
/** Deeper nesting than this is junk, not a scenario (and would cost stack to walk). */
export const MAX_NESTING = 64;

export interface Problem {
  file: string;
  line: number;
  col: number;
  /** Path inside the document, e.g. `steps[12].expect`; `(document)` for the whole file. */
  path: string;
  message: string;
  severity: 'error' | 'warning';
}

export interface ScenarioCheck {
  scenario?: Scenario;
  problems: Problem[];
  /** Where the scenario's `name` is (the document's start when it comes from the file name). */
  nameAt?: { line: number; col: number };
}

export interface CheckOptions {
  maxBytes?: number;
}

type PathSegment = string | number;

export { formatPath };

/** One line per problem: `file:line:col: path: message` (warnings say so). */
export function formatProblem(problem: Problem): string {
  const where = `${problem.file}:${problem.line}:${problem.col}: ${problem.path}: `;
  return where + (problem.severity === 'warning' ? `warning: ${problem.message}` : problem.message);
}

/** Positions of document paths in a parsed YAML document (also used by the config file loader). */
export class Locator {
  constructor(
    private readonly doc: Document.Parsed,
    private readonly lines: LineCounter,
  ) {}

  /** Position of the node at `segments`, or of its nearest existing ancestor. */
  value(segments: readonly PathSegment[]): { line: number; col: number } {
    for (let n = segments.length; n >= 0; n--) {
      const node = n === 0 ? this.doc.contents : this.doc.getIn(segments.slice(0, n), true);
      if (isNode(node) && node.range) return this.lines.linePos(node.range[0]);
    }
    return { line: 1, col: 1 };
  }

  /** Position of the key at the end of `segments` (for unknown-key warnings). */
  key(segments: readonly PathSegment[]): { line: number; col: number } {
    const parent = segments.length === 1 ? this.doc.contents : this.doc.getIn(segments.slice(0, -1), true);
    if (isMap(parent)) {
      const pair = parent.items.find(
        (item) => isScalar(item.key) && String(item.key.value) === String(segments.at(-1)),
      );
      if (pair && isNode(pair.key) && pair.key.range) return this.lines.linePos(pair.key.range[0]);
    }
    return this.value(segments);
  }
}

/** Turns zod's issue into a short sentence a user can act on. */
export function describeIssue(issue: z.core.$ZodIssue): string {
  const input = (issue as { input?: unknown }).input;
  if (issue.code === 'invalid_type') {
    if (input === undefined)
      return issue.message.startsWith('Invalid input') ? 'required' : `required: ${issue.message}`;
    if (issue.message.startsWith('Invalid input')) return `expected ${issue.expected}, got ${describeInput(input)}`;
    return `${issue.message}, got ${describeInput(input)}`;
  }
  if (issue.code === 'invalid_value') {
    if (!issue.message.startsWith('Invalid')) return `${issue.message}, got ${describeInput(input)}`;
    return `expected one of ${issue.values.map(String).join(', ')}; got ${describeInput(input)}`;
  }
  // A bound's words say the range, not what was written (`seed: -1` read "expected a whole number from 0 to …").
  if (
    (issue.code === 'too_small' || issue.code === 'too_big') &&
    typeof input === 'number' &&
    !/\bgot\b/u.test(issue.message)
  )
    return `${issue.message}, got ${describeInput(input)}`;
  return issue.message;
}

/** Depth of the deepest nesting, walked iteratively so junk cannot overflow the stack. */
function nestingPath(value: unknown, limit: number): PathSegment[] | undefined {
  const stack: { value: unknown; path: PathSegment[] }[] = [{ value, path: [] }];
  while (stack.length > 0) {
    const { value: current, path: at } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (at.length >= limit) return at;
    const entries: [PathSegment, unknown][] = Array.isArray(current)
      ? current.map((item, index) => [index, item])
      : Object.entries(current);
    for (const [key, child] of entries) stack.push({ value: child, path: [...at, key] });
  }
  return undefined;
}

/** A `.json` file: JSON.parse checks its text first, as the YAML parser would take what JSON refuses (a trailing comma, a comment). */
export const isJsonFile = (file: string): boolean => /\.json$/iu.test(file);

/**
 * How a file's syntax problems begin: `invalid JSON` for a .json file (the same YAML parser reads
 * it, JSON being YAML, but its user wrote JSON), else `invalid YAML`. Every loader says it so.
 */
export function invalidSyntax(file: string): string {
  return `invalid ${isJsonFile(file) ? 'JSON' : 'YAML'}`;
}

/**
 * The document as plain data, or why it cannot be: nesting too deep for the stack, a tag, or
 * aliases (yamlNodeProblem) expanding it past MAX_SCENARIO_BYTES characters (what a file may hold
 * written out), past MAX_ANCHORS_AND_ALIASES or without end, refused with the node's `offset`
 * instead of thrown (also used by the config loader).
 */
export function documentValue(
  doc: Document.Parsed,
  file: string,
): { value: unknown } | { problem: string; offset?: number } {
  try {
    const found = yamlNodeProblem(doc, MAX_SCENARIO_BYTES);
    if (found) return { problem: `${invalidSyntax(file)}: ${found.problem}`, offset: found.offset };
    // yamlNodeProblem has bounded the expansion: the library's own count (100 copies of one anchor) is off.
    return { value: doc.toJS({ maxAliasCount: -1 }) };
  } catch (error) {
    if (error instanceof RangeError) return { problem: `nested too deeply to parse (more than ${MAX_NESTING} levels)` };
    return { problem: `${invalidSyntax(file)}: ${(error as Error).message.split('\n')[0]!}` };
  }
}

/**
 * A `crash` arms its point for the next step that runs in the agent (session boundaries and
 * concurrent blocks pass it on): with no such step it has nothing left to crash into, and one
 * followed by another crash would be replaced before it could fire.
 */
function checkCrashTargets(
  steps: readonly Step[],
  error: (segments: readonly PathSegment[], message: string) => void,
): void {
  steps.forEach((step, index) => {
    if (step.kind !== 'crash') return;
    const target = steps.findIndex((next, at) => at > index && next.kind !== 'session' && next.kind !== 'concurrent');
    if (target < 0)
      error(
        ['steps', index, 'crash'],
        'a crash with no step after it has nothing left to crash into: put it before the step it should interrupt',
      );
    else if (steps[target]!.kind === 'crash')
      error(
        ['steps', index, 'crash'],
        `two crash steps in a row: this one would be replaced by steps[${target}] before it fired; keep one`,
      );
    else {
      const never = neverFires(step.crash, steps[target]!);
      if (never)
        error(['steps', index, 'crash'], `${step.crash} before steps[${target}], ${never}: it would never fire`);
    }
  });
}

/**
 * Why a crash at `point` cannot fire in a step of `kind` (the only step it is armed for), or
 * undefined when it can: a probe saves nothing and passes no crash point, only a remember is
 * acknowledged, only a tool step calls a tool, and the loop calls the model only to answer a message (a
 * user message with a reply, a remember or a forget: agent/loop.ts). Such a crash was reported as not
 * reached, and the durability it was to test shown as held.
 */
function neverFires(point: CrashPoint, step: Step): string | undefined {
  const kind = step.kind;
  if (kind === 'probe') return 'a probe (it saves nothing and passes no crash point)';
  if (point === 'before_model_call') {
    if (kind === 'user' && step.reply === false)
      return 'a user step with `reply: false` (nobody answers it: no model call)';
    if (kind === 'assistant' || kind === 'tool') return `${aStep(kind)} (it saves a scripted message: no model call)`;
  }
  if (point === 'after_ack' && kind !== 'remember') return `${aStep(kind)} (only a remember is acknowledged)`;
  if (point.startsWith('after_tool_') && kind !== 'tool') return `${aStep(kind)} (only a tool step calls a tool)`;
  return undefined;
}

/** `a user step`, `an assistant step`. */
const aStep = (kind: StepKind): string => `${kind === 'assistant' ? 'an' : 'a'} ${kind} step`;

/** What the steps that put no message into the conversation are, for evidence that cites one. */
const NOT_A_MESSAGE: Partial<Record<StepKind, string>> = {
  probe: 'a probe',
  session: 'a session boundary',
  crash: 'a crash point',
  filler: 'a filler step (its generated turns have no ids)',
  concurrent: 'a concurrent block (cite the steps of its sessions)',
};

/** What a kind of document is called in messages: `a scenario`, holding `` `name` and `steps` ``. */
export interface DocumentKind {
  noun: string;
  holds: string;
}

const SCENARIO_DOCUMENT: DocumentKind = { noun: 'scenario', holds: '`name` and `steps`' };

/**
 * YAML text with each lone CR (classic Mac line ends) made a LF: YAML 1.2 reads a lone CR as a line
 * break, the yaml package and its LineCounter do not (every line would be line 1). Same length, so
 * offsets into the text stay valid.
 */
export function yamlLineBreaks(text: string): string {
  return text.includes('\r') ? text.replace(/\r(?!\n)/gu, '\n') : text;
}

/**
 * The yaml package's complaint in a line: a second document counted and said as the file kind's
 * mistake (the package says "please use YAML.parseAllDocuments()"), the position suffix dropped.
 */
export function yamlErrorMessage(error: YAMLError, text: string, kind: DocumentKind): string {
  if (error.code === 'MULTIPLE_DOCS') {
    let count: number | undefined;
    try {
      count = parseAllDocuments(text).length;
    } catch {
      count = undefined;
    }
    return `the file holds ${count && count > 1 ? count : 'more than one'} YAML documents (a line with --- starts one): a ${kind.noun} is one YAML document`;
  }
  // A tag the yaml package resolves and then rejects the value of (`!!timestamp notadate`): refused as a tag, as `!!timestamp 2024-01-01` is.
  const tag = error.code === 'TAG_RESOLVE_FAILED' ? /^(!\S*)/u.exec(error.message)?.[1] : undefined;
  if (tag !== undefined) return unreadTag(tag);
  const repeated = error.code === 'DUPLICATE_KEY' ? repeatedKeyMessage(text, error.pos[0]) : undefined;
  if (repeated !== undefined) return repeated;
  return error.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/u, '');
}

/** A parsed mapping and the locator of its nodes, or the located problems that stopped parsing. */
export type ParsedMapping =
  | { value: Record<string, unknown>; locate: Locator; problems: Problem[] }
  | { value?: undefined; problems: Problem[] };

/**
 * Parses YAML (or JSON) text that must hold one mapping, locating every problem: a BOM is
 * dropped; empty text, NUL bytes, YAML errors, a second document, too many aliases, nesting past
 * MAX_NESTING and a non-mapping are refused. Scenario files and generator specs share it.
 */
export function parseMappingText(text: string, file: string, kind: DocumentKind = SCENARIO_DOCUMENT): ParsedMapping {
  const problems: Problem[] = [];
  const fail = (
    where: { line: number; col: number },
    segments: readonly PathSegment[],
    message: string,
  ): ParsedMapping => {
    problems.push({ file, ...where, path: formatPath(segments), message, severity: 'error' });
    return { problems };
  };

  if (text.startsWith('\uFEFF')) text = text.slice(1);
  text = yamlLineBreaks(text);
  if (text.trim().length === 0)
    return fail({ line: 1, col: 1 }, [], `file is empty: expected a ${kind.noun} with ${kind.holds}`);
  const nul = text.indexOf('\u0000');
  if (nul >= 0) return fail(positionOf(text, nul), [], `binary data (a NUL byte): a ${kind.noun} is YAML or JSON text`);
  // A .json file is JSON: the YAML parser below would take a trailing comma or a comment in it.
  const jsonError = isJsonFile(file) ? jsonSyntaxError(text) : undefined;
  if (jsonError) return fail(jsonError.where, [], `${invalidSyntax(file)}: ${jsonError.message}`);

  const lines = new LineCounter();
  let doc: Document.Parsed;
  try {
    doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  } catch (error) {
    if (error instanceof RangeError)
      return fail({ line: 1, col: 1 }, [], `nested too deeply to parse (more than ${MAX_NESTING} levels)`);
    throw error;
  }
  const exhausted = doc.errors.find((error) => error.code === 'RESOURCE_EXHAUSTION');
  if (exhausted)
    return fail(
      exhausted.linePos?.[0] ?? positionOf(text, exhausted.pos[0]),
      [],
      `nested too deeply to parse (more than ${MAX_NESTING} levels)`,
    );
  const seen = new Set<string>();
  for (const error of doc.errors) {
    const where = error.linePos?.[0] ?? positionOf(text, error.pos[0]);
    // Later errors at the same place are cascades of the first.
    if (seen.has(`${where.line}:${where.col}`)) continue;
    seen.add(`${where.line}:${where.col}`);
    problems.push({
      file,
      ...where,
      path: '(document)',
      message: `${invalidSyntax(file)}: ${yamlErrorMessage(error, text, kind)}`,
      severity: 'error',
    });
  }
  if (problems.length > 0) return { problems };

  const locate = new Locator(doc, lines);
  const converted = documentValue(doc, file);
  if ('problem' in converted)
    return fail(
      converted.offset === undefined ? { line: 1, col: 1 } : lines.linePos(converted.offset),
      [],
      converted.problem,
    );
  const value = converted.value;
  const deep = nestingPath(value, MAX_NESTING);
  if (deep)
    return fail(
      locate.value(deep.slice(0, 2)),
      deep.slice(0, 2),
      `nested more than ${MAX_NESTING} levels deep: not a ${kind.noun}`,
    );
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return fail(locate.value([]), [], `expected a mapping with ${kind.holds}, got ${describeInput(value)}`);
  }
  return { value: value as Record<string, unknown>, locate, problems };
}

/** Validates scenario text; `file` is only used in messages. */
export function checkScenarioText(text: string, file: string): ScenarioCheck {
  if (typeof text !== 'string')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `checkScenarioText: expected the text of a scenario file, got ${kindOf(text)}`,
    );
  const parsed = parseMappingText(text, file);
  if (parsed.value === undefined) return { problems: parsed.problems };
  const check = checkScenarioValue(parsed.value, file, parsed.locate, parsed.problems);
  // Copied out of the file's text (structuredClone makes every string anew): a string the YAML
  // parser gives is a view into that text, and one kept after its scenario (its name in the results
  // header or a shelved scenario's stand-in, an expect string in the results) kept the whole file
  // alive, ~6.6 MB for a file of one LongMemEval_M question.
  return check.scenario ? { ...check, scenario: structuredClone(check.scenario) } : check;
}

/** Where a problem of a document that was never text is: its first line (its path names the field). */
const NO_TEXT: Pick<Locator, 'value' | 'key'> = {
  value: () => ({ line: 1, col: 1 }),
  key: () => ({ line: 1, col: 1 }),
};

/**
 * Validates a scenario given as data (parsed text, or a document an importer built: no YAML round
 * trip, which costs a replayed LongMemEval question ~60 ms). `locate` places problems in the text
 * the value came from; `file` is only used in messages.
 */
export function checkScenarioValue(
  value: Record<string, unknown>,
  file: string,
  locate: Pick<Locator, 'value' | 'key'> = NO_TEXT,
  problems: Problem[] = [],
): ScenarioCheck {
  // Without a `name`, the file name (cleaned to the allowed characters) names the scenario.
  const fallbackName =
    path
      .basename(file)
      .replace(/\.(ya?ml|json)$/iu, '')
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/gu, '-')
      .replace(/^[^a-z0-9]+/u, '') || 'scenario';
  const record = { name: fallbackName, ...(value as Record<string, unknown>) };
  const error = (segments: readonly PathSegment[], message: string): void => {
    problems.push({ file, ...locate.value(segments), path: formatPath(segments), message, severity: 'error' });
  };
  const warnUnknownKeys = (object: object, known: readonly string[], at: readonly PathSegment[]): void => {
    for (const key of Object.keys(object)) {
      if (key === '<<') {
        // Ignored with a warning, the keys it was to merge were dropped and the run went on without them.
        problems.push({
          file,
          ...locate.key([...at, key]),
          path: formatPath([...at, key]),
          message: 'a YAML merge key (<<) is not read (YAML 1.2 has none): write the keys out',
          severity: 'error',
        });
        continue;
      }
      if (!known.includes(key)) {
        const segments = [...at, key];
        problems.push({
          file,
          ...locate.key(segments),
          path: formatPath(segments),
          message: `unknown key "${key}"${didYouMean(key, known)} (ignored)`,
          severity: 'warning',
        });
      }
    }
  };

  // A `"\ud800"` escape is no text: matched against nothing and written back as no valid UTF-8.
  for (const at of loneSurrogatesIn(value, 5).paths) error(at, LONE_SURROGATE_PROBLEM);

  const header = scenarioHeader.safeParse(record, { reportInput: true });
  if (!header.success) {
    const unknownKeys = Object.keys(value).filter((key) => !(key in scenarioHeader.shape));
    for (const issue of header.error.issues) {
      const fromFileName = issue.path[0] === 'name' && value.name === undefined;
      // A required key missing beside an unknown key a typo away (`stpes:`): the warning about the
      // unknown key is never shown when the file fails, so the error says it.
      const missing = issue.path.length === 1 && !(String(issue.path[0]) in value) ? String(issue.path[0]) : undefined;
      const typo = missing === undefined ? undefined : typoOf(missing, unknownKeys);
      if (typo !== undefined) {
        problems.push({
          file,
          ...locate.key([typo]),
          path: formatPath(issue.path as PathSegment[]),
          message: `${describeIssue(issue)} (found "${typo}": a typo?)`,
          severity: 'error',
        });
        continue;
      }
      error(
        issue.path as PathSegment[],
        describeIssue(issue) + (fromFileName ? ' (the name comes from the file name: give the scenario a `name`)' : ''),
      );
    }
    return { problems };
  }
  warnUnknownKeys(value, Object.keys(scenarioHeader.shape), []);

  // Each id: where it is first used, and the step it names (a replyId: its user step).
  const ids = new Map<string, { at: string; step: Step }>();
  // Ids a derived document cites (`cites`): evidence may name them though no step has them.
  const cited = new Set<string>();
  const probes: { step: Step; evidence: string[]; at: PathSegment[]; known: ReadonlySet<string> }[] = [];
  /** `inSession`: the steps of one concurrent session, where crashes and nested concurrency have no meaning. */
  const parseSteps = (raw: readonly unknown[], at: readonly PathSegment[], inSession = false): Step[] => {
    const steps: Step[] = [];
    raw.forEach((item, index) => {
      const segments = [...at, index];
      if (item === null || typeof item !== 'object' || Array.isArray(item)) {
        error(segments, `expected a step (a mapping with one of ${STEP_KINDS.join(', ')}), got ${describeInput(item)}`);
        return;
      }
      let kinds = Object.keys(item).filter((key): key is StepKind => (STEP_KINDS as readonly string[]).includes(key));
      // `assistant` is the scripted reply of a user step, and a step of its own without `user`.
      if (kinds.includes('user')) kinds = kinds.filter((kind) => kind !== 'assistant');
      if (kinds.length === 0) {
        const keys = Object.keys(item).filter((key) => key !== 'id');
        error(
          segments,
          `unknown step kind${keys.length ? ` "${keys[0]}"` : ''}: a step needs one of ${STEP_KINDS.join(', ')}`,
        );
        return;
      }
      if (kinds.length > 1) {
        error(segments, `a step has exactly one kind, found ${kinds.join(' and ')}`);
        return;
      }
      const kind = kinds[0]!;
      if (inSession && (kind === 'crash' || kind === 'concurrent')) {
        error(
          segments,
          kind === 'crash'
            ? 'a crash cannot run inside a concurrent session (the sessions run at once): put it before or after the concurrent step'
            : 'concurrent steps do not nest: list every session as one list of the outer concurrent step',
        );
        return;
      }
      const schema: z.ZodType = STEP_SCHEMAS[kind];
      const parsed = schema.safeParse(item, { reportInput: true });
      if (!parsed.success) {
        // A merge key is said first: what the step lacks may be what it was to merge.
        if ('<<' in item) warnUnknownKeys({ '<<': item['<<'] }, [], segments);
        for (const issue of parsed.error.issues)
          error([...segments, ...(issue.path as PathSegment[])], describeIssue(issue));
        return;
      }
      const shape = STEP_SCHEMAS[kind] as unknown as { shape?: Record<string, unknown> };
      warnUnknownKeys(item, Object.keys(shape.shape ?? {}), segments);
      // Object.assign, not `{ ...data, kind }`: in Node 20's V8 a property added after an object
      // spread gives every object its own hidden class (~120 bytes a step, and megamorphic reads).
      const step = Object.assign({}, parsed.data as object, { kind }) as Step;
      // An abstention probe has no answer: `expect: []` says so as well as leaving it out.
      if (step.kind === 'probe' && step.expect?.length === 0) delete step.expect;
      for (const [key, id] of [
        ['id', step.id],
        ['replyId', step.kind === 'user' ? step.replyId : undefined],
      ] as const) {
        if (id === undefined) continue;
        const first = ids.get(id);
        if (first) error([...segments, key], `duplicate id "${id}" (first used at ${first.at})`);
        else ids.set(id, { at: formatPath(segments), step });
      }
      if (step.kind === 'user' && step.replyId !== undefined && step.assistant === undefined)
        error([...segments, 'replyId'], 'a replyId names the scripted reply: this step has no `assistant`');
      if (step.kind === 'user') for (const id of step.cites ?? []) cited.add(id);
      if (step.kind === 'probe')
        probes.push({
          step,
          evidence: step.evidence,
          at: [...segments, 'evidence'],
          known: new Set([...ids.keys(), ...cited]),
        });
      if (step.kind === 'concurrent') {
        const sessions = (item as { concurrent: unknown[][] }).concurrent;
        step.concurrent = sessions.map((session, sessionIndex) =>
          parseSteps(session, [...segments, 'concurrent', sessionIndex], true),
        );
      }
      steps.push(step);
    });
    return steps;
  };
  const steps = parseSteps(header.data.steps, ['steps']);
  checkCrashTargets(steps, error);
  for (const probe of probes) {
    probe.evidence.forEach((id, index) => {
      const named = ids.get(id)?.step;
      // Evidence recall holds what a step puts into the conversation (evidence.ts stepMessages): a
      // step with no message could never be held, and its probe would score 0 whatever the strategy.
      if (named !== undefined && !cited.has(id) && stepMessages(named).length === 0)
        error(
          [...probe.at, index],
          `step "${id}" is ${named === probe.step ? 'this probe itself' : (NOT_A_MESSAGE[named.kind] ?? `a ${named.kind} step`)}, not a message of the conversation: cite the user, assistant, tool, remember or forget step that holds the answer`,
        );
      // A derived corpus's questions cite its dialog's messages, which it replays only through `cites` (or not at all).
      else if (header.data.documents !== undefined) return;
      else if (named === undefined && !cited.has(id)) error([...probe.at, index], `no step has id "${id}"`);
      else if (!probe.known.has(id))
        error([...probe.at, index], `step "${id}" comes after this probe: evidence must precede the question`);
    });
  }
  if (problems.some((problem) => problem.severity === 'error')) return { problems };
  // Only of a valid file: an invalid step is left out of `steps`, and the indices would shift.
  for (const { segments, message } of scenarioWarnings(steps))
    problems.push({ file, ...locate.value(segments), path: formatPath(segments), message, severity: 'warning' });
  const { steps: _raw, ...rest } = header.data;
  return { scenario: { ...rest, source: file, steps }, problems, nameAt: locate.key(['name']) };
}

/**
 * Scenarios of different files under one name: a run refuses them together (their cell ids would
 * collide: run/plan.ts), so `validate` of those files does too, at the second file's `name`.
 */
export function sameNameProblems(checks: readonly ScenarioCheck[]): Problem[] {
  const first = new Map<string, string>();
  const problems: Problem[] = [];
  for (const { scenario, nameAt } of checks) {
    if (!scenario) continue;
    const source = path.resolve(scenario.source);
    const earlier = first.get(scenario.name);
    if (earlier === undefined) first.set(scenario.name, source);
    else if (earlier !== source)
      problems.push({
        file: scenario.source,
        ...(nameAt ?? { line: 1, col: 1 }),
        path: 'name',
        message: `"${scenario.name}" is also the name of ${path.relative(process.cwd(), earlier) || earlier}: a run of both refuses them (cell ids would collide): rename one`,
        severity: 'error',
      });
  }
  return problems;
}

/** The text of a document file, or the problem that stops it being read: missing, not a file, over `maxBytes`, not UTF-8. */
export async function readDocumentFile(
  file: string,
  maxBytes: number,
  kind: DocumentKind = SCENARIO_DOCUMENT,
): Promise<{ text: string } | { problems: Problem[] }> {
  const problem = (message: string): { problems: Problem[] } => ({
    problems: [{ file, line: 1, col: 1, path: '(document)', message, severity: 'error' }],
  });
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) return problem('not a file');
    size = info.size;
  } catch (error) {
    return problem(
      `cannot read: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
    );
  }
  const article = /^[aeiou]/iu.test(kind.noun) ? 'an' : 'a';
  if (size > maxBytes)
    return problem(`file is ${size} bytes, over the ${maxBytes}-byte limit for ${article} ${kind.noun}`);
  const bytes = await readFile(file);
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return problem(`not UTF-8 text (binary data?): ${article} ${kind.noun} is YAML or JSON text`);
  }
}

/**
 * The text of a small document file a run reads beside its data (judge prompts, errata, a config
 * file), or a MembenchError naming the file and why it is refused: missing, not a file, over
 * `maxBytes`, not UTF-8 (never read with U+FFFD in place of its bytes).
 */
export async function readBoundedText(file: string, maxBytes: number, kind: DocumentKind): Promise<string> {
  const read = await readDocumentFile(file, maxBytes, kind);
  if ('text' in read) return read.text;
  throw new MembenchError('INVALID_ARGUMENT', formatProblem(read.problems[0]!));
}

/** Validates one scenario file: size, encoding, YAML, schema, ids and evidence. */
export async function checkScenarioFile(file: string, options: CheckOptions = {}): Promise<ScenarioCheck> {
  const read = await readDocumentFile(file, options.maxBytes ?? MAX_SCENARIO_BYTES);
  return 'text' in read ? checkScenarioText(read.text, file) : read;
}

/** Loads a scenario file or throws a MembenchError listing every located problem. */
export async function loadScenarioFile(file: string, options: CheckOptions = {}): Promise<Scenario> {
  const { scenario, problems } = await checkScenarioFile(file, options);
  if (!scenario) {
    const errors = problems.filter((item) => item.severity === 'error');
    throw new MembenchError(
      'INVALID_SCENARIO',
      `${file}: invalid scenario (${errors.length} problem${errors.length === 1 ? '' : 's'})`,
      problems.map(formatProblem),
    );
  }
  return scenario;
}
