/** Typed IPC between the harness and an agent process (one per session; killable at any step). */
import path from 'node:path';
import type { LiveProviderSettings } from '../models/openai.js';
import type { Ack } from '../agent/loop.js';
import type { ProbeRecord, ToolRecovery, TurnRecord } from '../results/schema.js';
import type { ModelUsage } from '../models/index.js';
import type { CrashPoint, Step } from '../scenarios/format.js';
import type { ProbeScoringInput } from '../results/probe-record.js';
import type { DurabilityMode, PreloadHint, StoreCheck } from '../../strategies/types.js';

/** Everything an agent process needs to rebuild its cell: plain data, no functions. */
export interface AgentCell {
  cellId: string;
  /** A built-in name, a module path or `langchain:NAME`. */
  strategy: string;
  options: Record<string, unknown>;
  durability: DurabilityMode;
  /** The cell dir: the strategy's files live in `strategy/`, the ledger and journal beside it. */
  dir: string;
  model: string;
  embedder: string;
  /** Live-provider settings (`openai:` models); travel over IPC only, never written anywhere. */
  live: LiveProviderSettings;
  /** The response cache file and this cell's trial, for live models. */
  cache?: { file: string; trial: number };
  tokenizerModel: string;
  seed: number;
  sessionId: string;
  idempotencyKeys: boolean;
  /** What the cell's probes are scored against: the scenario's steps and the run's retrieval settings. */
  scoring?: ProbeScoringInput;
  /** The scenario's name: seeds which scripted turns measure their context, as in a cell run inline. */
  scenario?: string;
  /** A replayed dataset: session boundaries keep the stores open, and runs of saved turns come as one `batch`. */
  datasetReplay?: boolean;
  /** An ISO instant the strategy's clock stands still at (tests inject it); absent: the system clock. */
  clock?: string;
}

/** The argument with which a process started from the agent's snapshot exits as soon as it is up (the harness checks a snapshot loads). */
export const SNAPSHOT_CHECK = '--snapshot-check';

/**
 * The V8 flags the agent's startup snapshot is built with and every process started from it runs
 * under (V8 refuses a snapshot under other flags). `--no-rehash-snapshot`: V8 otherwise draws a
 * fresh hash seed at each start and rehashes every string and hash table of the snapshot to it,
 * ~9 ms of the ~27 ms a process spends deserializing (measured with `--profile-deserialization`:
 * isolate + context 27 → 18 ms), paid by every process a crash cell starts. Without it, the seed is
 * the one drawn when `npm run build` made the snapshot, on this machine: a random one still, kept
 * for processes that read scenario text, never network input.
 */
export const SNAPSHOT_V8_FLAGS: readonly string[] = ['--no-rehash-snapshot'];

export type ToAgent =
  | { type: 'open'; cell: AgentCell; resumeTurn: number; resumeSession: number }
  | { type: 'arm'; point: CrashPoint }
  /** To a spare: load what this strategy loads lazily for this cell's text, before the crash it will recover. */
  | { type: 'prepare'; strategy: string; hint: PreloadHint }
  | { type: 'step'; index: number; step: Step }
  /** A replayed dataset's run of saved turns and session boundaries (steps `from`…), in one durable batch: one `step-done` for all. */
  | { type: 'batch'; from: number; steps: Step[] }
  | { type: 'check'; acks: Ack[]; userTexts: string[] }
  /** Finish and close the session; with `reuse`, the process stays up, holding nothing of the cell, to serve another. */
  | { type: 'close'; reuse?: boolean }
  /** What the process holds between cells (tests: nothing of a closed cell is left). */
  | { type: 'inspect' };

/** What the durability checks found in a freshly reopened store. */
export interface CheckReport {
  /** Acknowledged memories whose content is no longer in the store (the latest ack of each name). */
  lostAcks: string[];
  /** The strategy summarises (capabilities.lossy): its lost acks are compressed away, not crash losses. */
  lossy: boolean;
  /** User messages that should have been persisted and are not. */
  lostUserTexts: string[];
  store: StoreCheck | null;
  pendingJobs: number | null;
}

/** What an agent process measured of its own start, sent with `ready`: where a process start's time goes. */
export interface AgentBoot {
  /** How its modules came to be loaded: deserialized from the agent's startup snapshot, evaluated from the one-file bundle (with V8's code cache), or imported module by module (tsx, or a user's strategy). */
  from: 'snapshot' | 'bundle' | 'modules';
  /** Node's own start, up to its bootstrap (ms since the process began). */
  bootMs: number;
  /** Importing the agent's modules (about 0 from a snapshot: they were evaluated when it was built). */
  modulesMs: number;
  /** Warming the tokenizer (it reads its ranks once per process, unless its snapshot holds them). */
  warmUpMs: number;
  /** Rank tables the warm-up read from disk: 0 where the startup snapshot holds the model's encoding. */
  ranksRead: number;
  /** CPU (user + system) the process had used by then. */
  cpuMs: number;
}

export type FromAgent =
  | { type: 'ready'; boot: AgentBoot }
  | { type: 'opened'; pendingJobs: number | null }
  | { type: 'ack'; ack: Ack }
  | {
      type: 'step-done';
      index: number;
      turns: TurnRecord[];
      probes: ProbeRecord[];
      recoveries: ToolRecovery[];
      usage: ModelUsage;
      modelLatencies: number[];
      pendingJobs: number | null;
      maxRssKb: number;
    }
  | { type: 'checked'; report: CheckReport }
  /** A `prepare` is done: what the strategy loads lazily is loaded. */
  | { type: 'prepared' }
  | { type: 'closed'; usage: ModelUsage }
  /** Its active handles and timers (process.getActiveResourcesInfo(), sorted), its open file descriptors (Linux; null elsewhere) and its environment. */
  | { type: 'inspected'; resources: string[]; openFiles: number | null; env: Record<string, string | undefined> }
  | { type: 'error'; message: string };

/** Where each part of a cell lives: the ledger and journal sit outside the strategy's dir. */
export function cellPaths(dir: string): { strategyDir: string; ledger: string; journal: string } {
  return {
    strategyDir: path.join(dir, 'strategy'),
    ledger: path.join(dir, 'ledger.sqlite'),
    journal: path.join(dir, 'journal.sqlite'),
  };
}
