/**
 * The harness side of an agent process: fork, typed requests with per-step timeouts, and an
 * unexpected exit turned into a recorded outcome (code, signal) instead of a harness crash.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { replaceFileSync } from '../core/fs.js';
import type { Ack } from '../agent/loop.js';
import {
  SNAPSHOT_CHECK,
  SNAPSHOT_V8_FLAGS,
  type AgentBoot,
  type FromAgent,
  type ToAgent,
  type AgentCell,
} from './protocol.js';
import type { PreloadHint } from '../../strategies/types.js';
import { isExit, ForkedWorker, type ProcessExit, type WorkerEntry, type WorkerState } from './worker.js';

export { isExit, type ProcessExit } from './worker.js';

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

/** What `npm run build` recorded of the startup snapshot it built (agent-entry.snapshot.json). */
const snapshotRecord = z.object({
  node: z.string(),
  arch: z.string(),
  nodeOptions: z.string(),
  bundle: z.string(),
  bundleBytes: z.number(),
  bundleMtimeMs: z.number(),
  /** The V8 flags it was built with (SNAPSHOT_V8_FLAGS then); a record without them is from a build before they were set. */
  v8Flags: z.array(z.string()).optional(),
});

/** Whether the startup snapshot in a directory is usable: its blob, or why not (a user is told, never left with a silently slower start). */
export type SnapshotStatus = { blob: string; reason: null } | { blob: null; reason: string };

/**
 * The startup snapshot in `dir` (agent-entry.snapshot.blob), when `npm run build` built it there
 * with this Node, under the NODE_OPTIONS agent processes will inherit, for the bundle beside it as
 * it is now; otherwise why not. A snapshot loads only in the Node binary that made it and with the
 * same V8 flags (`--max-old-space-size` in NODE_OPTIONS is enough for V8 to refuse it), and it
 * holds the bundle's path.
 */
export function snapshotStatus(dir: string, nodeOptions = process.env.NODE_OPTIONS ?? ''): SnapshotStatus {
  const recordFile = path.join(dir, 'agent-entry.snapshot.json');
  let record: z.infer<typeof snapshotRecord>;
  try {
    record = snapshotRecord.parse(JSON.parse(readFileSync(recordFile, 'utf8')));
  } catch {
    return { blob: null, reason: `no startup snapshot was built in ${dir} (run npm run build)` };
  }
  const bundle = path.join(dir, 'agent-entry.bundle.cjs');
  const blob = path.join(dir, 'agent-entry.snapshot.blob');
  const stale = (why: string): SnapshotStatus => ({ blob: null, reason: `${why} (run npm run build here)` });
  if (record.node !== process.version || record.arch !== process.arch)
    return stale(
      `the snapshot was built by Node ${record.node} ${record.arch}, this is ${process.version} ${process.arch}`,
    );
  if (record.nodeOptions !== nodeOptions)
    return {
      blob: null,
      reason: `NODE_OPTIONS is "${nodeOptions}", the snapshot was built under "${record.nodeOptions}" (V8 refuses it under other flags)`,
    };
  const flags = record.v8Flags ?? [];
  if (flags.join(' ') !== SNAPSHOT_V8_FLAGS.join(' '))
    return stale(
      `the snapshot was built under the V8 flags "${flags.join(' ')}", agent processes start under "${SNAPSHOT_V8_FLAGS.join(' ')}"`,
    );
  if (record.bundle !== bundle)
    return stale(
      `the snapshot records the bundle ${record.bundle}, not ${bundle}: dist/ was copied from another checkout`,
    );
  let size: number;
  let mtimeMs: number;
  try {
    ({ size, mtimeMs } = statSync(bundle));
  } catch {
    return stale(`the bundle ${bundle} is missing`);
  }
  if (record.bundleBytes !== size || record.bundleMtimeMs !== mtimeMs)
    return stale(`the bundle ${bundle} changed since the snapshot was built`);
  if (!existsSync(blob)) return stale(`the snapshot ${blob} is missing`);
  return { blob, reason: null };
}

/** The startup snapshot in `dir` when it is usable (snapshotStatus), else null: processes start from the bundle. */
export function snapshotIn(dir: string, nodeOptions = process.env.NODE_OPTIONS ?? ''): string | null {
  return snapshotStatus(dir, nodeOptions).blob;
}

let snapshotBlob: string | null | undefined;

/**
 * Environment variables only TLS reads. Node 20 loads NODE_EXTRA_CA_CERTS at every start, before
 * any code runs, whether or not the process ever opens a connection: with a system bundle of ~140
 * certificates that is ~90 ms of CPU per process on a 2-core machine, more than the rest of an
 * agent's boot.
 */
