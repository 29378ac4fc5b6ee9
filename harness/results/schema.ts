/**
 * What `results.json` holds, described once: zod schemas from which every results type is
 * inferred. The runner builds these objects, the reporters read them, and `report`, `compare`,
 * `merge` and `--resume` read files back through the same schemas.
 */
import { z } from 'zod';
import { DURABILITY_MODES } from '../core/durability-mode.js';
import { strategyTraitsSchema } from '../core/strategy-traits.js';
import type { Distribution, Rate } from '../core/metrics.js';
import { shownValue } from '../core/user-input.js';
import type { ModelUsage } from '../models/index.js';
import { CRASH_POINTS, DERIVED_DOCUMENTS, PROBE_CATEGORIES } from '../scenarios/format.js';
import type { ErrataReport } from '../scenarios/importers/shared.js';
import { PROTOCOLS } from './protocol-names.js';

/**
 * Bumped whenever a field changes meaning or disappears (2: answer accuracy leaves out abstention
 * probes, which score apart; 3: evidence is cited per message and held only when quoted by
 * strategies that keep messages verbatim, `retrieved` holds message ids; 4: one name per thing: a
 * strategy setting's name is `setting` (was `label`), a cell's crash and invariant results are
 * `durabilityOutcome` (was `faults`), the ledger's counts are `effectsDuplicated` and
 * `effectsRefused` (were `duplicates` and `refused`), as in the durability counts; 5: `--protocol
 * longmemeval`'s session figures of turn rankings follow evaluate_retrieval_turn2session (only
 * has_answer turns find a gold session and are relevant in NDCG), its questions without a
 * has_answer user turn are recorded (`noTarget`), and a cell's protocol figures carry both
 * averagings (`summary` may be absent); 6: a cell is a union on `status`: an `error` cell holds its error
 * and phase and no figures (it held zeroed or partial ones that every reader had to leave out); 7: a
 * probe's `contextTokens`, `answerRecall` and `evidenceCoverage` may be absent (a ranking-only cell
 * does not measure them: its `skipped` holds `context figures`).
 */
export const RESULTS_SCHEMA_VERSION = 7 as const;
/**
 * Versions `readResults` still reads: 2 and 3 have the same figures under the older names (read.ts
 * renames them on reading; version 2's evidence figures followed the older rule); 4 has the same
 * shape (its LongMemEval turn→session figures followed the older rule: any user turn of a gold
 * session counted); 2 to 5 gave an errored cell the figures of whatever it had recorded (read.ts
 * drops them on reading and writes an older file's error cells back with zeroed ones); 6 has the
 * same shape, every probe with its context figures.
 */
const READABLE_VERSIONS = [2, 3, 4, 5, 6, RESULTS_SCHEMA_VERSION] as const;
export const READABLE_SCHEMA_VERSIONS: readonly number[] = READABLE_VERSIONS;

export { PROTOCOLS, type Protocol } from './protocol-names.js';

/**
 * The numbers results.json holds, named for what they are, each checked for what it can be: a
 * figure no run can produce (99 hits of 1, a recall of 2, -5 tokens) is refused where the file is
 * read, naming the field, never shown. Each message names the value found.
 */
const finite = z.number().finite();
/** The message of a number outside what its field can hold: `expected 0 or more, got -5`. */
const outside = (expected: string) => ({
  error: (issue: { input?: unknown }) => `expected ${expected}, got ${String(issue.input)}`,
});
/** Something counted: probes, hits, tokens, calls, steps, crashes, losses (tokenizer counts and tallies: whole numbers). */
const count = finite.refine((value) => Number.isInteger(value) && value >= 0, outside('a whole number, 0 or more'));
/** Measured time in milliseconds (differences of a monotonic clock, or CPU time). */
const ms = finite.min(0, outside('a time of 0 ms or more'));
/** Something measured that is not whole: a mean of counts (tokens per turn), a size in MiB. */
const amount = finite.min(0, outside('0 or more'));
/** A share of a whole (0 to 1), or the mean of such shares: recall, NDCG, coverage, F1. */
const share = finite.min(0, outside('a share from 0 to 1')).max(1, outside('a share from 0 to 1'));
const durabilityMode = z.enum(DURABILITY_MODES);
const probeCategory = z.enum(PROBE_CATEGORIES);
const crashPoint = z.enum(CRASH_POINTS);

/** A cell's latencies (load, save, model calls: the only distributions results hold), so times of 0 ms or more. */
export const distributionSchema = z
  .object({
    n: count,
    mean: ms,
    p50: ms,
    p95: ms,
    p99: ms,
    max: ms,
  })
  .superRefine((figures, context) => {
    // No value measured: harness/core/metrics.ts `distribution` writes every figure 0.
    if (figures.n !== 0) return;
    for (const key of ['mean', 'p50', 'p95', 'p99', 'max'] as const)
      if (figures[key] !== 0)
        context.addIssue({ code: 'custom', path: [key], message: `expected 0 (n is 0), got ${figures[key]}` });
  }) satisfies z.ZodType<Distribution>;
