/**
 * Resolves a `--strategy` value that is not a plain built-in name: a module path (a user's own
 * strategy: JavaScript imported by Node, TypeScript through tsx) or `langchain:NAME` (LangChain's
 * classic memories).
 * Every failure is a MembenchError naming the file and the reason, never a stack trace.
 */
import { createRequire } from 'node:module';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { MembenchError } from '../harness/core/errors.js';
import { PEER_NAMES, type PeerName } from '../harness/core/peers.js';
import { withStdoutOnStderr } from '../harness/core/stdout-to-stderr.js';
import { didYouMean, kindOf } from '../harness/core/user-input.js';
import { builtinStrategies, findStrategy } from './index.js';
import { DURABILITY_MODES, LANGCHAIN_PREFIX, type StrategyDefinition } from './types.js';

/** The adapter (and LangChain) load only when a `langchain:NAME` strategy is asked for. */
const langchain = () => import('./langchain.js');
/** Peers wrapping other libraries (mem0, LangGraph): each adapter, and its package, loads only when asked for. */
const PEERS: Readonly<Record<PeerName, () => Promise<StrategyDefinition>>> = {
  mem0: async () => (await import('./adapters/mem0.js')).mem0,
  langgraph: async () => (await import('./adapters/langgraph.js')).langgraph,
};
export { PEER_NAMES };

/** Names end up in `--param NAME.KEY=V` and in reports: no dots, `=` or spaces. */
const STRATEGY_NAME = /^[a-z0-9][a-z0-9_:-]*$/iu;
const MODULE_EXTENSION = /\.(?:[cm]?[jt]s|tsx|jsx)$/iu;
/** Files Node imports itself; the rest (TypeScript, JSX) go through tsx, whose loader costs a process about half a second of CPU. */
const NODE_LOADS = /\.[cm]?js$/iu;
/**
 * Node's refusals of a JavaScript module's imports, raised before the module runs, that tsx may
 * still resolve (an extensionless path, a `.ts` file): such a module is imported again through tsx.
 */
const TSX_MAY_RESOLVE = new Set(['ERR_MODULE_NOT_FOUND', 'ERR_UNKNOWN_FILE_EXTENSION', 'ERR_UNSUPPORTED_DIR_IMPORT']);

/** True when a `--strategy` value names a file rather than a strategy. */
export function isModuleSource(source: string): boolean {
  return (
    source.startsWith('.') ||
    source.startsWith('file:') ||
    path.isAbsolute(source) ||
    source.includes('/') ||
    source.includes('\\') ||
    MODULE_EXTENSION.test(source)
  );
}

/**
 * The definition behind a `--strategy` value: a built-in name, `langchain:NAME`, or a module path
 * resolved against `cwd` whose default export (or `strategy` export) is a StrategyDefinition.
 */
export async function loadStrategyDefinition(
  source: string,
  options: { cwd?: string } = {},
): Promise<StrategyDefinition> {
  if (typeof source !== 'string')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `loadStrategyDefinition: expected a strategy name, langchain:NAME or a module path, got ${kindOf(source)}`,
    );
  const builtin = findStrategy(source);
  if (builtin) return builtin;
  const peer = (PEER_NAMES as readonly string[]).includes(source) ? PEERS[source as PeerName] : undefined;
  if (peer) return peer();
  if (source.startsWith(LANGCHAIN_PREFIX))
    return (await langchain()).langchainDefinition(source.slice(LANGCHAIN_PREFIX.length));
  if (!isModuleSource(source)) {
    const builtins = builtinStrategies.map((item) => item.name);
    const memories = (await langchain()).LANGCHAIN_MEMORY_NAMES.map((name) => LANGCHAIN_PREFIX + name);
    throw new MembenchError(
      'UNKNOWN_STRATEGY',
      `unknown strategy "${source}"${didYouMean(source, [...builtins, ...PEER_NAMES, ...memories])}: built-ins are ${builtins.join(', ')}; peers are ${PEER_NAMES.join(', ')}; ` +
        `LangChain memories are ${memories.join(', ')}; ` +
        'or give the path of a module, e.g. ./my-memory.ts',
    );
  }
  return loadModuleDefinition(source, moduleFile(source, options.cwd));
}

/** The file a module source names: a `file:` URL's path, else the path resolved against `cwd`. */
export function moduleFile(source: string, cwd = process.cwd()): string {
  return source.startsWith('file:') ? fileURLToPath(source) : path.resolve(cwd, source);
}

