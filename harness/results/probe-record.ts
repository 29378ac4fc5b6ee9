/**
 * A probe's whole record, built in one place: what the agent loop observed at the probe (the
 * context the strategy loaded, its ranking, the model's answer) judged against the scenario (the
 * probe's `expect` and `forbid`, its evidence, how far back that evidence lies) and scored by the
 * run's retrieval settings (recall@k and NDCG@k, and a paper's protocol). The loop calls
 * `ProbeScoring.record` once per probe, in this process or in an agent process, and the record
 * goes into results.json as it comes out.
 */
import type { BaseMessage } from '@langchain/core/messages';
import { answerRecall, contextMessages, judgeAnswer, judgeContext } from '../core/metrics.js';
import { datasetScore } from './scoring.js';
import type { TokenCounter } from '../core/tokens.js';
import { memoLast } from '../core/memo.js';
import { probeDistances, type ProbeDistance } from '../scenarios/distance.js';
import {
  evidenceCoverage,
  evidenceRecall,
  evidenceTable,
  probeEvidence,
  type EvidenceTable,
  type ProbeEvidence,
} from '../scenarios/evidence.js';
import type { ProbeStep, Step } from '../scenarios/format.js';
import { withProtocol, type RankedUnit } from './protocols.js';
import { DEFAULT_RETRIEVAL_K, rankedStepIds, withRetrieval } from './retrieval.js';
import type { ProbeRecord, Protocol } from './schema.js';

/** What probes are scored against, as plain data (it travels to agent processes): the scenario's steps and the run's retrieval settings. */
export interface ProbeScoringInput {
  steps: Step[];
  /** The k of retrieval metrics, ascending (default DEFAULT_RETRIEVAL_K). */
  retrievalK?: readonly number[] | undefined;
  /** `--protocol`: probes rank the whole store, and their rankings are also scored by the paper's rules. */
  protocol?: Protocol | undefined;
  /** Evidence terms carry rarity weights (for a strategy that transforms what it keeps). */
  rarity?: boolean | undefined;
  /** Keep each probe's whole ranking in its record (`--keep-rankings`); otherwise the top KEPT_RANKING_DEPTH (or the deepest k, if deeper), cut after scoring. */
  keepRankings?: boolean | undefined;
  /** What the strategy ranks as one item (`unit=session` strategies rank sessions), for the protocol's scoring. */
  unit?: RankedUnit | undefined;
  /** false: records carry no `distance` (it counts the tokens of the whole conversation; a ranking-only cell skips it). */
  distances?: boolean | undefined;
  /**
   * false: records carry no context figures read word by word from the loaded context (`contextTokens`,
   * `answerRecall`, `evidenceCoverage`: a token count and a segmentation of everything loaded, which
   * the rankings do not need; a ranking-only cell skips them).
   */
  contextFigures?: boolean | undefined;
}

/** Ranked items a probe record keeps unless asked for them all (`--keep-rankings`): the deepest k of either protocol. */
export const KEPT_RANKING_DEPTH = 50;

/** Under a protocol a probe ranks the whole store (LongMemEval widens its session cutoff until k sessions are in). */
const PROTOCOL_RANK_DEPTH = 100_000;

/** How many ranked items a probe asks a retrieving strategy for: the deepest retrieval k, or the whole store under a protocol. */
export function rankDepthOf(input: Pick<ProbeScoringInput, 'retrievalK' | 'protocol'>): number {
  if (input.protocol !== undefined) return PROTOCOL_RANK_DEPTH;
  return Math.max(...(input.retrievalK?.length ? input.retrievalK : DEFAULT_RETRIEVAL_K));
}

/** What the agent loop saw at one probe. */
export interface ProbeObservation {
  /** The probe's step index (a concurrent session's steps have indexes past the scenario's: they are scored without evidence). */
  index: number;
  step: ProbeStep;
  /** The user turns before the probe. */
  turn: number;
  /** What the strategy's `load` returned for the question. */
  context: { messages: readonly BaseMessage[]; retrieved?: readonly { stepIds: readonly string[] }[] | undefined };
  loadMs: number;
  /** The model's answer, from the context and the question only; undefined when none was asked for (a ranking-only cell): the record then has no answer figures. */
  answer?: string | undefined;
  /** The strategy's `keepsVerbatim` capability: false when evidence may also be held by rare-term coverage. */
  keepsVerbatim: boolean;
}

const NO_EVIDENCE: ProbeEvidence = { cited: [], rarity: {} };

/** A scenario's evidence table, with and without rarity weights: once per process for the cells of one scenario. */
const weighedTable = memoLast((steps: readonly Step[]) => evidenceTable(steps, { rarity: true }));
const plainTable = memoLast((steps: readonly Step[]) => evidenceTable(steps, { rarity: false }));

/**
 * One cell's probe scorer. What it derives from the whole scenario (the evidence table, every
 * probe's distance) is computed on the first probe that needs it, once per process.
 */
