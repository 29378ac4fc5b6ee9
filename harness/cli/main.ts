/** The `membench` command line: one module per command, each a thin layer over the library. */
import yargs, { type CommandModule, type MiddlewareFunction } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { errorMessage } from '../core/errors.js';
import { MEMBENCH_VERSION } from '../core/package-info.js';
import * as importDataset from './import.js';
import * as bench from './bench.js';
import * as compare from './compare.js';
import * as explain from './explain.js';
import * as generate from './generate.js';
import * as judge from './judge.js';
import * as list from './list.js';
import * as merge from './merge.js';
import * as report from './report.js';
import * as run from './run.js';
import * as serve from './serve.js';
import * as tune from './tune.js';
import * as validate from './validate.js';
import { missingArguments, optionRefusal, sayError, usageHint } from './errors.js';

/**
 * yargs reads a value that starts with `-` and a digit (`--values -1,2`) as short flags (`-1`),
 * then fails with "Unknown argument: 1"; such a value is joined to its option (`--values=-1,2`) so
 * the command itself checks it and names it.
 */
function joinSignedValues(argv: readonly string[]): string[] {
  const joined: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const next = argv[index + 1];
    if (
      arg.startsWith('--') &&
      !arg.includes('=') &&
      SIGNED_VALUE_OPTIONS.has(arg.slice(2)) &&
      next !== undefined &&
      /^-[\d.]/u.test(next)
    ) {
      joined.push(`${arg}=${next}`);
      index++;
    } else joined.push(arg);
  }
  return joined;
}

/** Options whose value may be a list or range starting with a negative number. */
const SIGNED_VALUE_OPTIONS = new Set(['values']);

/** The part of yargs' internals that keeps a command's help text (not in its types). */
interface HelpCache {
  getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } };
}

/**
 * yargs renders the whole help text of the command it is about to run and keeps it, for a failure
 * to show (~0.2 s of CPU for `run`, before the run can start); `.fail` below never shows it, and
 * `--help` renders its own.
 */
function withoutHelpCache<T extends object>(parser: T): T {
  const usage = (parser as HelpCache).getInternalMethods?.().getUsageInstance?.();
  if (usage?.cacheHelpMessage) usage.cacheHelpMessage = () => undefined;
  return parser;
}

/**
 * A reader that stops early (`membench run | head -1`, or `2>&1 | head -1`) closes stdout or
 * stderr: the next write fails with EPIPE, which Node raises as an unhandled 'error' event (exit
 * code 1, whatever the command's own). What it did not read is let go: the command goes on (a run
 * still writes its reports), and its own exit code stands.
 */
function ignoreClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    });
}

/**
 * A working dir removed after the shell entered it (`cd d; rm -rf ../d`) makes process.cwd() throw
 * ENOENT, first inside yargs, as an uncaught stack trace for any command, --help included: the
 * refusal in words, or undefined when the working dir is there.
 */
function missingWorkingDir(): string | undefined {
  try {
    process.cwd();
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? 'the working directory no longer exists (removed after the shell entered it?): cd to a directory that exists, then run again'
      : `cannot read the working directory (${code ?? errorMessage(error)}): cd to a directory you can read, then run again`;
  }
}

/** The commands, in the order --help lists them. */
const COMMANDS = [
  run,
  validate,
  list,
  compare,
  report,
  judge,
  merge,
  tune,
  explain,
  importDataset,
  generate,
  bench,
  serve,
];
/** Their names as a bare `membench` lists them: `run, validate, … or serve`. */
const COMMAND_NAMES = ((names: string[]) => `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`)(
  COMMANDS.map((module) => module.command.split(' ')[0]!),
);

/** Where a usage failure sends the reader: the command's own --help when a command was named, else the list of commands. */
function helpLine(argv: readonly string[]): string {
  const named = COMMANDS.some((module) => module.command.split(' ')[0] === argv[0]);
  return `Run "membench ${named ? `${argv[0]} ` : ''}--help" for usage.`;
}

export async function main(argv: string[]): Promise<void> {
  ignoreClosedOutput();
  const noCwd = missingWorkingDir();
  if (noCwd !== undefined) {
    process.stderr.write(`membench: ${noCwd}\n`);
    process.exitCode = 2;
    return;
  }
  // One instance throughout: once a command is chosen it holds that command's options (its builder ran on it), which `.fail` reads, even for a failure before any middleware ran.
  const parser = withoutHelpCache(yargs(joinSignedValues(argv)));
  await parser
    .scriptName('membench')
    .usage('$0 <command> [options]\n\nBenchmark LLM memory strategies: tokens, latency, recall, durability.')
    .command(COMMANDS as unknown as CommandModule[])
    .middleware(
      ((parsed: Record<string, unknown>) => {
        const refused = optionRefusal(parsed, parser, argv);
        if (refused === undefined) return;
        sayError(`membench: ${refused}\n${helpLine(argv)}\n`);
        process.exit(2);
      }) as unknown as MiddlewareFunction,
      true,
    )
    .demandCommand(1, `name a command: ${COMMAND_NAMES} (membench --help says what each does)`)
    .strict()
    .version(MEMBENCH_VERSION)
    .help()
    .alias('h', 'help')
    .wrap(Math.min(110, process.stdout.columns || 100))
    .fail((message, error) => {
      if (error) throw error;
      const said = missingArguments(message, argv, COMMANDS, parser);
      sayError(`membench: ${said}${usageHint(message, argv, parser)}\n${helpLine(argv)}\n`);
      process.exit(2);
    })
    .parseAsync();
}

await main(hideBin(process.argv));