const TLS_ONLY_ENV = ['NODE_EXTRA_CA_CERTS'] as const;

/** The environment of an agent process: the harness's own, less the TLS-only variables when it opens no connection. */
export function agentEnv(offline: boolean, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  if (!offline || !TLS_ONLY_ENV.some((name) => env[name] !== undefined)) return env;
  const kept = { ...env };
  for (const name of TLS_ONLY_ENV) delete kept[name];
  return kept;
}

/** The Node flags a process starts from the snapshot `blob` with: its V8 flags, then the blob. */
const fromSnapshot = (blob: string): string[] => [...SNAPSHOT_V8_FLAGS, '--snapshot-blob', blob];

/**
 * Whether a process starts from `blob` here: one process is started from it and must come up
 * and exit 0. V8 refuses a snapshot for more reasons than the record can foresee (another V8
 * flag, a changed binary); a refused snapshot makes every process exit at once, so it is tried first.
 */
export function snapshotLoads(blob: string, bundle: string): boolean {
  agentProcessStats.snapshotChecks++;
  const check = spawnSync(process.execPath, [...fromSnapshot(blob), bundle, SNAPSHOT_CHECK], {
    stdio: 'ignore',
    timeout: 30_000,
    env: agentEnv(true),
  });
  return check.status === 0;
}

/**
 * Why agent processes started here do not start from the startup snapshot in `dir`, or null when
 * they do: its record says it does not fit (snapshotStatus), or V8 refuses it (snapshotLoads).
 */
export function snapshotUnusable(dir: string): string | null {
  const status = snapshotStatus(dir);
  if (status.blob === null) return status.reason;
  return snapshotLoads(status.blob, path.join(dir, 'agent-entry.bundle.cjs'))
    ? null
    : `V8 refused the snapshot ${status.blob} (damaged, or another V8 flag): run npm run build here`;
}

/** Beside a blob: what its last passed load check was for (`verifiedFor`). */
const VERIFIED_FILE = 'agent-entry.snapshot.verified.json';

/** What a load check of `blob` holds for: this Node binary (path, size, mtime), the blob (size, mtime) and the V8 flags agents inherit. */
function verifiedFor(blob: string, nodeOptions: string): string {
  const node = statSync(process.execPath);
  const file = statSync(blob);
  return JSON.stringify({
    node: process.execPath,
    version: process.version,
    nodeBytes: node.size,
    nodeMtimeMs: node.mtimeMs,
    blobBytes: file.size,
    blobMtimeMs: file.mtimeMs,
    nodeOptions,
    v8Flags: SNAPSHOT_V8_FLAGS,
  });
}

/**
 * snapshotLoads, once per Node binary, blob and V8 flags rather than once per process: a passed
 * check is recorded beside the blob, and a process that finds it recorded for what it would check
 * skips the check (a process started and deserialized, ~0.2 s of CPU, which each pool worker made
 * before its first agent process). A failed check is not recorded; where the dir cannot be
 * written, every process checks, as before.
 */
export function snapshotLoadsOnce(blob: string, bundle: string, nodeOptions = process.env.NODE_OPTIONS ?? ''): boolean {
  const record = path.join(path.dirname(blob), VERIFIED_FILE);
  let key: string;
  try {
    key = verifiedFor(blob, nodeOptions);
  } catch {
    return snapshotLoads(blob, bundle);
  }
  try {
    if (readFileSync(record, 'utf8') === key) return true;
  } catch {
    // not checked here yet
  }
  if (!snapshotLoads(blob, bundle)) return false;
  try {
    replaceFileSync(record, key);
  } catch {
    // a read-only install: the next process checks again
  }
  return true;
}

/** The agent's startup snapshot beside this module, when it is current and loads (checked once per binary, blob and flags), or null. */
export function agentSnapshot(): string | null {
  if (snapshotBlob === undefined) {
    const bundle = here('./agent-entry.bundle.cjs');
    const blob = snapshotIn(path.dirname(bundle));
    snapshotBlob = blob && snapshotLoadsOnce(blob, bundle) ? blob : null;
  }
  return snapshotBlob;
}

/**
 * The worker entry: under dist, for built-in strategies, the bundle (one file: no module
 * resolution) — deserialized from its startup snapshot when there is a usable one, else started
 * by agent-boot.js with V8's code cache; otherwise the compiled JS, whose @langchain/core is the
 * one a user's strategy or LangChain's classic memories import too; the TS source (through tsx)
 * under the test runner.
 */
