/** Runs the built CLI (`bin/membench.js`, as npx would) and captures its output and exit code. */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(ROOT, 'bin/membench.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function membench(
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** A CLI process left running, for tests that stop it (a signal) at an event they wait on. */
export interface RunningCli {
  child: ChildProcess;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
  stdout(): string;
  stderr(): string;
}

/** Starts the built CLI without waiting for it; its output is collected. */
export function startMembench(args: readonly string[], options: { env?: NodeJS.ProcessEnv } = {}): RunningCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let ended = false;
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => ((ended = true), resolve({ code, signal }))),
  );
  return { child, exited, hasExited: () => ended, stdout: () => stdout, stderr: () => stderr };
}

/**
 * Waits for an event the test can only observe from outside (a file appearing, a request reaching
 * a server) by checking `happened()` every 20 ms; gives up when the process ended first.
 */
export async function until(happened: () => boolean, running: RunningCli): Promise<void> {
  while (!happened() && !running.hasExited()) await sleep(20);
}

/** `run` of `scenario` with `strategies` against a live endpoint at `baseUrl` speaking the OpenAI wire format (model `openai:test-model`), then `more` flags. */
export function liveRunArgs(
  baseUrl: string,
  scenario: string,
  strategies: readonly string[],
  ...more: string[]
): string[] {
  return [
    'run',
    '-c',
    scenario,
    ...strategies.flatMap((strategy) => ['-s', strategy]),
    '--model',
    'openai:test-model',
    '--base-url',
    baseUrl,
    ...more,
  ];
}
