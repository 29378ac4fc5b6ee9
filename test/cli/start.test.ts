/**
 * What one `membench` process loads before it does anything: `--version`, `--help` and an argument
 * error load yargs and the command modules (the flag table once a command is named), none of the
 * native addons, WebAssembly or chart code the commands use; those load in the handler, by dynamic
 * import (harness/cli/*.ts). Counted, not timed: each module the process loads is logged
 * (test/helpers/module-log.mjs), and the packages esbuild bundled into a loaded dist/cli chunk are
 * read from the `// node_modules/NAME/...` line it writes above each bundled module.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { membench, type CliResult } from './helpers.js';

const MODULE_LOG = fileURLToPath(new URL('../helpers/module-log.mjs', import.meta.url));

/** What a command never needs before its handler runs: native addons, tiktoken's WebAssembly, the chart code. */
const HEAVY = ['tiktoken', 'better-sqlite3', 'hnswlib-node', '@node-rs/jieba', '@napi-rs/canvas', 'chart.js'];

const temps: string[] = [];
afterEach(async () => {
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

/** A temp dir of this test, removed after it. */
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/**
 * Runs the CLI with its module loads logged; returns its result, the packages its own process's
 * main thread loaded (not its children's) and those its worker threads loaded (`threadPackages`).
 */
async function loading(
  args: readonly string[],
): Promise<CliResult & { packages: Set<string>; threadPackages: Set<string> }> {
  const log = path.join(await tempDir('membench-start-'), 'modules.log');
  const result = await membench(args, {
    env: {
      MEMBENCH_MODULE_LOG: log,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${MODULE_LOG}`.trim(),
    },
  });
  const lines = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  // The CLI's own process is the one that loaded bin/membench.js; a run's worker processes log too.
  const pid = lines.find((line) => line.endsWith('bin/membench.js'))!.split(' ')[0];
  const packagesOf = async (prefix: (line: string) => boolean): Promise<Set<string>> => {
    const packages = new Set<string>();
    for (const line of lines.filter(prefix)) {
      const url = line.slice(line.indexOf(' ') + 1);
      const external = /node_modules\/((?:@[^/]+\/)?[^/]+)\//u.exec(url);
      if (external) packages.add(external[1]!);
      if (!/\/dist\/cli\/[^/]+\.mjs$/u.test(url)) continue;
      const chunk = await readFile(url.startsWith('file:') ? fileURLToPath(url) : url, 'utf8');
      for (const [, name] of chunk.matchAll(/^\/\/ node_modules\/((?:@[^/]+\/)?[^/]+)\//gmu)) packages.add(name!);
    }
    return packages;
  };
  return {
    ...result,
    packages: await packagesOf((line) => line.startsWith(`${pid} `)),
    threadPackages: await packagesOf((line) => line.startsWith(`${pid}:`)),
  };
}

describe('what a membench process loads at start', () => {
  it('--version: yargs, not the flag table (zod), the library or any addon', async () => {
    const result = await loading(['--version']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^\d+\.\d+\.\d+/u);
    expect(result.packages).toContain('yargs'); // the log sees bundled packages: an empty set would prove nothing
    for (const name of [...HEAVY, 'zod', 'yaml', '@langchain/core']) expect(result.packages, name).not.toContain(name);
  });

  it('--help: every command described without loading the flag table or any addon', async () => {
    const result = await loading(['--help']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('membench run');
    for (const name of [...HEAVY, 'zod', 'yaml', '@langchain/core']) expect(result.packages, name).not.toContain(name);
  });

  it('run --help and an argument error (exit 2): the flag table only, no addon, no library', async () => {
    const help = await loading(['run', '--help']);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('--strategy');
    const error = await loading(['run', '--bogus']);
    expect(error.code).toBe(2);
    expect(error.stderr).toContain('Unknown argument: bogus');
    for (const { packages } of [help, error]) {
      expect(packages).toContain('zod'); // the flag table is read
      for (const name of [...HEAVY, '@langchain/core', 'cli-table3']) expect(packages, name).not.toContain(name);
    }
  });

  it('a real run still loads what it uses in its handler and writes its results; its own thread loads no tiktoken, no hnswlib (bench only) and no chart drawing (its worker thread does)', async () => {
    const out = path.join(await tempDir('membench-start-run-'), 'run');
    const result = await loading(['run', '-c', 'recipes-en', '-s', 'buffer', '-w', '1', '-o', out, '-q']);
    expect(result.code, result.stderr).toBe(0);
    expect(existsSync(path.join(out, 'results.json'))).toBe(true);
    expect(result.packages).toContain('cli-table3'); // its console summary
    // Nor LangChain's runnables and tracing (langsmith), which @langchain/core's messages index
    // re-exports through its message transformers: the bundle reads the index without them.
    expect(result.packages).toContain('@langchain/core');
    for (const name of ['tiktoken', 'hnswlib-node', 'chart.js', '@napi-rs/canvas', 'langsmith'])
      expect(result.packages, name).not.toContain(name);
    // Its charts, drawn in a worker thread.
    expect(result.threadPackages).toContain('chart.js');
    expect(result.threadPackages).toContain('@napi-rs/canvas');
  });

  it('the LangGraph peer, which trims with trimMessages, still runs from the bundle: its chunk has the whole messages index', async () => {
    const out = path.join(await tempDir('membench-start-langgraph-'), 'run');
    const result = await membench(['run', '-c', 'recipes-en', '-s', 'langgraph', '-w', '1', '-o', out, '-q']);
    expect(result.code, result.stderr).toBe(0);
    const cells = JSON.parse(await readFile(path.join(out, 'results.json'), 'utf8')).cells as { status: string }[];
    expect(cells.map((cell) => cell.status)).toEqual(['ok']);
  });
});