/** How far a stored share may sit from hits / n (harness/core/metrics.ts `rate` writes exactly that). */
const RATE_TOLERANCE = 1e-9;
/** A share with its count (harness/core/metrics.ts `rate`): hits of n probes, and `value` hits / n, null when n is 0. */
export const rateSchema = z
  .object({ n: count, hits: count, value: share.nullable() })
  .superRefine(({ n, hits, value }, context) => {
    if (hits > n)
      context.addIssue({ code: 'custom', path: ['hits'], message: `${hits} ${hits === 1 ? 'hit' : 'hits'} of ${n}` });
    else if (n === 0 && value !== null)
      context.addIssue({ code: 'custom', path: ['value'], message: `expected null (n is 0), got ${value}` });
    else if (n > 0 && (value === null || (value >= 0 && value <= 1 && Math.abs(value - hits / n) > RATE_TOLERANCE)))
      context.addIssue({ code: 'custom', path: ['value'], message: `expected hits / n = ${hits}/${n}, got ${value}` });
  }) satisfies z.ZodType<Rate>;
export const usageSchema = z.object({
  maintenanceCalls: count,
  maintenanceTokens: count,
  answerTokens: count,
  replyTokens: count,
  cachedCalls: count,
  truncatedAnswers: count.optional(),
  emptyAnswers: count.optional(),
  cutAnswers: count.optional(),
}) satisfies z.ZodType<ModelUsage>;

/** A mean with the number of probes behind it (harness/results/recall.ts `meanOf`: `mean` null when n is 0, and only then). */
export const meanSchema = z.object({ n: count, mean: share.nullable() }).superRefine(({ n, mean }, context) => {
  if ((n === 0) !== (mean === null))
    context.addIssue({
      code: 'custom',
      path: ['mean'],
      message: n === 0 ? `expected null (n is 0), got ${mean}` : `expected the mean of ${n} shares, got null`,
    });
});
export type Mean = z.infer<typeof meanSchema>;

export const recallSummarySchema = z.object({
  /** An expect string in the context (answerable probes). */
  contextRecall: rateSchema,
  /** A forbid string in the context and no expect string (answerable probes). */
  staleExposure: rateSchema,
  /** Answerable probes whose answer holds an expect string and no forbid string (abstention probes score in `abstention`). */
  answerAccuracy: rateSchema,
  /** Union coverage: mean share of the evidence steps' content words anywhere in the context (secondary to evidenceRecall). */
  evidenceCoverage: meanSchema,
  /** A forbid string in the context at all, with or without the current value (answerable probes). */
  conflictExposure: rateSchema,
  /** Mean share of the gold answer's content words found within one context message (probes whose gold has content words). */
  answerRecall: meanSchema,
  /** Mean share of a probe's evidence steps the context holds (probes with evidence). */
  evidenceRecall: meanSchema,
  /** Abstention probes whose answer declined (and named no forbid string). */
  abstention: rateSchema,
  /** Mean of the dataset's own answer score (LoCoMo token F1; its adversarial items 0/1 by abstention phrase) over the probes that carry one. */
  answerF1: meanSchema,
});
export type RecallSummary = z.infer<typeof recallSummarySchema>;

/** Retrieval at one k (docs/design.md §5, as in LongMemEval): per probe 0/1 recalls and an NDCG; pooled, their means. */
export const retrievalAtKSchema = z.object({
  k: count,
  recallAny: share,
  recallAll: share,
  ndcg: share,
  /** The share of the evidence in the top k (`--protocol locomo`'s recall). Absent in older files and other protocols. */
  recall: share.optional(),
});
export type RetrievalAtK = z.infer<typeof retrievalAtKSchema>;

/** A probe's retrieval figures at each k: turn level, and session level for scenarios with sessions. */
export const retrievalFiguresSchema = z.object({
  turn: z.array(retrievalAtKSchema),
  session: z.array(retrievalAtKSchema).optional(),
});
export type RetrievalFigures = z.infer<typeof retrievalFiguresSchema>;

/**
 * Retrieval at one k under `--protocol`: as above, but NDCG is only checked to be 0 or more. Under
 * LongMemEval's rules (protocols.ts `longMemEvalFigures`) a ranked item counts as its first user
 * turn, and a strategy whose items share turns (entity's summaries cite the same exchanges) ranked
 * one turn several times, each copy counted relevant: NDCG above 1 in files membench wrote before
 * it ranked each turn once. Such files still read.
 */
const protocolAtKSchema = retrievalAtKSchema.extend({ ndcg: amount });

/** A probe's figures under `--protocol`. */
export const protocolFiguresSchema = z.object({
  turn: z.array(protocolAtKSchema),
  session: z.array(protocolAtKSchema).optional(),
  /**
   * LongMemEval: the question has no has_answer user turn, so no gold in the paper's corpus; scored
   * as its code scores it (recall_any 0, recall_all 1, NDCG 0) and averaged only in the cell's
   * `nonAbstentionSummary` (print_retrieval_metrics.py's convention).
   */
  noTarget: z.literal(true).optional(),
});
export type ProtocolFigures = z.infer<typeof protocolFiguresSchema>;

/** Means over the `n` probes that have figures at this level. */
export const retrievalLevelSchema = z.object({ n: count, atK: z.array(retrievalAtKSchema) });
export type RetrievalLevel = z.infer<typeof retrievalLevelSchema>;

/** A cell's (or a category's) retrieval figures, pooled. */
export const retrievalSummarySchema = z.object({
  turn: retrievalLevelSchema,
  session: retrievalLevelSchema.optional(),
});
export type RetrievalSummary = z.infer<typeof retrievalSummarySchema>;

