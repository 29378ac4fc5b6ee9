/**
 * One forked child process and its lifecycle, shared by the two kinds membench forks: agent
 * processes (agent-process.ts, killed at crash points) and the run's pool workers
 * (harness/run/pool.ts). Its state is explicit, as vitest's pool workers have it:
 *
 *   starting → ready ⇄ busy → closing → closed
 *                 └──────────────┴────→ crashed   (an exit nobody asked for)
 *
 * Messages are typed by the caller; the child says it is ready with a message of its own; an
 * exit is recorded with its code and signal, never thrown.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { statSync } from 'node:fs';
import { MembenchError } from '../core/errors.js';
import { makeDirs } from '../core/fs.js';

/** Where a worker is in its life. */
export type WorkerState = 'starting' | 'ready' | 'busy' | 'closing' | 'closed' | 'crashed';

/** How a process ended. */
export interface ProcessExit {
  exited: true;
  code: number | null;
  signal: NodeJS.Signals | null;
}

export function isExit(value: unknown): value is ProcessExit {
  return typeof value === 'object' && value !== null && (value as ProcessExit).exited === true;
}

/** The file a worker runs and the Node flags it needs (a startup snapshot, tsx under the test runner). */
export interface WorkerEntry {
  file: string;
  execArgv: string[];
}

export interface WorkerOptions<FromChild> {
  entry: WorkerEntry;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  /** In a process group of its own (the pool's workers: a terminal's Ctrl-C reaches only the harness, which kills the group). */
  detached?: boolean;
  /** The child's message saying it is up. */
  isReady: (message: FromChild) => boolean;
}

/**
 * glibc's allocator settings for every forked child (GLIBC_TUNABLES; other C libraries and glibc
 * before 2.35 ignore the names they do not know). A run starts a process per crash, and on a
 * 2-core VM about a third of its CPU went to the kernel, mostly zero-filling pages on first
 * touch: the startup snapshot read into a fresh buffer, V8's zones, SQLite's and hnswlib's
 * buffers, each freed to the OS and faulted in again. `hugetlb=1` lets malloc ask for
 * transparent huge pages (one fault per 2 MiB where the kernel grants them on madvise, as
 * Debian's does by default); the two thresholds start where glibc's dynamic ones end up after
 * its first large frees (allocations below 32 MiB from the heap, kept up to 64 MiB free before
 * trimming), so a buffer freed and allocated again reuses faulted-in pages. Measured on the
 * default run (docs/notes/measurements.md): page faults 1.96 M → 0.87 M, CPU 87 → 66–67 s.
 * A name the user set in their own GLIBC_TUNABLES wins.
 */
export const MALLOC_TUNABLES: Readonly<Record<string, string>> = {
  'glibc.malloc.hugetlb': '1',
  'glibc.malloc.mmap_threshold': String(32 * 1024 * 1024),
  'glibc.malloc.trim_threshold': String(64 * 1024 * 1024),
};

/** `env` with MALLOC_TUNABLES added to its GLIBC_TUNABLES (names already there are kept as they are). */
export function withMallocTunables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (process.platform !== 'linux') return env;
  const own = env.GLIBC_TUNABLES ? env.GLIBC_TUNABLES.split(':').filter(Boolean) : [];
  const named = new Set(own.map((entry) => entry.split('=')[0]));
  const added = Object.entries(MALLOC_TUNABLES)
    .filter(([name]) => !named.has(name))
    .map(([name, value]) => `${name}=${value}`);
  return added.length === 0 ? env : { ...env, GLIBC_TUNABLES: [...own, ...added].join(':') };
}

/**
 * `MEMBENCH_CPU_PROF=DIR` (a developer's switch, docs/development.md): every forked child writes a
 * V8 CPU profile into DIR when it exits cleanly (a SIGKILLed agent writes none). Node refuses
 * `--cpu-prof` in NODE_OPTIONS, so this is the way to profile the pool workers and agent processes.
 */
