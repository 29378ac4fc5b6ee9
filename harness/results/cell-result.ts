/**
 * A cell's result from what its replay recorded: the probe records pooled into recall and
 * retrieval summaries, the turns into token and latency figures. The last stage a probe's record
 * passes before the reports (docs/design.md §10).
 */
import { distribution } from '../core/metrics.js';
import type { DurabilityMode } from '../core/durability-mode.js';
import { visibleControls } from '../core/text.js';
import type { ModelUsage } from '../models/index.js';
import type { Scenario } from '../scenarios/format.js';
import type { Protocol } from './protocols.js';
import { recallByCategory, recallByLabel, summarizeRecall } from './recall.js';
import { retrievalByCategory, retrievalByLabel, summarizeRetrieval } from './retrieval.js';
import { measuredContextTokens } from './cells.js';
import type {
  CellPhases,
  CellResult,
  DurabilityOutcome,
  ErrorCell,
  LedgerCounts,
  ProbeRecord,
  SkippedWork,
  TurnRecord,
} from './schema.js';

/** What a cell's replay recorded, in this process or in agent processes. */
export interface CellRecords {
  turns: TurnRecord[];
  probes: ProbeRecord[];
  usage: ModelUsage;
  modelLatencies: number[];
  error?: string;
  durabilityOutcome?: DurabilityOutcome;
  effects: LedgerCounts;
  /** Peak resident set while the cell ran, in kB: sampled after each step in this process, or the agent processes' own peak. */
  peakRssKb: number;
  /** What the strategy could not read and left out. */
  unreadable?: string[];
  phases: CellPhases;
  /** A ranking-only cell's skipped work (harness/run/rank-only.ts). */
  skipped?: SkippedWork[];
}

/** What the result names of the cell that was replayed (the runner's cell task has these and more). */
export interface PooledCell {
  id: string;
  scenario: Pick<Scenario, 'name' | 'group' | 'steps' | 'documents'>;
  strategy: { name: string; setting: string; options: Record<string, unknown>; durability: DurabilityMode };
  trial: number;
  seed: number;
  pricing?: boolean | undefined;
}

/** What names the cell in its result, whatever became of it. */
function identity(plan: PooledCell) {
  return {
    id: plan.id,
    scenario: plan.scenario.name,
    ...(plan.scenario.group !== undefined ? { group: plan.scenario.group } : {}),
    strategy: plan.strategy.name,
    setting: plan.strategy.setting,
    options: plan.strategy.options,
    durability: plan.strategy.durability,
    trial: plan.trial,
    seed: plan.seed,
  };
}

/** The cell runs concurrent sessions: its figures depend on how they interleave. */
const interleaved = (plan: PooledCell): boolean => plan.scenario.steps.some((step) => step.kind === 'concurrent');

/** What an error cell keeps beside its error: where it was, what it saw of crashes, where its time went. */
export interface ErrorDetails {
  phase?: string | undefined;
  durabilityOutcome?: DurabilityOutcome | undefined;
  unreadable?: readonly string[] | undefined;
  phases?: CellPhases | undefined;
}

/**
 * The result of a cell that did not run to its end: its error, and no figures. The error's control
 * characters are kept as escapes (visibleControls): a strategy's message is printed on terminals.
 */
export function errorCell(plan: PooledCell, error: string, durationMs: number, details: ErrorDetails = {}): ErrorCell {
  return {
    ...identity(plan),
    status: 'error',
    error: visibleControls(error),
    ...(details.phase !== undefined ? { phase: details.phase } : {}),
    ...(interleaved(plan) ? { interleaved: true } : {}),
    ...(plan.pricing ? { pricing: true } : {}),
    ...(details.durabilityOutcome ? { durabilityOutcome: details.durabilityOutcome } : {}),
    durationMs,
    ...(details.unreadable?.length ? { unreadable: [...details.unreadable] } : {}),
    ...(details.phases ? { phases: details.phases } : {}),
  };
}