/** The same pooled under `--protocol` (NDCG as protocolAtKSchema checks it). */
const protocolLevelSchema = z.object({ n: count, atK: z.array(protocolAtKSchema) });
const protocolSummarySchema = z.object({ turn: protocolLevelSchema, session: protocolLevelSchema.optional() });

/** One conversational step: what was loaded and how long load and save took. */
export const turnRecordSchema = z.object({
  step: count,
  turn: count,
  kind: z.enum(['user', 'assistant', 'tool', 'remember', 'forget']),
  /** Tokens the strategy loaded for the model call; null when the step made no model call. */
  contextTokens: count.nullable(),
  loadMs: ms.nullable(),
  saveMs: ms,
  /** Why the strategy refused the step (a memory over its size budget, an unsafe name). */
  refused: z.string().optional(),
  /** A scripted turn outside the cell's seeded sample: its context was not assembled (no model reads it); see `tokens.contextSample`. */
  contextSkipped: z.literal(true).optional(),
});
export type TurnRecord = z.infer<typeof turnRecordSchema>;

/** What a judge said of one answer: `unparsed` when its reply was neither yes nor no (counted, never read as a no). */
export const JUDGE_VERDICTS = ['yes', 'no', 'unparsed'] as const;
export type JudgeVerdict = (typeof JUDGE_VERDICTS)[number];

/** One judge's judgement of one answer, with the reply it rests on (the offline judge's rule, or the LLM's raw text). */
export const judgementSchema = z.object({
  /** The judge that gave it: `offline` or `openai:NAME`. */
  judge: z.string(),
  verdict: z.enum(JUDGE_VERDICTS),
  /** The question type whose prompt (or rule) judged it: default, temporal, knowledge-update, preference, abstention. */
  type: z.string(),
  /** The LLM's reply as sent; for the offline judge, the rule that decided. */
  raw: z.string(),
  /** The reply came from the response cache. */
  cached: z.boolean().optional(),
});
export type Judgement = z.infer<typeof judgementSchema>;

export const probeRecordSchema = z.object({
  step: count,
  turn: count,
  id: z.string().optional(),
  category: probeCategory,
  question: z.string(),
  /** Tokens of the context the strategy loaded for the question; absent when not counted (a ranking-only cell: `skipped` holds `context figures`). */
  contextTokens: count.optional(),
  contextRecall: z.boolean().optional(),
  staleExposure: z.boolean(),
  /** The model's answer; absent when no answer was generated (a ranking-only cell: `skipped` holds `answers`). */
  answer: z.string().optional(),
  answerCorrect: z.boolean().optional(),
  /** Share of the evidence steps' content words present in the context (null without evidence; absent when not measured, as contextTokens). */
  evidenceCoverage: share.nullable().optional(),
  loadMs: ms,
  /** A forbid string is in the context, with or without the current value. */
  conflictExposure: z.boolean(),
  /** Both current and stale values present: the current one is mentioned last. */
  currentAfterStale: z.boolean().optional(),
  /** Share of the gold answer's content words within one context message (null: no expect, or no content words; absent when not measured, as contextTokens). */
  answerRecall: share.nullable().optional(),
  /** Share of the evidence steps the context holds (null without evidence). */
  evidenceRecall: share.nullable(),
  /** Per cited message, in order: quoted by a context message, covered by one (strategies that transform what they keep), or missing. */
  evidenceFindings: z.array(z.enum(['verbatim', 'covered', 'missing'])).optional(),
  /** The dataset's own category of the question (LoCoMo's `single-hop`, LongMemEval's `temporal-reasoning`). */
  label: z.string().optional(),
  /** The dataset's own answer score (LoCoMo token F1, or 0/1 by abstention phrase for its adversarial items), for probes that ask for it. */
  answerF1: share.optional(),
  /** How far back the furthest evidence lies: exchanges, and tokens of scripted conversation saved since. */
  distance: z.object({ exchanges: count, tokens: count }).optional(),
  /** Strategies that retrieve: the scenario's message ids of each item they ranked for the question, best first (to the deepest k). */
  retrieved: z.array(z.array(z.string())).optional(),
  /** recall_any / recall_all / NDCG at each k of that ranking against `evidence` (answerable probes with evidence). */
  retrieval: retrievalFiguresSchema.optional(),
  /**
   * The same ranking scored by the run's `--protocol` (the paper's corpus, gold, k and session
   * mapping); `turn` is empty when the strategy ranked session documents (`unit=session`).
   */
  protocolRetrieval: protocolFiguresSchema.optional(),
  /** The probe's gold as the run scored it (after errata), so `membench judge` can re-judge the answer without the scenario. Absent in older files. */
  expect: z.array(z.string()).optional(),
  forbid: z.array(z.string()).optional(),
  /** Judgements of the answer, one per judge that ran (`--judge`, `membench judge`). */
  judgements: z.array(judgementSchema).optional(),
});
export type ProbeRecord = z.infer<typeof probeRecordSchema>;

/** How recovery classified an interrupted tool call, beside what the ledger says really happened. */
export const toolRecoverySchema = z.object({
  step: count,
  callId: z.string(),
  tool: z.string(),
  effect: z.boolean(),
  classification: z.enum(['not-started', 'started-unknown', 'completed']),
  /** The ledger's truth at recovery time. */
  ledgerApplied: z.boolean(),
  /** The effect was run again by the recovering process. */
  reran: z.boolean(),
});
export type ToolRecovery = z.infer<typeof toolRecoverySchema>;