function workerEntry(bundled: boolean): WorkerEntry {
  const boot = here('./agent-boot.js');
  const bundle = here('./agent-entry.bundle.cjs');
  if (bundled && existsSync(boot) && existsSync(bundle)) {
    const blob = agentSnapshot();
    return blob ? { file: bundle, execArgv: fromSnapshot(blob) } : { file: boot, execArgv: [] };
  }
  const js = fileURLToPath(new URL('./agent-entry.js', import.meta.url));
  if (existsSync(js)) return { file: js, execArgv: [] };
  return { file: fileURLToPath(new URL('./agent-entry.ts', import.meta.url)), execArgv: ['--import', 'tsx'] };
}

export const DEFAULT_STEP_TIMEOUT_MS = 60_000;

/**
 * Whether a process prepared with `prepared` needs nothing more for `hint`: what was loaded stays
 * loaded (a preload with the dictionary covers one without it), but a cell's handed jieba cuts are
 * its own (a spare or a reused process prepared for another cell gets this cell's).
 */
function covers(prepared: PreloadHint, hint: PreloadHint): boolean {
  return (!hint.cjk || prepared.cjk) && (hint.jiebaCuts === undefined || hint.jiebaCuts === prepared.jiebaCuts);
}

/** Agent processes forked by this process so far: tests count them (a crash costs one, a warm spare is never wasted). */
export const agentProcessStats = {
  spawned: 0,
  /** Startup snapshot load checks run (snapshotLoads): a process started from the blob and stopped. */
  snapshotChecks: 0,
  booted: { snapshot: 0, bundle: 0, modules: 0 } satisfies Record<AgentBoot['from'], number>,
};

/** How to start an agent process. */
export interface SpawnOptions {
  /** The model whose tokenizer the process warms while it waits for its cell (default: the offline model's). */
  tokenizerModel?: string;
  /** Only built-in strategies will run in it: the bundled entry can serve (default false). */
  builtinOnly?: boolean;
  /** Nothing in it opens a network connection (offline model and embedder, built-in strategies): it starts without TLS-only settings (default false). */
  offline?: boolean;
  stepTimeoutMs?: number;
}

export class AgentProcess {
  private readonly worker: ForkedWorker<ToAgent, FromAgent>;
  private waiting: { resolve: (message: FromAgent | ProcessExit) => void; expect: FromAgent['type'] } | undefined;
  private readonly stepTimeoutMs: number;
  /** The tokenizer model it warms: a spare serves cells of that model. */
  readonly tokenizerModel: string;
  /** When it was forked (performance.now()). */
  readonly spawnedAt = performance.now();
  /** The child's process id (tests match it against what the child logged). */
  get pid(): number | undefined {
    return this.worker.pid;
  }
  /** Where it is in its life: starting, ready, busy (a request in flight), closing, closed or crashed. */
  get state(): WorkerState {
    return this.worker.state;
  }
  /** Resolves once the process has loaded its modules and warmed its tokenizer (or with how it died first). */
  readonly ready: Promise<AgentBoot | ProcessExit>;
  /** Set once ready: what its start cost. */
  boot: AgentBoot | undefined;
  /** What it was told to preload, by strategy (with or without the Chinese dictionary): a spare waiting for a crash of that strategy's cell. */
  private readonly preparations = new Map<string, { hint: PreloadHint; done: Promise<unknown> }>();
  /** Whether the last preload asked of it is done. */
  prepared = false;
  /** The last preload request sent: every request before it is done when it is (they go one at a time). */
  private preparing: Promise<unknown> | undefined;
  /** The last preload asked for (possibly one made before): what `prepared` reports on. */
  private lastAsked: Promise<unknown> | undefined;

  private onAck: (ack: Ack) => void = () => undefined;

  private constructor(options: SpawnOptions) {
    this.stepTimeoutMs = options.stepTimeoutMs ?? DEFAULT_STEP_TIMEOUT_MS;
    this.tokenizerModel = options.tokenizerModel ?? 'offline';
    this.worker = new ForkedWorker<ToAgent, FromAgent>({
      entry: workerEntry(options.builtinOnly ?? false),
      args: [this.tokenizerModel],
      env: agentEnv(options.offline ?? false),
      isReady: (message) => message.type === 'ready',
    });
    agentProcessStats.spawned++;
    this.worker.onExit((exit) => {
      this.waiting?.resolve(exit);
      this.waiting = undefined;
    });
    let booted!: (boot: AgentBoot) => void;
    this.ready = Promise.race([new Promise<AgentBoot>((resolve) => (booted = resolve)), this.worker.exited]);
    this.worker.onMessage((message) => {
      if (message.type === 'ready') {
        this.boot = message.boot;
        agentProcessStats.booted[message.boot.from]++;
        return booted(message.boot);
      }
      if (message.type === 'ack') return this.onAck(message.ack);
      if (message.type === 'error') {
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting?.resolve(message);
        return;
      }
      if (this.waiting?.expect === message.type) {
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting.resolve(message);
      }
    });
  }

