/**
 * An agent process loads only what its cell uses. The processes start from the sources (through
 * tsx), whose modules load as tsc compiles them, one by one: what a user's strategy's processes load
 * too (the bundle of the built-in ones is one file). Counting spares: warm-spares.test.ts.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killSpares, spareKind, spareReady, takeSpare } from '../../../harness/process/spares.js';
import { runBenchmark } from '../../../harness/run/runner.js';
import { ok } from '../../helpers/cells.js';
import { oneChineseMemory, smallCrashScenario } from '../../helpers/crash-scenarios.js';

afterAll(killSpares);

/** Room for agent processes started from the sources (about 1.5 s of CPU each) on a loaded 2-core machine. */
const PROCESS_TIMEOUT = { timeout: 240_000 };

describe('modules an agent process loads', PROCESS_TIMEOUT, () => {
  let log: string;
  const saved = { options: process.env.NODE_OPTIONS, log: process.env.MEMBENCH_MODULE_LOG };
  beforeEach(async () => {
    await killSpares(); // spares forked before the log was switched on would not report
    log = path.join(await mkdtemp(path.join(os.tmpdir(), 'membench-modules-')), 'modules.log');
    process.env.MEMBENCH_MODULE_LOG = log;
    process.env.NODE_OPTIONS =
      `${saved.options ?? ''} --import=${fileURLToPath(new URL('../../helpers/module-log.mjs', import.meta.url))}`.trim();
  });
  afterEach(async () => {
    await killSpares();
    for (const [key, value] of [
      ['NODE_OPTIONS', saved.options],
      ['MEMBENCH_MODULE_LOG', saved.log],
    ] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    await rm(path.dirname(log), { recursive: true, force: true });
  });

  /** The packages (node_modules names) the agent processes of one cell per strategy loaded, all together. */
  async function packagesLoaded(strategies: readonly string[]): Promise<Set<string>> {
    const result = await runBenchmark({ scenarios: [await smallCrashScenario()], strategies });
    for (const cell of result.cells) expect(cell.status, cell.id).toBe('ok');
    const lines = (await readFile(log, 'utf8'))
      .split('\n')
      .filter((line) => line && !line.startsWith(`${process.pid} `));
    const names = lines.flatMap((line) => {
      const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//u.exec(line);
      return match ? [match[1]!] : [];
    });
    return new Set(names);
  }

  // One run for both: neither may load any of these, so what their processes loaded together must hold none.
  it("a buffer cell and an English bm25 cell: no HNSW addon, no YAML from node_modules (it is in the startup snapshot), no OpenAI SDK, no LangChain classic, no charts, no tiktoken WebAssembly (bpe.ts reads its ranks' binary copy), and no jieba in any of their processes, spares readied for their crashes included (its dictionary is for Han text)", async () => {
    const loaded = await packagesLoaded(['buffer', 'bm25']);
    expect(loaded).toContain('better-sqlite3');
    for (const unused of [
      'tiktoken',
      'hnswlib-node',
      'yaml', // bundled into the startup snapshot: never read from node_modules
      'openai',
      '@langchain/classic',
      'chart.js',
      '@napi-rs/canvas',
      'cli-table3',
      'yargs',
      '@node-rs/jieba',
    ])
      expect(loaded).not.toContain(unused);
  });

  it('a spare readied for a bm25 crash in Chinese text has loaded jieba before the crash is armed: the recovery never waits for a preload', async () => {
    const kind = spareKind({ tokenizerModel: 'offline', strategy: 'bm25', model: 'offline', embedder: 'hashed' });
    await spareReady(kind, { strategy: 'bm25', hint: { cjk: true } });
    const spare = takeSpare(kind); // the one spareReady waited for
    try {
      const lines = (await readFile(log, 'utf8')).split('\n').filter((line) => line.startsWith(`${spare.pid} `));
      expect(lines.some((line) => line.includes('@node-rs/jieba'))).toBe(true);
    } finally {
      await spare.kill();
    }
  });

  it("in a bm25 crash cell with Chinese text, no agent process loads jieba: the cell hands them jieba's cuts of the scenario's text (strategies' preloadShared)", async () => {
    const result = await runBenchmark({
      scenarios: [await oneChineseMemory()],
      strategies: ['bm25'],
      priceDurability: [],
      profile: true,
    });
    const cell = ok(result.cells[0]);
    expect(cell.status).toBe('ok');
    expect(cell!.recall.contextRecall.hits).toBe(1); // 我家有什么锅？ finds 铸铁锅, as jieba cuts them
    const lines = (await readFile(log, 'utf8'))
      .split('\n')
      .filter((line) => line && !line.startsWith(`${process.pid} `));
    const pids = new Set(lines.map((line) => line.split(' ')[0]));
    const withJieba = lines.filter((line) => line.includes('@node-rs/jieba'));
    expect(pids.size).toBeGreaterThanOrEqual(cell!.phases!.processes);
    // The Chinese memory is written, re-run after the kill and asked about, each in its own process.
    expect(cell!.phases!.processes).toBeGreaterThanOrEqual(3);
    expect(withJieba).toEqual([]);
  });

  it('a vector cell loads the HNSW addon: what a cell uses is loaded (and seen by the log)', async () => {
    expect(await packagesLoaded(['vector'])).toContain('hnswlib-node');
  });
});