/** Losses attributed to one crash: counted by the check that followed its recovery. */
export const crashFindingsSchema = z.object({
  acknowledgedLost: count,
  messagesLost: count,
  tornFiles: count,
  indexMismatches: count,
  /** Effects run again by the recovery of this crash although they had happened. */
  effectsDuplicated: count,
  toolsMisclassified: count,
});
export type CrashFindings = z.infer<typeof crashFindingsSchema>;

export const crashRecordSchema = z.object({
  step: count,
  point: crashPoint,
  /** The process got to the point and was killed there. */
  reached: z.boolean(),
  signal: z.string().nullable(),
  code: finite.nullable(),
  source: z.enum(['scenario', 'fuzz']),
  /** What the checks after this crash's recovery found lost or broken. */
  found: crashFindingsSchema.optional(),
  /** Reached crashes: from the armed step's request to the fresh process opened and checked (the kill, the exit, the reopen, the checks), in ms. */
  recoveryMs: ms.optional(),
});
export type CrashRecord = z.infer<typeof crashRecordSchema>;

/** The invariants of docs/design.md §6, by id, in the words every report shows. */
export const INVARIANTS = {
  '1': 'acknowledged memories survive crashes',
  '2': 'user input persisted before the model call',
  '3': 'tool calls classified as the ledger says; no duplicate effects',
  '4': 'background jobs never overwrite a later correction',
  '5': 'concurrent writers lose no update; no torn file; index agrees',
  '6': 'pending background work survives a crash',
} as const;
export type InvariantId = keyof typeof INVARIANTS;
const INVARIANT_IDS = Object.keys(INVARIANTS) as [InvariantId, ...InvariantId[]];

/** An invariant's name as users read it: "1 acknowledged memories survive crashes". */
export function invariantName(id: string): string {
  const text = (INVARIANTS as Record<string, string>)[id];
  return text ? `${id} ${text}` : id;
}

export const invariantOutcomeSchema = z.object({
  held: z.boolean(),
  /** How many times it was checked. */
  checked: count,
  violations: count,
  details: z.array(z.string()),
});
export type InvariantOutcome = z.infer<typeof invariantOutcomeSchema>;

export const durabilityCountsSchema = z.object({
  acknowledgedLost: count,
  messagesLost: count,
  effects: count,
  effectsDuplicated: count,
  effectsRefused: count,
  toolsMisclassified: count,
  staleOverwrites: count,
  lostUpdates: count,
  tornFiles: count,
  indexMismatches: count,
  pendingJobsLost: count,
  unexpectedExits: count,
  /** Acknowledged memories a summarising (lossy) strategy no longer holds, at the last check: compression, not crash loss. */
  compressedAway: count,
});
export type DurabilityCounts = z.infer<typeof durabilityCountsSchema>;

/** Every durability count at zero, keyed from the schema: a cell's counts before its first crash, one list of the keys. */
export function emptyDurabilityCounts(): DurabilityCounts {
  return Object.fromEntries(Object.keys(durabilityCountsSchema.shape).map((key) => [key, 0])) as DurabilityCounts;
}

export const durabilityOutcomeSchema = z.object({
  idempotencyKeys: z.boolean(),
  crashes: z.array(crashRecordSchema),
  recoveries: z.array(toolRecoverySchema),
  invariants: z.record(z.enum(INVARIANT_IDS), invariantOutcomeSchema),
  counts: durabilityCountsSchema,
});
export type DurabilityOutcome = z.infer<typeof durabilityOutcomeSchema>;

/** Side effects the ledger recorded. */
export const ledgerCountsSchema = z.object({
  effects: count,
  /** Effects that took place more than once for the same tool call. */
  effectsDuplicated: count,
  /** Attempts refused because their idempotency key was already used. */
  effectsRefused: count,
});
export type LedgerCounts = z.infer<typeof ledgerCountsSchema>;

/** One row of the durability matrix: strategy × durability mode × idempotency keys × crash point. */
export const matrixRowSchema = z.object({
  strategy: z.string(),
  durability: durabilityMode,
  idempotencyKeys: z.boolean(),
  point: crashPoint,
  /** Crashes armed at this point, and how many the process actually reached. */
  armed: count,
  reached: count,
  acknowledgedLost: count,
  messagesLost: count,
  effectsDuplicated: count,
  toolsMisclassified: count,
  tornFiles: count,
  indexMismatches: count,
});
export type MatrixRow = z.infer<typeof matrixRowSchema>;

/** A durability mode's price (save latency) beside what it lost. */
export const modePriceSchema = z.object({
  strategy: z.string(),
  durability: durabilityMode,
  idempotencyKeys: z.boolean(),
  /** Save latency per turn, over every cell of the strategy in this mode. */
  saveP50: ms,
  saveP95: ms,
  cells: count,
  crashes: count,
  /** Losses summed over those cells. */
  losses: durabilityCountsSchema
    .pick({
      acknowledgedLost: true,
      messagesLost: true,
      effectsDuplicated: true,
      lostUpdates: true,
      tornFiles: true,
      indexMismatches: true,
      pendingJobsLost: true,
      staleOverwrites: true,
    })
    /** Acknowledged memories summarised away by a lossy strategy (sync/async modes): shown beside the losses, never hidden in them. */
    .extend({ compressedAway: count.optional() }),
  /** Invariant violations, by invariant id: only invariants checked in a cell that finished. */
  violations: z.record(z.string(), count),
  /** Cells of the group that errored: their invariants were not (all) checked, so they count as neither held nor violated. */
  errored: count.optional(),
});
export type ModePrice = z.infer<typeof modePriceSchema>;

