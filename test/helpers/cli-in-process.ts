/**
 * One command of the built CLI run inside the test process: its own module (`dist/harness/cli/NAME.js`,
 * builder and handler, as `harness/cli/main.ts` registers it) under yargs, with stdout, stderr and the
 * exit code the handler sets captured. A command's many refusals (exit 2: a bad flag, a bad file)
 * and its runs that start no child process (compare, report, import, generate) then cost a parse
 * and the work itself, not a CLI process start each (about 0.6 s of CPU). What only the process
 * shows (main.ts's parser failures, the exit code leaving the process, no stack trace on stderr)
 * stays guarded by a few `membench()` spawns per command (test/cli/helpers.ts).
 *
 * Tests of a file run one at a time, so swapping process.stdout.write and process.stderr.write for
 * the length of a command captures only its output.
 */
import type { Argv, CommandModule, MiddlewareFunction } from 'yargs';
import yargs from 'yargs';
import { missingArguments, optionRefusal, usageHint } from '../../harness/cli/errors.js';
import type { CliResult } from '../cli/helpers.js';
import { builtModule } from './built.js';

/** `membench ARGS` in this process; `env` is set for the command only (undefined removes a variable). */
export async function membenchInProcess(
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): Promise<CliResult> {
  const [name] = args;
  if (name === undefined) throw new Error('membenchInProcess: name a command');
  const command = await builtModule<CommandModule>(`harness/cli/${name}.js`);
  let stdout = '';
  let stderr = '';
  const writes = { out: process.stdout.write, err: process.stderr.write };
  const exitCode = process.exitCode;
  const env = Object.fromEntries(Object.keys(options.env ?? {}).map((key) => [key, process.env[key]]));
  process.exitCode = undefined;
  setEnv(options.env ?? {});
  process.stdout.write = ((chunk: string | Uint8Array) => (
    (stdout += String(chunk)), true
  )) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (
    (stderr += String(chunk)), true
  )) as typeof process.stderr.write;
  try {
    try {
      // main.ts's parser: strict, and a usage failure is "membench: MESSAGE" with exit 2, the command not run.
      const parser = yargs([...args]) as Argv;
      await parser
        .scriptName('membench')
        .command(command)
        .strict()
        .middleware(
          ((parsed: Record<string, unknown>) => {
            const refused = optionRefusal(parsed, parser, args);
            if (refused !== undefined) throw new UsageFailure(refused);
          }) as unknown as MiddlewareFunction,
          true,
        )
        .exitProcess(false)
        .fail((message, error) => {
          throw (
            error ??
            new UsageFailure(
              `${missingArguments(message, args, [command as { command: string }], parser)}${usageHint(message, args, parser)}`,
            )
          );
        })
        .parseAsync();
    } catch (error) {
      if (!(error instanceof UsageFailure)) throw error;
      process.stderr.write(`membench: ${error.message}\n`);
      process.exitCode = 2;
    }
    const code = process.exitCode ?? 0;
    return { code: typeof code === 'number' ? code : Number(code), stdout, stderr };
  } finally {
    process.stdout.write = writes.out;
    process.stderr.write = writes.err;
    process.exitCode = exitCode;
    setEnv(env);
  }
}

/** yargs' own refusal (an unknown flag, a value not among the choices): main.ts prints it and exits 2. */
class UsageFailure extends Error {}

function setEnv(values: NodeJS.ProcessEnv): void {
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) delete process.env[key];
    else process.env[key] = value;
  }
}