  /** Forks a process; it loads its modules and warms its tokenizer while the caller does other work (a warm spare). */
  static spawn(options: SpawnOptions = {}): AgentProcess {
    return new AgentProcess(options);
  }

  /** True until it exits. */
  get alive(): boolean {
    return this.worker.alive;
  }

  /**
   * Whether the process keeps this one's event loop alive: an idle spare must not (a program
   * that is done exits, and the spare with it, once its IPC channel closes); one in use must.
   */
  hold(held: boolean): void {
    this.worker.hold(held);
  }

  /** Opens the cell in the process; resolves with its report or how it died. */
  open(cell: AgentCell, resumeAt: { turn: number; session: number }, onAck: (ack: Ack) => void) {
    this.onAck = onAck;
    this.opens++;
    this.reusable = false;
    return this.request({ type: 'open', cell, resumeTurn: resumeAt.turn, resumeSession: resumeAt.session }, 'opened');
  }

  /**
   * Tells the process to load what `strategy` loads lazily (a native addon, a dictionary), once it
   * is up; resolves when it has, so a recovery in it never waits for a preload.
   */
  prepare(strategy: string, hint: PreloadHint): Promise<unknown> {
    let preparation = this.preparations.get(strategy);
    if (!preparation || !covers(preparation.hint, hint)) {
      // One request at a time: after the process is up and after any preload asked before this one.
      const done: Promise<unknown> = Promise.all([this.ready, this.preparing]).then(([boot]) =>
        isExit(boot) ? boot : this.request({ type: 'prepare', strategy, hint }, 'prepared'),
      );
      preparation = { hint: { ...hint, cjk: hint.cjk || (preparation?.hint.cjk ?? false) }, done };
      this.preparations.set(strategy, preparation);
      this.preparing = done;
    }
    const asked = preparation.done;
    this.prepared = false;
    this.lastAsked = asked;
    void asked.then(() => {
      if (this.lastAsked === asked) this.prepared = true;
    });
    return asked;
  }

  /** Resolves once the process is up and any preload asked of it is done: no request of a cell may cross a preload's reply. */
  async settled(): Promise<void> {
    await this.ready;
    await this.preparing;
  }

  /** Sends a message with no reply (arming a crash point). */
  post(message: ToAgent): void {
    this.worker.send(message);
  }

  /** Sends a message and waits for the reply of the given type, an error report, the process's exit or the timeout. */
  request<T extends FromAgent['type']>(
    message: ToAgent,
    expect: T,
  ): Promise<Extract<FromAgent, { type: T }> | Extract<FromAgent, { type: 'error' }> | ProcessExit> {
    const { exit } = this.worker;
    if (exit) return Promise.resolve(exit);
    // Replies carry no request id: a second request in flight would take the first one's reply.
    if (this.waiting)
      throw new Error(
        `agent process ${this.pid}: a '${message.type}' request while a '${this.waiting.expect}' reply is awaited`,
      );
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // A hung step is killed; its exit is what the caller sees.
        void this.worker.kill();
      }, this.stepTimeoutMs);
      this.waiting = {
        expect,
        resolve: (reply) => {
          clearTimeout(timer);
          this.worker.idle();
          resolve(reply as Extract<FromAgent, { type: T }>);
        },
      };
      this.worker.busy();
      this.worker.send(message);
    });
  }

  /**
   * Closes cleanly (flush + close in the process) and waits for it to exit; with `reuse`, the
   * process stays up holding nothing of the cell (`reusable` tells whether it did), to serve another.
   */
  async close(
    options: { reuse?: boolean } = {},
  ): Promise<Extract<FromAgent, { type: 'closed' }> | Extract<FromAgent, { type: 'error' }> | ProcessExit> {
    const reply = await this.request({ type: 'close', ...(options.reuse ? { reuse: true } : {}) }, 'closed');
    if (options.reuse && !isExit(reply) && reply.type === 'closed') {
      this.reusable = true;
      return reply;
    }
    // A close that failed (the strategy's flush or close threw) leaves the process up, exiting never.
    if (!isExit(reply) && reply.type === 'error') {
      await this.worker.kill();
      return reply;
    }
    // Its end was asked for: the exit that follows is a close, not a crash.
    this.worker.closing();
    await this.worker.exited;
    return reply;
  }

  /** Set when a clean close left it up to serve another cell (never after a crash: a killed process is gone). */
  reusable = false;

  /** Cells (and sessions) opened in it so far: its start's cost belongs to the first only. */
  opens = 0;

  kill(): Promise<ProcessExit> {
    return this.worker.kill();
  }
}