/** A strategy setting's options as the user gave them (`{ k: 2 }`). */
const strategyOptions = z.record(z.string(), z.unknown());

/** What a shard's results header records, so `merge` can check the shards belong together and restore plan order. */
export const shardHeaderSchema = z.object({
  index: count,
  count: count,
  /** Cells in the whole (unsharded) plan. */
  planned: count,
  /** Digest of the whole plan: shards of one run agree on it. */
  digest: z.string(),
});
export type ShardHeader = z.infer<typeof shardHeaderSchema>;

/** One kind of issue an import logged (a repair or a skip): how many, and the first few as the import said them. */
export const importIssuesSchema = z.object({
  /** The importer's stable code (`answer-missing`, `turn-empty`). */
  code: z.string(),
  count,
  /** At most IMPORT_EXAMPLES of them, each shortened to IMPORT_EXAMPLE_CHARS (harness/results/import-summary.ts). */
  examples: z.array(z.object({ where: z.string(), message: z.string() })),
});
export type ImportIssues = z.infer<typeof importIssuesSchema>;

/**
 * A dataset file `run --dataset` imported: what it read and imported, and what it repaired and
 * skipped by code with a few examples (the report `membench import` prints, bounded), so a run
 * holding fewer questions than its file says why.
 */
export const importSummarySchema = z.object({
  /** `DATASET:FILE` as given to --dataset. */
  source: z.string(),
  /** What the file's list holds and how many were read (`questions`, `conversations`), as the importer names them. */
  unitsName: z.string(),
  units: count,
  scenarios: count,
  /** The probe-bearing items (`questions`, `QA items`): read = imported as is + repaired + skipped. */
  itemsName: z.string(),
  items: count,
  repairedItems: count,
  skippedItems: count,
  repaired: z.array(importIssuesSchema),
  skipped: z.array(importIssuesSchema),
});
export type ImportSummary = z.infer<typeof importSummarySchema>;

export const runHeaderSchema = z.object({
  schemaVersion: z.literal(READABLE_VERSIONS),
  membenchVersion: z.string(),
  gitCommit: z.string().nullable(),
  nodeVersion: z.string(),
  platform: z.string(),
  seed: finite,
  trials: count,
  model: z.string(),
  /** True when answers and maintenance come from the offline reference model, not a live LLM. */
  offlineModel: z.boolean(),
  embedder: z.string(),
  tokenizer: z.object({ model: z.string(), encoding: z.string() }),
  /** Each strategy setting; `traits` says what kind of memory it is (absent in older files and for strategies that declare none). */
  strategies: z.array(
    z.object({
      name: z.string(),
      setting: z.string(),
      options: strategyOptions,
      durability: durabilityMode,
      traits: strategyTraitsSchema.optional(),
    }),
  ),
  scenarios: z.array(z.object({ name: z.string(), source: z.string(), steps: count, group: z.string().optional() })),
  startedAt: z.string(),
  durationMs: ms,
  /** Present on a shard's results: which part of the plan it ran. */
  shard: shardHeaderSchema.optional(),
  /** A digest naming the machine the run was timed on (absent in older files): compare checks latency only between runs of one machine. */
  machine: z.string().optional(),
  /**
   * The machine's speed while the run ran, measured by the run (harness/core/calibration.ts): compare
   * divides latencies by it. Absent in older files, where latency is compared unnormalised.
   */
  calibration: z.object({ cpuMs: ms, commitMs: ms, samples: count }).optional(),
  /** The run's `--protocol` (absent without one, and in older files): a report says when it scored no question. */
  protocol: z.enum(PROTOCOLS).optional(),
  /** Each dataset file imported (`--dataset`), with what it repaired and skipped (absent without one, and in older files). */
  imports: z.array(importSummarySchema).optional(),
  /** `--keep-rankings`: each probe's `retrieved` holds its whole ranking (absent: the top KEPT_RANKING_DEPTH, or the deepest k; older files say nothing). */
  keepRankings: z.literal(true).optional(),
});
export type RunHeader = z.infer<typeof runHeaderSchema>;

export const cellTokensSchema = z.object({
  /** Sum over turns of what the strategy loaded for each model call. */
  contextTotal: count,
  contextMeanPerTurn: amount,
  contextMax: count,
  maintenance: count,
  maintenanceCalls: count,
  answer: count,
  reply: count,
  /**
   * Present when context tokens were measured on a seeded sample of the scripted turns (long
   * replays): `measured` turns of `turns`. contextMeanPerTurn and contextMax are then the sample's,
   * and contextTotal is the sample mean × `turns`, rounded.
   */
  contextSample: z.object({ measured: count, turns: count }).optional(),
});
export type CellTokens = z.infer<typeof cellTokensSchema>;

/**
 * Where a cell's time went (`--profile`), in ms. Agent-process figures are summed over the cell's
 * processes, which overlap with each other and with the cell (a spare boots while the cell runs):
 * sums can exceed the cell's wall time.
 */