/**
 * Refuses a module source whose file is missing, not a file, or of an extension no loader takes,
 * without importing it (its top-level code runs once, in the run): the config file's check uses it too.
 */
export function checkModuleFile(source: string, cwd = process.cwd()): Promise<void> {
  return refuseUnloadable(source, moduleFile(source, cwd));
}

async function refuseUnloadable(source: string, file: string): Promise<void> {
  const where = source === file ? file : `${source} (${file})`;
  const kind = await stat(file).then(
    (stats) => (stats.isFile() ? 'file' : 'other'),
    () => 'missing',
  );
  if (kind === 'missing') throw new MembenchError('UNKNOWN_STRATEGY', `strategy module ${where} not found`);
  if (kind === 'other') throw new MembenchError('INVALID_ARGUMENT', `strategy module ${where} is not a file`);
  const extension = path.extname(file);
  if (extension !== '' && !MODULE_EXTENSION.test(file))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `strategy module ${where} is a ${extension} file: a strategy module is a .js, .mjs, .cjs or .ts file (or .mts, .cts, .jsx, .tsx)${await scenarioHint(file)}`,
    );
}

async function loadModuleDefinition(source: string, file: string): Promise<StrategyDefinition> {
  const where = source === file ? file : `${source} (${file})`;
  await refuseUnloadable(source, file);

  let namespace: Record<string, unknown>;
  try {
    // Its top-level code runs here, in whichever process loads it: what it prints goes to stderr.
    namespace = await withStdoutOnStderr(`strategy ${source}`, () => importModule(file));
  } catch (error) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `strategy module ${where} could not be loaded: ${loadFailure(error, await syntaxErrorPlace(error, file))}`,
    );
  }

  const { exports, definition } = pickExport(namespace);
  if (definition === undefined) {
    const found = Object.keys(exports);
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `strategy module ${where} exports no strategy: expected \`export default { name, description, options, defaultDurability, create }\` ` +
        `or \`export const strategy = ...\` (it exports: ${found.length ? found.join(', ') : 'nothing'})`,
    );
  }
  const problems = definitionProblems(definition);
  if (problems.length > 0) {
    const list = problems.map((problem) => `  - ${problem}`);
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `strategy module ${where} does not export a valid strategy definition:`,
      list,
    );
  }
  const { name } = definition as StrategyDefinition;
  if (findStrategy(name) || (PEER_NAMES as readonly string[]).includes(name)) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `strategy module ${where} is named "${name}", which is a ${(PEER_NAMES as readonly string[]).includes(name) ? 'peer adapter' : 'built-in strategy'}: give it another name`,
    );
  }
  if (name.startsWith(LANGCHAIN_PREFIX)) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `strategy module ${where} is named "${name}": the prefix "${LANGCHAIN_PREFIX}" is reserved for LangChain memories`,
    );
  }
  return definition as StrategyDefinition;
}

/**
 * `-s scenario.yaml` is a slip for `-c`: the hint when the file looks like a scenario (a `steps`
 * key), else nothing. Not validated here: the scenario loader and its schemas stay out of the agent
 * bundle, which holds this module.
 */
async function scenarioHint(file: string): Promise<string> {
  if (!/\.(?:ya?ml|json)$/iu.test(file)) return '';
  const text = await readFile(file, 'utf8').catch(() => '');
  return /^steps\s*:|"steps"\s*:/mu.test(text) ? '; it looks like a scenario file: give it with -c (--scenario)' : '';
}

/** Loads of JavaScript modules by this process: each load is a module instance of its own, as tsx's are. */
let nodeLoads = 0;
const requireHere = createRequire(import.meta.url);

/**
 * The module's namespace: JavaScript from Node itself, else (or when Node cannot resolve its imports)
 * through tsx. Each load evaluates the module again (a query of its own defeats Node's ES module cache;
 * a CommonJS file leaves require's cache first), so what it keeps at module level is never shared by
 * the cells a process runs one after another.
 */
async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (NODE_LOADS.test(file)) {
    delete requireHere.cache[requireHere.resolve(file)];
    try {
      return (await import(/* @vite-ignore */ `${url}?load=${++nodeLoads}`)) as Record<string, unknown>;
    } catch (error) {
      if (!TSX_MAY_RESOLVE.has(String((error as { code?: unknown }).code))) throw error;
    }
  }
  // tsx loads the module in a scoped namespace: no global loader is registered.
  const { tsImport } = await import('tsx/esm/api');
  return (await tsImport(url, import.meta.url)) as Record<string, unknown>;
}