export class ProbeScoring {
  /** Ranked items each probe records. */
  readonly rankDepth: number;
  private readonly ks: readonly number[];
  private table: EvidenceTable | undefined;
  private distances: Map<number, ProbeDistance> | undefined;

  constructor(
    private readonly input: ProbeScoringInput,
    private readonly tokens: TokenCounter,
  ) {
    this.rankDepth = rankDepthOf(input);
    this.ks = input.retrievalK ?? DEFAULT_RETRIEVAL_K;
  }

  /** What the probe at `index` is judged with: the texts of the messages it cites and their terms' rarity. */
  evidence(index: number): ProbeEvidence {
    const step = this.input.steps[index];
    if (step?.kind !== 'probe') return NO_EVIDENCE;
    this.table ??= (this.input.rarity === true ? weighedTable : plainTable)(this.input.steps);
    return probeEvidence(step, this.table) ?? NO_EVIDENCE;
  }

  /** How far back the probe's evidence lies, in exchanges and in tokens; undefined without evidence before it. */
  distance(index: number): ProbeDistance | undefined {
    this.distances ??= probeDistances(this.input.steps, (text) => this.tokens.countText(text));
    return this.distances.get(index);
  }

  /** The probe's record: judgement, evidence, retrieval (and the protocol's), distance, and (unless `contextFigures` is false) its context figures. */
  record(seen: ProbeObservation): ProbeRecord {
    const { step, answer } = seen;
    const evidence = this.evidence(seen.index);
    const messages = contextMessages(seen.context.messages);
    const normalized = messages.join('\n');
    const verdict = judgeContext(normalized, step.expect, step.forbid);
    const found = evidence.cited.length > 0 ? evidenceRecall(evidence, messages, !seen.keepsVerbatim) : undefined;
    const score = answer === undefined ? undefined : datasetScore(step.scoring, answer, step.expect);
    const figures =
      this.input.contextFigures === false ? undefined : this.contextFigures(seen, evidence, messages, normalized);
    const judged: ProbeRecord = {
      step: seen.index,
      turn: seen.turn,
      ...(step.id !== undefined ? { id: step.id } : {}),
      category: step.category,
      question: step.probe,
      ...(figures ? { contextTokens: figures.contextTokens } : {}),
      contextRecall: verdict.contextRecall,
      staleExposure: verdict.staleExposure,
      ...(answer !== undefined ? { answer, answerCorrect: judgeAnswer(answer, step.expect, step.forbid) } : {}),
      ...(figures ? { evidenceCoverage: figures.evidenceCoverage } : {}),
      loadMs: seen.loadMs,
      conflictExposure: verdict.conflictExposure,
      ...(verdict.currentAfterStale !== undefined ? { currentAfterStale: verdict.currentAfterStale } : {}),
      ...(figures ? { answerRecall: figures.answerRecall } : {}),
      evidenceRecall: found?.value ?? null,
      ...(found ? { evidenceFindings: found.findings } : {}),
      ...(step.label !== undefined ? { label: step.label } : {}),
      ...(score !== undefined ? { answerF1: score } : {}),
      ...rankedStepIds(seen.context.retrieved, this.rankDepth),
      ...(step.expect ? { expect: [...step.expect] } : {}),
      ...(step.forbid.length > 0 ? { forbid: [...step.forbid] } : {}),
    };
    // The ranking in the scenario's message ids, scored at each k and by the protocol.
    const [ranked] = withProtocol(
      withRetrieval([judged], this.input, this.ks),
      this.input,
      this.input.protocol,
      this.input.unit,
    );
    const kept = this.keptRanking(ranked!);
    const distance = this.input.distances === false ? undefined : this.distance(seen.index);
    return distance ? { ...kept, distance } : kept;
  }

  /** What the probe's loaded context holds, counted and segmented: its tokens, the answer's words, the evidence's words. */
  private contextFigures(
    seen: ProbeObservation,
    evidence: ProbeEvidence,
    messages: readonly string[],
    normalized: string,
  ): Pick<ProbeRecord, 'contextTokens' | 'answerRecall' | 'evidenceCoverage'> {
    return {
      contextTokens: this.tokens.countMessages(seen.context.messages),
      answerRecall: answerRecall(seen.step.expect, messages),
      evidenceCoverage:
        evidence.cited.length > 0
          ? evidenceCoverage(
              evidence.cited.map((texts) => texts.join('\n')),
              normalized,
            ).value
          : null,
    };
  }

  /**
   * The record with its ranking cut to what it keeps. Scoring (above) has seen the whole ranking: the
   * protocol's ideal NDCG and its turn-to-session widening need it, the stored copy does not (a
   * LoCoMo protocol run stored hundreds of megabytes of rankings).
   */
  private keptRanking(record: ProbeRecord): ProbeRecord {
    const depth = Math.max(KEPT_RANKING_DEPTH, ...this.ks);
    if (this.input.keepRankings === true || !record.retrieved || record.retrieved.length <= depth) return record;
    return { ...record, retrieved: record.retrieved.slice(0, depth) };
  }
}