export const cellPhasesSchema = z.object({
  /** Agent processes the cell used (0: replayed in the worker itself). */
  processes: count,
  /** Of the processes the cell started, those deserialized from the agent's startup snapshot. */
  snapshotStarts: count.default(0),
  /** Of the processes the cell started, those that evaluated their modules instead (bundle or module by module: slower). */
  otherStarts: count.default(0),
  /**
   * Agent processes forked while the cell ran, the warm spares kept ahead of need included: a spare
   * may serve a later cell, so over a run the forks less the starts are spares no cell opened.
   */
  forked: count.default(0),
  /** Node's own start in those processes, up to its bootstrap. */
  processStartMs: ms,
  /** Importing the agent's modules and warming its tokenizer. */
  moduleLoadMs: ms,
  /** CPU those processes had used once ready (start, modules, tokenizer). */
  processCpuMs: ms,
  /** Time the cell waited for a spare process to be ready. */
  spareWaitMs: ms,
  /** Opening the strategy (and, in agent processes, the journal and ledger). */
  openMs: ms,
  /** Replaying the steps (save, load, model, tools, probes). */
  replayMs: ms,
  /** Crashes: from the armed step to the fresh process opened (checks excluded). */
  recoveryMs: ms,
  /** Invariant checks after recoveries and concurrent steps. */
  checkMs: ms,
  /** Closing (flush and close) at session ends and at the end. */
  closeMs: ms,
});
export type CellPhases = z.infer<typeof cellPhasesSchema>;

/** No time spent yet: every phase of the schema at 0 (a cell's start, and the sum over none). */
export function emptyPhases(): CellPhases {
  return Object.fromEntries(Object.keys(cellPhasesSchema.shape).map((key) => [key, 0])) as CellPhases;
}

/**
 * Work a ranking-only cell (`--protocol` with a retrieving strategy: harness/run/rank-only.ts) did
 * not do, each with the words reports print: its figures of that kind are absent, never zero.
 */
export const SKIPPED_WORK = {
  answers: 'answers not generated (answer accuracy, F1 and judging left empty)',
  turns: 'turns not recorded (no context tokens, no save latency)',
  durability: 'durability not exercised (stores kept in memory: no commit, no fsync)',
  distance: "evidence distance not measured (it counts the whole conversation's tokens)",
  'context figures':
    'context figures not measured (no context tokens, answer recall or evidence coverage per question)',
} as const;
export type SkippedWork = keyof typeof SKIPPED_WORK;
const SKIPPED_KEYS = Object.keys(SKIPPED_WORK) as [SkippedWork, ...SkippedWork[]];

/**
 * A cell's id, from what names it: `SCENARIO/SETTING`, `/no-keys` when it ran without idempotency
 * keys, `/tN` in a run of several trials. The plan names its cells by it; a results file whose
 * cell's id is another is refused, as `compare` matches cells by id.
 */
export function cellId(
  cell: { scenario: string; setting: string; idempotencyKeys: boolean; trial: number },
  trials: number,
): string {
  return `${cell.scenario}/${cell.setting}${cell.idempotencyKeys ? '' : '/no-keys'}${trials > 1 ? `/t${cell.trial}` : ''}`;
}

/** What names a cell, whatever became of it: its scenario, strategy setting, trial and seed. */
const cellIdentity = z.object({
  id: z.string(),
  scenario: z.string(),
  /** The scenario's group (a generated suite, a dataset file): reports pool its cells into one. */
  group: z.string().optional(),
  strategy: z.string(),
  /** The strategy setting's name: the strategy and its non-default options (`window(k=2)`), as the leaderboard's rows are named. */
  setting: z.string(),
  options: strategyOptions,
  durability: durabilityMode,
  trial: count,
  seed: finite,
});

/** How far above the figure that bounds it a figure may sit: a mean is a sum / n, a few ulps from its values (0.1 × 3 / 3 = 0.10000000000000002). */
const ORDER_TOLERANCE = 1e-6;
/** Figures of a cell's statistics that any list of values puts in order: each pair's first at most its second. */
const TOKENS_ORDER = [
  ['contextMeanPerTurn', 'contextMax'],
  // One turn's context is part of the sum over turns (sampled or not: the sample's mean × turns holds its sum).
  ['contextMax', 'contextTotal'],
] as const;
const DISTRIBUTION_ORDER = [
  ['mean', 'max'],
  ['p50', 'p95'],
  ['p95', 'p99'],
  ['p99', 'max'],
] as const;

/** Refuses a figure above the one that bounds it (a mean above the max, p50 above p95), naming the field (a reader names the cell: read.ts). */
function inOrder<Key extends string>(
  figures: Record<Key, number>,
  pairs: readonly (readonly [Key, Key])[],
  where: readonly string[],
  context: z.RefinementCtx,
): void {
  for (const [lower, upper] of pairs)
    if (figures[lower] > figures[upper] + ORDER_TOLERANCE * Math.abs(figures[upper]))
      context.addIssue({
        code: 'custom',
        path: [...where, lower],
        message: `expected at most ${upper} (${figures[upper]}), got ${figures[lower]}`,
      });
}

