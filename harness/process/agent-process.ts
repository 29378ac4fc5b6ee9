/**
 * The harness side of an agent process: fork, typed requests with per-step timeouts, and an
 * unexpected exit turned into a recorded outcome (code, signal) instead of a harness crash.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Ack } from '../agent/loop.js';
import type { FromAgent, ToAgent, AgentCell } from './protocol.js';

/** How a process ended when it should not have. */
export interface ProcessExit {
  exited: true;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The worker entry: compiled JS when running from dist, the TS source (through tsx) under the test runner. */
function workerEntry(): { file: string; execArgv: string[] } {
  const js = fileURLToPath(new URL('./agent-entry.js', import.meta.url));
  if (existsSync(js)) return { file: js, execArgv: [] };
  return { file: fileURLToPath(new URL('./agent-entry.ts', import.meta.url)), execArgv: ['--import', 'tsx'] };
}

export const DEFAULT_STEP_TIMEOUT_MS = 60_000;

export class AgentProcess {
  private readonly child: ChildProcess;
  private exit: ProcessExit | undefined;
  private waiting: { resolve: (message: FromAgent | ProcessExit) => void; expect: FromAgent['type'] } | undefined;
  private readonly exited: Promise<ProcessExit>;

  private onAck: (ack: Ack) => void = () => undefined;

  private constructor(private readonly stepTimeoutMs: number) {
    const entry = workerEntry();
    this.child = fork(entry.file, [], { execArgv: entry.execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'advanced' });
    this.exited = new Promise((resolve) => {
      this.child.on('exit', (code, signal) => {
        this.exit = { exited: true, code, signal };
        this.waiting?.resolve(this.exit);
        this.waiting = undefined;
        resolve(this.exit);
      });
    });
    this.child.on('message', (message: FromAgent) => {
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

  /** Forks a process; it loads its modules while the caller does other work (a warm spare). */
  static spawn(stepTimeoutMs = DEFAULT_STEP_TIMEOUT_MS): AgentProcess {
    return new AgentProcess(stepTimeoutMs);
  }

  /** Opens the cell in the process; resolves with its report or how it died. */
  open(cell: AgentCell, resumeTurn: number, onAck: (ack: Ack) => void) {
    this.onAck = onAck;
    return this.request({ type: 'open', cell, resumeTurn }, 'opened');
  }

  /** Sends a message with no reply (arming a crash point). */
  post(message: ToAgent): void {
    if (!this.exit) this.child.send(message);
  }

  /** Sends a message and waits for the reply of the given type, an error report, the process's exit or the timeout. */
  request<T extends FromAgent['type']>(message: ToAgent, expect: T): Promise<Extract<FromAgent, { type: T }> | Extract<FromAgent, { type: 'error' }> | ProcessExit> {
    if (this.exit) return Promise.resolve(this.exit);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        // A hung step is killed; its exit is what the caller sees.
        this.child.kill('SIGKILL');
      }, this.stepTimeoutMs);
      this.waiting = {
        expect,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply as Extract<FromAgent, { type: T }>);
        },
      };
      this.child.send(message);
    });
  }

  /** Closes cleanly (flush + close in the process) and waits for it to exit. */
  async close(): Promise<Extract<FromAgent, { type: 'closed' }> | Extract<FromAgent, { type: 'error' }> | ProcessExit> {
    const reply = await this.request({ type: 'close' }, 'closed');
    await this.exited;
    return reply;
  }

  kill(): Promise<ProcessExit> {
    if (!this.exit) this.child.kill('SIGKILL');
    return this.exited;
  }
}

export function isExit(value: unknown): value is ProcessExit {
  return typeof value === 'object' && value !== null && (value as ProcessExit).exited === true;
}