/** The cell's result from what its replay recorded: an error cell when the replay stopped on an error. */
export function cellResult(
  plan: PooledCell,
  records: CellRecords,
  durationMs: number,
  profile = false,
  protocol?: Protocol,
): CellResult {
  const { turns, usage, error, probes } = records;
  if (error !== undefined)
    return errorCell(plan, error, durationMs, {
      durabilityOutcome: records.durabilityOutcome,
      unreadable: records.unreadable,
      ...(profile ? { phases: records.phases } : {}),
    });
  const retrieval = summarizeRetrieval(probes);
  // The protocol's two averagings: the questions it scores, and (LongMemEval) every non-abstention question.
  const protocolSummary =
    protocol === undefined
      ? undefined
      : summarizeRetrieval(
          probes.map((probe) =>
            probe.protocolRetrieval && !probe.protocolRetrieval.noTarget ? { retrieval: probe.protocolRetrieval } : {},
          ),
        );
  const nonAbstentionSummary =
    protocol === 'longmemeval'
      ? summarizeRetrieval(
          probes.map((probe) => (probe.protocolRetrieval ? { retrieval: probe.protocolRetrieval } : {})),
        )
      : undefined;
  const contextPerTurn = measuredContextTokens(turns);
  const measuredTotal = contextPerTurn.reduce((sum, value) => sum + value, 0);
  const skipped = turns.filter((turn) => turn.contextSkipped).length;
  // Turns outside the context sample count at the sample's mean.
  const contextTotal =
    skipped > 0 && contextPerTurn.length > 0
      ? Math.round((measuredTotal / contextPerTurn.length) * (contextPerTurn.length + skipped))
      : measuredTotal;
  return {
    ...identity(plan),
    status: 'ok',
    tokens: {
      contextTotal,
      contextMeanPerTurn: contextPerTurn.length ? measuredTotal / contextPerTurn.length : 0,
      contextMax: contextPerTurn.reduce((max, value) => Math.max(max, value), 0),
      maintenance: usage.maintenanceTokens,
      maintenanceCalls: usage.maintenanceCalls,
      answer: usage.answerTokens,
      reply: usage.replyTokens,
      ...(skipped > 0
        ? { contextSample: { measured: contextPerTurn.length, turns: contextPerTurn.length + skipped } }
        : {}),
    },
    recall: summarizeRecall(probes),
    recallByCategory: recallByCategory(probes),
    ...(recallByLabel(probes) ? { recallByLabel: recallByLabel(probes) } : {}),
    ...(interleaved(plan) ? { interleaved: true } : {}),
    ...(plan.pricing ? { pricing: true } : {}),
    latency: {
      loadMs: distribution(turns.flatMap((turn) => (turn.loadMs === null ? [] : [turn.loadMs]))),
      saveMs: distribution(turns.map((turn) => turn.saveMs)),
      modelMs: distribution(records.modelLatencies),
    },
    usage,
    effects: records.effects,
    ...(records.durabilityOutcome ? { durabilityOutcome: records.durabilityOutcome } : {}),
    peakRssMb: Math.round(records.peakRssKb / 1024),
    turns,
    probes,
    durationMs,
    ...(retrieval
      ? {
          retrieval,
          retrievalByCategory: retrievalByCategory(probes),
          ...(retrievalByLabel(probes) ? { retrievalByLabel: retrievalByLabel(probes) } : {}),
        }
      : {}),
    ...(protocol !== undefined && (protocolSummary || nonAbstentionSummary)
      ? {
          protocolRetrieval: {
            protocol,
            ...(plan.scenario.documents !== undefined ? { documents: plan.scenario.documents } : {}),
            ...(protocolSummary ? { summary: protocolSummary } : {}),
            ...(nonAbstentionSummary ? { nonAbstentionSummary } : {}),
          },
        }
      : {}),
    refusedSteps: turns.filter((turn) => turn.refused !== undefined).length,
    ...(records.unreadable ? { unreadable: records.unreadable } : {}),
    ...(profile ? { phases: records.phases } : {}),
    ...(records.skipped?.length ? { skipped: records.skipped } : {}),
  };
}