/** A cell that ran to its end: every figure the reports pool. */
const okCellFields = cellIdentity.extend({
  status: z.literal('ok'),
  tokens: cellTokensSchema,
  recall: recallSummarySchema,
  recallByCategory: z.partialRecord(probeCategory, recallSummarySchema),
  /** Recall by the dataset's own categories (probes with a `label`), beside membench's. */
  recallByLabel: z.record(z.string(), recallSummarySchema).optional(),
  /**
   * The cell ran concurrent sessions: its tokens, latencies, turns and the recall of what came
   * after depend on how the sessions interleaved, so two runs with one seed may differ there
   * (durability counts do not). Reports show these figures' spread over trials.
   */
  interleaved: z.boolean().optional(),
  /** Run only to price a durability mode (save latency beside losses): leaderboards show it under durability, not as a setting of its own. */
  pricing: z.boolean().optional(),
  /** Per turn in the agent process; `modelMs` covers live model calls only (cache hits excluded). */
  latency: z.object({ loadMs: distributionSchema, saveMs: distributionSchema, modelMs: distributionSchema }),
  usage: usageSchema,
  /** Side effects the ledger recorded (duplicates counted, not guessed). */
  effects: ledgerCountsSchema,
  /** Crashes, recoveries and invariants, for cells run in agent processes. */
  durabilityOutcome: durabilityOutcomeSchema.optional(),
  /** Peak resident set (MiB) while this cell ran: sampled after every step in the process that replayed it, or its agent processes' peak. */
  peakRssMb: amount,
  turns: z.array(turnRecordSchema),
  probes: z.array(probeRecordSchema),
  /** Wall time of the cell in the process that ran it: its temp dir, open, replay, close and pooling its figures; not the strategy module's import, nor the scenario's transport to a pool worker. */
  durationMs: ms,
  /** CPU (user + system, every thread) of the process that ran the cell over the same span as `durationMs`. Absent in older files. */
  cpuMs: ms.optional(),
  /** Strategies that retrieve: retrieval figures pooled over the cell's probes, and by probe category. */
  retrieval: retrievalSummarySchema.optional(),
  retrievalByCategory: z.partialRecord(probeCategory, retrievalSummarySchema).optional(),
  /** Retrieval figures by the dataset's own category labels (LoCoMo's five, LongMemEval's question types). */
  retrievalByLabel: z.record(z.string(), retrievalSummarySchema).optional(),
  /** The run's `--protocol` figures pooled over the cell's probes (non-abstention questions with a ranking). */
  protocolRetrieval: z
    .object({
      protocol: z.enum(PROTOCOLS),
      /** What was ranked when not the dialog: a derived corpus replayed in place of it (LoCoMo's observation or session-summary unit). */
      documents: z.enum(DERIVED_DOCUMENTS).optional(),
      /**
       * Means over the questions the protocol scores (LongMemEval: as the current run_retrieval.py
       * averages, questions without a has_answer user turn left out). Absent when the cell has none.
       */
      summary: protocolSummarySchema.optional(),
      /**
       * LongMemEval only: means over every non-abstention question, those without a has_answer user
       * turn scoring recall_any 0, recall_all 1, NDCG 0 (src/evaluation/print_retrieval_metrics.py
       * and the first run_retrieval.py). Absent in older files.
       */
      nonAbstentionSummary: protocolSummarySchema.optional(),
    })
    .optional(),
  /** Steps the strategy refused (turns with `refused`): explicit memories never acknowledged. Absent in older files. */
  refusedSteps: count.optional(),
  /** Stored items the strategy found but could not read and left out (`file: reason`, e.g. a torn memory file): they fail the cell. */
  unreadable: z.array(z.string()).optional(),
  /** Where the cell's time went, with `--profile`. */
  phases: cellPhasesSchema.optional(),
  /** A ranking-only cell: the work it left out (SKIPPED_WORK). Absent: the cell did everything a cell does. */
  skipped: z.array(z.enum(SKIPPED_KEYS)).optional(),
});
/** An ok cell's figures, its statistics in order: the context tokens' mean and max, each latency's distribution. */
export const okCellSchema = okCellFields.superRefine(({ tokens, latency }, context) => {
  inOrder(tokens, TOKENS_ORDER, ['tokens'], context);
  for (const [name, distribution] of Object.entries(latency))
    inOrder(distribution, DISTRIBUTION_ORDER, ['latency', name], context);
});
export type OkCell = z.infer<typeof okCellSchema>;

/**
 * A cell that did not run to its end (its strategy threw, it timed out, its worker died): the
 * error and where the cell was, and no figures, so no average can take its zeros. What it saw of
 * crashes before it stopped stays (losses found are losses; its invariants were not all checked).
 */
export const errorCellSchema = cellIdentity.extend({
  status: z.literal('error'),
  error: z.string(),
  /** Where the cell was when it was stopped (timed out, or its worker died): `open`, `step 12 (user)`, `close`... */
  phase: z.string().optional(),
  /** The cell ran concurrent sessions (as on an ok cell): `compare` gates only its status, invariants and losses. */
  interleaved: z.boolean().optional(),
  /** Run only to price a durability mode: its error counts under durability. */
  pricing: z.boolean().optional(),
  /** The crashes it reached and the losses their checks found before the cell stopped (cells run in agent processes). */
  durabilityOutcome: durabilityOutcomeSchema.optional(),
  durationMs: ms,
  cpuMs: ms.optional(),
  /** Stored items the strategy found but could not read and left out. */
  unreadable: z.array(z.string()).optional(),
  /** Where the cell's time went until it stopped, with `--profile`. */
  phases: cellPhasesSchema.optional(),
});
export type ErrorCell = z.infer<typeof errorCellSchema>;