function profileFlags(): string[] {
  const dir = process.env.MEMBENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/**
 * Refuses a MEMBENCH_CPU_PROF no child could write its profile into (a regular file, a path through
 * one, no permission), once before a run, naming the variable: else each process prints Node's
 * ENOTDIR line as it exits. The directory is made here, as each child would make it.
 */
export function checkProfileDir(dir = process.env.MEMBENCH_CPU_PROF): void {
  if (!dir) return;
  try {
    makeDirs(dir);
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(`${dir} is a file`), { code: 'ENOTDIR' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? 'not a directory (or a part of the path is a file)'
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? 'cannot be made or written (permission denied)'
          : `cannot be made (${code ?? (error as Error).message})`;
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `MEMBENCH_CPU_PROF=${dir}: ${why}: every forked process writes its CPU profile into this directory; give a directory, or unset the variable`,
    );
  }
}

/** A forked child process with explicit states; `ToChild` and `FromChild` are its IPC messages. */
export class ForkedWorker<ToChild, FromChild> {
  private current: WorkerState = 'starting';
  private readonly child: ChildProcess;
  private exitRecord: ProcessExit | undefined;
  /** Whether it ever said it was ready (a worker that dies before that points at a broken entry, not at its work). */
  cameUp = false;
  private readonly messageListeners: ((message: FromChild) => void)[] = [];
  private readonly exitListeners: ((exit: ProcessExit) => void)[] = [];
  /** Resolves with how it exited. */
  readonly exited: Promise<ProcessExit>;

  constructor(options: WorkerOptions<FromChild>) {
    this.child = fork(options.entry.file, options.args ?? [], {
      execArgv: [...options.entry.execArgv, ...profileFlags()],
      env: withMallocTunables(options.env ?? process.env),
      // The child's stdout is this process's stderr: nothing a child prints is membench's own output
      // (a native addon's printf, a tool a strategy starts), and its JS stdout is diverted there too (stdoutToStderr).
      stdio: ['ignore', 2, 'inherit', 'ipc'],
      serialization: 'advanced',
      ...(options.detached ? { detached: true } : {}),
    });
    // A send to a process that is dying: its exit is what counts.
    this.child.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        const exit: ProcessExit = { exited: true, code, signal };
        this.exitRecord = exit;
        this.current = this.current === 'closing' || (code === 0 && signal === null) ? 'closed' : 'crashed';
        for (const listener of this.exitListeners) listener(exit);
        resolve(exit);
      });
    });
    this.child.on('message', (message: FromChild) => {
      if (this.current === 'starting' && options.isReady(message)) {
        this.current = 'ready';
        this.cameUp = true;
      }
      for (const listener of this.messageListeners) listener(message);
    });
  }

  get state(): WorkerState {
    return this.current;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** How it exited, once it has. */
  get exit(): ProcessExit | undefined {
    return this.exitRecord;
  }

  /** True until it exits. */
  get alive(): boolean {
    return this.exitRecord === undefined;
  }

  /** Every message it sends, in order (its `ready` included). */
  onMessage(listener: (message: FromChild) => void): void {
    this.messageListeners.push(listener);
  }

  /** Called once, when it exits (expectedly or not). */
  onExit(listener: (exit: ProcessExit) => void): void {
    this.exitListeners.push(listener);
  }

  /** Sends a message (nothing once it has exited). */
  send(message: ToChild): void {
    if (this.alive) this.child.send(message as object);
  }

  /** It took work: `ready` → `busy`. */
  busy(): void {
    if (this.current === 'ready') this.current = 'busy';
  }

  /** Its work is done: `busy` → `ready`. */
  idle(): void {
    if (this.current === 'busy') this.current = 'ready';
  }

  /** Its end was asked for (a clean close, a disconnect, a kill): when it exits, it is `closed`, not `crashed`. */
  closing(): void {
    if (this.alive) this.current = 'closing';
  }

  /** Closes its IPC channel: a child that exits on `disconnect` ends on its own. */
  disconnect(): void {
    this.closing();
    if (this.child.connected) this.child.disconnect();
  }

  /** SIGKILLs it (its whole process group with `group`: the agent processes a pool worker forked); resolves on its exit. */
  kill(options: { group?: boolean; expected?: boolean } = {}): Promise<ProcessExit> {
    if (!this.alive || this.child.pid === undefined) return this.exited;
    if (options.expected !== false) this.closing();
    if (options.group) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
        return this.exited;
      } catch {
        // not a group leader after all: the process alone
      }
    }
    this.child.kill('SIGKILL');
    return this.exited;
  }

  /**
   * Whether it keeps this process's event loop alive: an idle spare must not (a program that is
   * done exits, and the spare with it, once its IPC channel closes); one in use must.
   */
  hold(held: boolean): void {
    if (held) {
      this.child.ref();
      this.child.channel?.ref();
    } else {
      this.child.unref();
      this.child.channel?.unref();
    }
  }
}