/** The default export, else the `strategy` export; unwraps the CommonJS shape tsx gives non-ESM files. */
function pickExport(namespace: Record<string, unknown>): { exports: Record<string, unknown>; definition: unknown } {
  const commonJs = namespace.default as Record<string, unknown> | undefined;
  const exports =
    commonJs !== null && typeof commonJs === 'object' && commonJs.__esModule === true ? commonJs : namespace;
  const definition = exports.default ?? exports.strategy;
  // `export default null` is an export, of the wrong kind: said as such, not as no export at all.
  const exportedNull = exports.default === null || exports.strategy === null;
  return { exports, definition: definition === undefined && exportedNull ? null : definition };
}

/** What is wrong with a would-be definition, one phrase per problem. */
export function definitionProblems(value: unknown): string[] {
  if (value === null || typeof value !== 'object')
    return [`the export is ${value === null ? 'null' : typeof value}, not an object`];
  const definition = value as Record<string, unknown>;
  const problems: string[] = [];
  const problem = (key: string, what: string) =>
    problems.push(`${key in definition ? 'invalid' : 'missing'} "${key}" (${what})`);
  if (typeof definition.name !== 'string' || !STRATEGY_NAME.test(definition.name)) {
    problem(
      'name',
      'a string of letters, digits, "-", "_" or ":"; it names the strategy in reports and in --param NAME.KEY=V',
    );
  }
  if (typeof definition.description !== 'string') problem('description', 'a string');
  const options = definition.options as { parse?: unknown; safeParse?: unknown } | null | undefined;
  if (typeof options?.parse !== 'function' || typeof options.safeParse !== 'function')
    problem('options', 'a zod schema of the knobs, e.g. z.object({})');
  if (!DURABILITY_MODES.includes(definition.defaultDurability as never))
    problem('defaultDurability', `one of ${DURABILITY_MODES.join(', ')}`);
  if (typeof definition.create !== 'function')
    problem('create', 'a function (context, options) returning the strategy');
  return problems;
}

/** `FILE:LINE` over the offending line and a caret under its column: how Node decorates a syntax error it reports. */
const DECORATED_PLACE = /^(?<at>\S.*?):(?<line>\d+)\n.*\n(?<pad>[^\S\n]*)\^/u;

/**
 * Where Node's parser stopped in a JavaScript module with a syntax error, as `FILE:LINE:COLUMN`: from
 * the error when Node decorated it with the place (CommonJS), else from Node's own check of the file
 * (`node --check`), since an ES module's error carries none. Undefined when neither says (the error is
 * in a module it imports, or was thrown by its code): the message alone is said then.
 */
async function syntaxErrorPlace(error: unknown, file: string): Promise<string | undefined> {
  if (!(error instanceof SyntaxError) || !NODE_LOADS.test(file)) return undefined;
  const place = (text: string): string | undefined => {
    const found = DECORATED_PLACE.exec(text)?.groups;
    if (!found) return undefined;
    const at = found.at!.replace(/\?load=\d+$/u, '');
    return `${at.startsWith('file:') ? fileURLToPath(at) : at}:${found.line}:${found.pad!.length + 1}`;
  };
  const decorated = place(error.stack ?? '');
  if (decorated) return decorated;
  // Only on this failure path: the check parses the file again in a short-lived process of the same Node.
  const { execFile } = await import('node:child_process');
  const stderr = await new Promise<string>((resolve) => {
    execFile(process.execPath, ['--check', file], { timeout: 10_000 }, (_failed, _stdout, text) => resolve(text));
  });
  return place(stderr);
}

/** The reason a module failed to load, in a line or two: no stack, no loader internals; `place` is a syntax error's. */
function loadFailure(error: unknown, place?: string): string {
  if (!(error instanceof Error)) return String(error);
  // esbuild (tsx): "Transform failed with 1 error:\n/path/file.ts:3:10: ERROR: Expected ..."
  const transform = /^Transform failed with \d+ errors?:\n([\s\S]*)$/u.exec(error.message);
  if (transform)
    return `syntax error at ${transform[1]!
      .trim()
      .split('\n')[0]!
      .replace(/: ERROR: /u, ': ')}`;
  const firstLine = (error.message.split('\n')[0] ?? '').replace(/\?namespace=[\w-]+/gu, '');
  if (error instanceof SyntaxError)
    return place ? `syntax error at ${place}: ${firstLine}` : `syntax error: ${firstLine}`;
  const code = (error as { code?: unknown }).code;
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return firstLine;
  return `it threw ${error.name}: ${firstLine}`;
}