/** A cell's result: a union on `status`, so only `ok` cells carry figures (harness/results/cells.ts splits them once). */
export const cellResultSchema = z.discriminatedUnion('status', [okCellSchema, errorCellSchema], {
  error: (issue) =>
    issue.code === 'invalid_union'
      ? `expected "ok" or "error", got ${(issue.input as { status?: unknown } | undefined)?.status === undefined ? 'none' : shown((issue.input as { status?: unknown }).status)}`
      : undefined,
});
export type CellResult = z.infer<typeof cellResultSchema>;

/** What one judge cost and how often it could not be read, apart from the memory's and the answerer's tokens. */
export const judgeRunSchema = z.object({
  judge: z.string(),
  /** `offline judge` or `openai:NAME judge`: how every judged figure is labelled. */
  label: z.string(),
  /** Where its prompts came from: `membench` (the project's own wording) or the --judge-prompts file. */
  prompts: z.string(),
  judged: count,
  unparsed: count,
  /** Requests that reached the endpoint (0 for the offline judge), and judgements served by the response cache. */
  requests: count,
  cached: count,
  /** Prompt + reply tokens of every judgement, cached ones included (counted as the memory's are). */
  tokens: count,
  judgedAt: z.string(),
});
export type JudgeRun = z.infer<typeof judgeRunSchema>;

/** An errata file applied at import: how many gold answers it corrected or dropped, by the dataset's own category. */
export const errataSummarySchema = z.object({
  file: z.string(),
  /** Questions imported per category label (dropped ones included), and how many of them the errata call wrong. */
  byLabel: z.record(z.string(), z.object({ questions: count, corrected: count, dropped: count })),
  /** Errata naming no imported question (another file, or past --limit). */
  unused: count,
}) satisfies z.ZodType<ErrataReport>;
export type ErrataSummary = z.infer<typeof errataSummarySchema>;

/** A value from the file in a refusal, cut (a 10,000-character name made a line of 70,000). */
const shown = (value: unknown): string => shownValue(value, 120);

/**
 * Refuses a cell whose id is not the one its fields give (cellId), or whose setting is not of its
 * strategy (`window(k=2)` is window's): `compare` matches cells by id, so a hand-edited or merged
 * file where they disagree compared other cells than it said. A cell with no durability outcome
 * does not say whether it ran with idempotency keys (inline cells under `--idempotency off` ran
 * without): either id is its own.
 */
function cellsNamedByTheirFields(
  { header, cells }: { header: { trials: number }; cells: readonly CellResult[] },
  context: z.RefinementCtx,
): void {
  for (const [index, { id, scenario, strategy, setting, trial, durabilityOutcome }] of cells.entries()) {
    if (trial >= header.trials)
      context.addIssue({
        code: 'custom',
        path: ['cells', index, 'trial'],
        message: `expected ${header.trials === 1 ? 'trial 0 (the run has 1 trial)' : `a trial from 0 to ${header.trials - 1} (the run has ${header.trials} trials)`}, got ${trial}`,
      });
    const keys = durabilityOutcome === undefined ? [true, false] : [durabilityOutcome.idempotencyKeys];
    const ids = keys.map((idempotencyKeys) => cellId({ scenario, setting, idempotencyKeys, trial }, header.trials));
    if (!ids.includes(id))
      context.addIssue({
        code: 'custom',
        path: ['cells', index, 'id'],
        message: `expected ${ids.map((derived) => shown(derived)).join(' or ')} (from its scenario ${shown(scenario)}, setting ${shown(setting)} and trial ${trial}, in a run of ${header.trials} ${header.trials === 1 ? 'trial' : 'trials'}), got ${shown(id)}`,
      });
    if (setting !== strategy && !(setting.startsWith(`${strategy}(`) && setting.endsWith(')')))
      context.addIssue({
        code: 'custom',
        path: ['cells', index, 'setting'],
        message: `expected a setting of its strategy ${shown(strategy)} (${shown(strategy)} or ${shown(`${strategy}(…)`)}), got ${shown(setting)}`,
      });
  }
}

const runResultFields = z.object({
  header: runHeaderSchema,
  cells: z.array(cellResultSchema),
  /** Strategy × durability mode × crash point, for cells run with faults (empty otherwise). */
  durabilityMatrix: z.array(matrixRowSchema),
  /** Each durability mode's price (save latency) beside its losses. */
  durabilityPrices: z.array(modePriceSchema),
  /** Judges that judged this run's answers, in the order they ran. */
  judges: z.array(judgeRunSchema).optional(),
  /** Errata applied to the datasets at import. */
  errata: z.array(errataSummarySchema).optional(),
});
export const runResultSchema = runResultFields.superRefine(cellsNamedByTheirFields);
export type RunResult = z.infer<typeof runResultSchema>;

/** Field names that hold measured time: the only fields allowed to differ between two runs with one seed. */
export const TIMING_KEYS: ReadonlySet<string> = new Set([
  'startedAt',
  'durationMs',
  'cpuMs',
  'loadMs',
  'saveMs',
  'latency',
  'saveP50',
  'saveP95',
  'peakRssMb',
  'recoveryMs',
  'phases',
  'judgedAt',
  'calibration',
]);
