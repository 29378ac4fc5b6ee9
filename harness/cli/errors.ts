/** The one place where errors become messages and exit codes: 0 ok, 1 a threshold failed, 2 bad input. */
import { fileSystemProblem, isMembenchError } from '../core/errors.js';
import { maskSecrets } from '../core/secrets.js';
import { visibleControls } from '../core/text.js';
import { typoOf } from '../core/user-input.js';

/**
 * Writes a message for the terminal: keys masked, and control characters but tab and line feed (an
 * ESC or a carriage return in a path, a value or a file's text that the message quotes) as their
 * escapes, so a message cannot recolour, retitle or overwrite the terminal that shows it.
 */
export function sayError(text: string): void {
  process.stderr.write(visibleControls(maskSecrets(text)));
}

export function reportError(error: unknown): number {
  // A full disk, a path that is a file: plain words and the path, never a stack trace.
  error = fileSystemProblem(error) ?? error;
  if (isMembenchError(error)) {
    sayError(`membench: ${error.message}\n`);
    for (const line of error.details) sayError(`${line}\n`);
    return error.exitCode;
  }
  sayError(
    `membench: internal error (please report it): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return 1;
}

/**
 * Wraps a command handler so thrown errors set the exit code instead of escaping as stack traces.
 * A handler whose work never settles would let Node exit quietly once nothing is left to run:
 * that is reported and exits 1, never 0.
 */
export function handled<A>(handler: (argv: A) => Promise<number | void>): (argv: A) => Promise<void> {
  return async (argv: A) => {
    const unfinished = (): void => {
      process.stderr.write(
        'membench: internal error (please report it): the command stopped with its work unfinished (a promise that never settled)\n',
      );
      process.exitCode = 1;
    };
    process.once('beforeExit', unfinished);
    try {
      process.exitCode = (await handler(argv)) ?? 0;
    } catch (error) {
      process.exitCode = reportError(error);
    } finally {
      process.off('beforeExit', unfinished);
    }
  };
}

/** What yargs says of the options it parsed (not in its types): which hold one value, which a list, what each is for. */
interface ParsedOptions {
  getOptions?: () => {
    string?: string[];
    number?: string[];
    array?: string[];
    boolean?: string[];
    alias?: Record<string, string[]>;
    choices?: Record<string, unknown>;
    key?: Record<string, unknown>;
  };
  getInternalMethods?: () => { getUsageInstance?: () => { getDescriptions?: () => Record<string, unknown> } };
}

/** The options yargs parsed for the chosen command (undefined from a parser without them). */
const optionsOf = (parser: unknown) => (parser as ParsedOptions | undefined)?.getOptions?.();

/**
 * yargs makes an option given twice (`-o a -o b`) an array, which a command reading one value then
 * trips on (`out.trim is not a function`: an internal error). The refusal for the first such option
 * (`--out given 2 times (a, b): …`), or undefined; `parser` is the yargs instance a middleware gets.
 */
export function repeatedOption(argv: Record<string, unknown>, parser: unknown): string | undefined {
  const options = optionsOf(parser);
  if (!options) return undefined;
  const lists = new Set(options.array ?? []);
  // An option with choices and no type (`explain --lang`) takes one value too: yargs checks each of an array's.
  for (const name of [...(options.string ?? []), ...(options.number ?? []), ...Object.keys(options.choices ?? {})]) {
    const value = argv[name];
    // Aliases hold the same array: the long name says it.
    if (lists.has(name) || !Array.isArray(value) || name.length === 1) continue;
    return `--${name} given ${value.length} times (${value.join(', ')}): it takes one value; give it once`;
  }
  return undefined;
}

/**
 * A switch given a value other than true or false (`--allow-missing=yes`), which yargs reads as
 * false: the refusal for the first one in `args`, or undefined. `--name=true` and `=false` are read.
 */
export function switchWithValue(args: readonly string[], parser: unknown): string | undefined {
  const switches = new Set(optionsOf(parser)?.boolean ?? []);
  for (const arg of args) {
    if (arg === '--') break;
    const given = /^--(?:no-)?([^=]+)=(.*)$/su.exec(arg);
    if (!given || !switches.has(given[1]!) || given[2] === 'true' || given[2] === 'false') continue;
    return `${arg}: --${given[1]} is a switch: give it alone to turn it on (or --no-${given[1]} to turn it off); its value, if any, is true or false`;
  }
  return undefined;
}

/**
 * yargs' "Not enough non-option arguments: got 1, need at least 2" and "Missing required
 * arguments: param, values" in words that name what is missing, with its choices where it has
 * some: a positional with the command's form (`list needs <what> (strategies or scenarios):
 * membench list <what>`), an option with what its --help says of it (`tune needs --param (-p):
 * the numeric knob to sweep, …`); the message as it came for anything else. `parser` is the
 * yargs instance, which holds the command's options once the command is chosen.
 */
export function missingArguments(
  message: string,
  args: readonly string[],
  commands: readonly { command: string }[],
  parser: unknown,
): string {
  const unknown = /^Unknown arguments?: (.*)$/su.exec(message)?.[1];
  if (unknown !== undefined) return unknownArguments(unknown.split(', '), parser);
  const got = /^Not enough non-option arguments: got (\d+), need at least \d+$/u.exec(message)?.[1];
  const required = /^Missing required arguments?: (.+)$/u.exec(message)?.[1]?.split(', ');
  const usage = commands.find((module) => module.command.split(' ')[0] === args[0])?.command;
  if ((got === undefined && required === undefined) || usage === undefined) return message;
  const options = optionsOf(parser);
  const descriptions =
    (parser as ParsedOptions | undefined)?.getInternalMethods?.().getUsageInstance?.().getDescriptions?.() ?? {};
  const withChoices = (name: string, shown: string): string => {
    const listed = options?.choices?.[name];
    return Array.isArray(listed) && listed.length > 0 ? `${shown} (${listed.join(' or ')})` : shown;
  };
  // `<files..>` is the positional `files`.
  const positionals = new Map(
    usage
      .split(' ')
      .filter((part) => /^<.+>$/u.test(part))
      .map((part) => [part.slice(1, -1).replace(/\.\.$/u, ''), part]),
  );
  const option = (name: string): string => {
    const aliases = (options?.alias?.[name] ?? []).map((alias) => (alias.length === 1 ? `-${alias}` : `--${alias}`));
    const shown = withChoices(name, `--${name}${aliases.length > 0 ? ` (${aliases.join(', ')})` : ''}`);
    // yargs marks its own texts (--help, --version) for translation.
    const describe = descriptions[name];
    return typeof describe === 'string' && describe !== ''
      ? `${shown}: ${describe.replace(/^__yargsString__:/u, '')}`
      : shown;
  };
  const names = got !== undefined ? [...positionals.keys()].slice(Number(got)) : required!;
  if (names.length === 0) return message;
  const missing = names.map((name) => {
    const part = positionals.get(name);
    return part === undefined ? option(name) : withChoices(name, part);
  });
  // An option's words hold colons: each is its own clause.
  return names.every((name) => positionals.has(name))
    ? `${args[0]} needs ${missing.join(' and ')}: membench ${usage}`
    : `${args[0]} needs ${missing.join('; ')}`;
}

/**
 * yargs' "Unknown arguments: max-latency, maxLatency" without the camel-case twin it adds of each
 * dashed name, each name with the option it is a typo or the start of, where one is
 * (`Unknown argument: stratgy (did you mean --strategy?)`).
 */
function unknownArguments(names: readonly string[], parser: unknown): string {
  const camel = (name: string): string => name.replace(/-([a-z])/gu, (_, letter: string) => letter.toUpperCase());
  const own = names.filter(
    (name) => !names.some((other) => other !== name && other.includes('-') && camel(other) === name),
  );
  const keys = Object.keys(optionsOf(parser)?.key ?? {});
  // The options as --help spells them: dashed, and not yargs' camel-case twins.
  const options = keys.filter((key) => key.length > 1 && !keys.some((other) => other !== key && camel(other) === key));
  const said = own.map((name) => {
    const started = options.filter((option) => option.startsWith(name));
    const near = name.length > 1 ? (started.length === 1 ? started[0] : typoOf(name, options)) : undefined;
    return near === undefined ? name : `${name} (did you mean --${near}?)`;
  });
  return `Unknown argument${own.length === 1 ? '' : 's'}: ${said.join(', ')}`;
}

/**
 * What to add to a yargs usage failure, where the usual cause is known. "Unknown argument: X":
 * a value after a switch (`--overwrite 5`, `--keep-rankings 0`) is not the switch's, and a digit
 * is a value that starts with `-` (`--seed -1`), which yargs reads as flags. Too few arguments for
 * `import`: `longmemeval:FILE` is run's --dataset form. A required option missing: the options
 * given that the command does not have (`tune --knob k`, a guess at --param), which yargs names
 * only once the required ones are there. Empty when nothing known explains it.
 */
export function usageHint(message: string, args: readonly string[], parser: unknown): string {
  if (/^Missing required arguments?: /u.test(message)) {
    const options = optionsOf(parser);
    const known = new Set([...Object.keys(options?.key ?? {}), ...Object.values(options?.alias ?? {}).flat()]);
    const unknown = args
      .slice(0, args.includes('--') ? args.indexOf('--') : undefined)
      .filter((arg) => /^--?[^-\d]/u.test(arg))
      .filter((arg) => {
        const name = arg.replace(/^--?(?:no-)?/u, '').replace(/=.*$/su, '');
        // `-qs`: two short flags.
        return !known.has(name) && (arg.startsWith('--') || ![...name].every((flag) => known.has(flag)));
      });
    return unknown.length > 0
      ? `\n(${unknown.join(', ')}: not ${unknown.length === 1 ? 'an option' : 'options'} of ${args[0]}; membench ${args[0]} --help lists its options)`
      : '';
  }
  if (message.startsWith('Not enough non-option arguments') && args[0] === 'import') {
    const joined = args.find((arg) => /^(?:locomo|longmemeval):./u.test(arg));
    if (joined !== undefined) {
      const [dataset, ...file] = joined.split(':');
      return `\n(import takes the dataset and the file apart: membench import ${dataset} ${file.join(':')}; DATASET:FILE is the form of run --dataset)`;
    }
  }
  const unknown = /^Unknown arguments?: (.*)$/su.exec(message)?.[1]?.split(', ');
  if (!unknown) return '';
  const options = optionsOf(parser);
  const switches = new Set(options?.boolean ?? []);
  for (const [name, aliases] of Object.entries(options?.alias ?? {}))
    if (switches.has(name)) for (const alias of aliases) switches.add(alias);
  for (const value of unknown) {
    const index = args.indexOf(value);
    const before = index > 0 ? /^--?([^=]+)$/u.exec(args[index - 1]!)?.[1] : undefined;
    if (before !== undefined && switches.has(before))
      return `\n(${args[index - 1]} is a switch and takes no value: ${JSON.stringify(value)} was left over; give the switch alone, or --${before}=false)`;
  }
  return /^-?[\d.]/u.test(unknown[0]!)
    ? '\n(a value that starts with "-" and a digit is read as flags: join it to its option with "=", e.g. --seed=-1)'
    : '';
}

/** What the CLI refuses of its options before any command runs (repeatedOption, switchWithValue), or undefined. */
export function optionRefusal(
  parsed: Record<string, unknown>,
  parser: unknown,
  args: readonly string[],
): string | undefined {
  return repeatedOption(parsed, parser) ?? switchWithValue(args, parser);
}
