/**
 * A cell's session, built in one place for both ways a cell runs: in the process that runs the
 * cell (harness/run/cell.ts) and in an agent process (agent-entry.ts, killed and restarted at crash
 * points). Both get the same strategy context (clock included), the same context sampling, the
 * same session boundaries and the same durable batches of saved turns, so a cell's records do not
 * depend on where it ran.
 */
import { mkdirSync } from 'node:fs';
import { AgentSession, contextSample, savesOnly, type Ack } from '../agent/loop.js';
import { checkedStrategy } from '../agent/strategy-contract.js';
import { Journal } from '../agent/journal.js';
import { Ledger } from '../agent/ledger.js';
import { durableBatch, sessionEnded } from '../core/durable-batch.js';
import { TokenCounter } from '../core/tokens.js';
import { MeteredModel, type ChatModel, type Embedder } from '../models/index.js';
import type { ProbeScoringInput } from '../results/probe-record.js';
import type { CrashPoint, Step } from '../scenarios/format.js';
import type { DurabilityMode, StrategyDefinition } from '../../strategies/types.js';
import { cellPaths } from './protocol.js';

/** The clock a cell's strategy reads: the system's, or (tests) one standing still at an ISO instant, which crosses a process boundary as data. */
export function cellClock(fixedAt?: string): () => Date {
  if (fixedAt === undefined) return () => new Date();
  const at = Date.parse(fixedAt);
  if (Number.isNaN(at)) throw new Error(`cell clock: "${fixedAt}" is not an ISO instant`);
  return () => new Date(at);
}

/** Everything a cell's session is built from. */
export interface CellSessionSpec {
  /** The cell dir (cellPaths: the strategy's files, the ledger and the journal). */
  dir: string;
  definition: StrategyDefinition;
  /** The strategy as `--strategy` named it (a built-in name or a module path): what its contract refusals name; absent: its definition's name. */
  source?: string;
  /** The strategy's options (validated again here: the agent process receives them as plain data). */
  options: Record<string, unknown>;
  durability: DurabilityMode;
  seed: number;
  tokenizerModel: string;
  model: ChatModel;
  embedder: Embedder;
  /** An ISO instant the clock stands still at (tests); absent: the system clock. */
  clock?: string;
  /** Names the scenario: seeds which scripted turns measure their context (contextSample); absent: every turn does. */
  scenario?: string;
  /** The scenario's steps and the run's retrieval settings (absent: probes are scored without evidence). */
  scoring?: ProbeScoringInput;
  /** A replayed dataset: session boundaries keep the stores open, runs of saved turns share one durable commit. */
  datasetReplay: boolean;
  /** The agent process's own: a journal (a restarted process resumes from it), the session's id, keys, crash points, acks. */
  resumable?: {
    sessionId: string;
    idempotencyKeys: boolean;
    checkpoint: (point: CrashPoint) => void;
    onAck: (ack: Ack) => Promise<void> | void;
  };
}

/** A cell's session and what it was built with: `close` releases the ledger and the journal. */
export interface CellSession {
  session: AgentSession;
  model: MeteredModel;
  ledger: Ledger;
  close(): void;
}

/** Builds the session of one cell (one agent process's session, or the whole cell inline). */
export function openCellSession(spec: CellSessionSpec): CellSession {
  const paths = cellPaths(spec.dir);
  mkdirSync(paths.strategyDir, { recursive: true });
  const tokens = new TokenCounter(spec.tokenizerModel);
  const model = new MeteredModel(spec.model, tokens);
  const ledger = new Ledger(paths.ledger);
  const journal = spec.resumable ? new Journal(paths.journal) : undefined;
  const { definition, resumable } = spec;
  const options = definition.options.parse(spec.options) as Record<string, unknown>;
  const now = cellClock(spec.clock);
  const session = new AgentSession({
    model,
    tokens,
    ledger,
    keepsVerbatim: definition.keepsVerbatim !== false,
    ...(spec.scoring !== undefined ? { scoring: spec.scoring } : {}),
    // No model reads the context of a scripted turn: a long replay measures a seeded sample of them.
    ...(spec.scoring !== undefined && spec.scenario !== undefined
      ? { measureContext: contextSample(spec.scoring.steps, spec.scenario) }
      : {}),
    // A replayed dataset's session boundaries keep the strategy's stores open (MemoryStrategy.newSession).
    sessionsStayOpen: spec.datasetReplay,
    ...(resumable && journal
      ? {
          journal,
          sessionId: resumable.sessionId,
          idempotencyKeys: resumable.idempotencyKeys,
          checkpoint: resumable.checkpoint,
          onAck: resumable.onAck,
        }
      : {}),
    createStrategy: () =>
      checkedStrategy(
        `strategy ${spec.source ?? definition.name}`,
        definition.create(
          {
            dir: paths.strategyDir,
            tokens,
            model,
            embedder: spec.embedder,
            durability: spec.durability,
            seed: spec.seed,
            now,
            ...(resumable ? { checkpoint: resumable.checkpoint } : {}),
          },
          options,
        ),
      ),
  });
  return {
    session,
    model,
    ledger,
    close: () => {
      journal?.close();
      ledger.close();
    },
  };
}

/** Steps a durable batch may hold: saved turns and session boundaries (no model call, nothing acknowledged). */
export const batchable = (step: Step): boolean => savesOnly(step) || step.kind === 'session';

/** Where a run of steps ends: one step, or with `datasetReplay` the whole run of batchable steps from `from` (up to `limit`). */
export function batchEnd(steps: readonly Step[], from: number, datasetReplay: boolean, limit = steps.length): number {
  let end = from + 1;
  if (datasetReplay && batchable(steps[from]!)) while (end < limit && batchable(steps[end]!)) end++;
  return end;
}

/**
 * Replays `run` (the scenario's steps from index `from` on) in the session: one step alone, or a
 * run of batchable steps in one durable batch (each replayed session's writes one commit per store,
 * one fsync per file at the end), whose closing fsyncs count in the last turn's save.
 */
export async function replayRun(
  session: AgentSession,
  run: readonly Step[],
  from: number,
  onStep?: (index: number) => void,
): Promise<void> {
  const replay = async (): Promise<void> => {
    for (const [offset, step] of run.entries()) {
      onStep?.(from + offset);
      // Inside a batch each replayed session's writes are one commit per store.
      if (step.kind === 'session') sessionEnded();
      await session.step(step, from + offset);
    }
  };
  if (run.length === 1) return replay();
  const { syncMs } = await durableBatch(replay);
  // The batch's closing fsyncs are part of the last turn's save.
  const last = session.turns.at(-1);
  if (last) last.saveMs += syncMs;
}
