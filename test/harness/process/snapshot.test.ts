/**
 * The agent's startup snapshot (built by `npm run build`, which `npm test` runs first): agent
 * processes of built-in strategies start from it, with every module already evaluated, run their
 * cells as the bundle does, and fall back to the bundle when the snapshot is not for this Node or
 * this bundle file.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { membench } from '../../cli/helpers.js';
import { allOk } from '../../helpers/cells.js';
import { oneChineseMemory } from '../../helpers/crash-scenarios.js';
import { SNAPSHOT_V8_FLAGS } from '../../../harness/process/protocol.js';

const DIST = fileURLToPath(new URL('../../../dist/harness/process/', import.meta.url));
type ProcessModule = typeof import('../../../harness/process/agent-process.js');
type SparesModule = typeof import('../../../harness/process/spares.js');
type RunnerModule = typeof import('../../../harness/run/runner.js');
// The built modules: only they find the bundle and its snapshot beside them.
const built = async <T>(file: string): Promise<T> => (await import(path.join(DIST, '..', '..', file))) as T;

describe('the agent startup snapshot', () => {
  afterAll(async () => (await built<SparesModule>('harness/process/spares.js')).killSpares());

  it('is built beside the bundle for this Node, and agent processes of a crash cell start from it and run the cell', async () => {
    const { agentSnapshot, agentProcessStats } = await built<ProcessModule>('harness/process/agent-process.js');
    expect(agentSnapshot()).toBe(path.join(DIST, 'agent-entry.snapshot.blob'));
    const { runBenchmark } = await built<RunnerModule>('harness/run/runner.js');
    const before = { ...agentProcessStats.booted };
    // Two kills and a Chinese memory (remember-then-crash's first two kills): the crash path, and bm25's Chinese terms in the restarted processes (cut from the jieba cuts the cell hands them; agent-process.test.ts loads jieba itself in a deserialized process).
    const result = await runBenchmark({
      scenarios: [await oneChineseMemory()],
      strategies: ['buffer', 'bm25'],
      priceDurability: [],
      profile: true,
    });
    for (const cell of allOk(result).cells) {
      expect(cell.status).toBe('ok');
      expect(cell.recall.contextRecall.hits).toBe(1); // the Chinese memory: SQLite and the handed jieba cuts in a deserialized process
      expect(cell.durabilityOutcome!.crashes.filter((crash) => crash.reached).length).toBeGreaterThan(0);
    }
    // Every process a cell ran in booted from the snapshot: one after each crash, and a first one (a
    // later cell may start in the process the one before closed cleanly; spares still booting when
    // the run ends may or may not have counted yet).
    const restarts = result.cells.flatMap((cell) => cell.durabilityOutcome!.crashes.filter((crash) => crash.reached));
    expect(agentProcessStats.booted.snapshot - before.snapshot).toBeGreaterThanOrEqual(restarts.length + 1);
    expect(agentProcessStats.booted.bundle - before.bundle).toBe(0);
    // The cells' profile says so too (what `membench bench` reads to warn of a slower start).
    const starts = (key: 'snapshotStarts' | 'otherStarts'): number =>
      result.cells.reduce((sum, cell) => sum + cell.phases![key], 0);
    expect(starts('snapshotStarts')).toBeGreaterThanOrEqual(restarts.length + 1);
    expect(starts('otherStarts')).toBe(0);
  });

  it('a run under V8 flags in NODE_OPTIONS (which V8 refuses a snapshot under) starts its agent processes from the bundle instead', async () => {
    const out = mkdtempSync(path.join(os.tmpdir(), 'membench-snapshot-run-'));
    try {
      const run = await membench(
        [
          'run',
          '-c',
          await oneChineseMemory(),
          '-s',
          'buffer',
          '--price-durability',
          'none',
          '-o',
          out,
          '--overwrite',
          '--profile',
          '-q',
        ],
        { env: { NODE_OPTIONS: '--max-old-space-size=4096' } },
      );
      const messages = run.stderr.split('\n').filter((line) => !line.startsWith('|')); // less --profile's table
      expect(messages.join('\n')).not.toContain('startup snapshot');
      expect(run.code).toBe(0);
      const results = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as {
        cells: {
          status: string;
          recall: { contextRecall: { hits: number } };
          phases: { snapshotStarts: number; otherStarts: number };
        }[];
      };
      expect(results.cells.map((cell) => [cell.status, cell.recall.contextRecall.hits])).toEqual([['ok', 1]]);
      // Its profile records the slower starts (one per crash and the first), none from the snapshot.
      const [cell] = results.cells;
      expect(cell!.phases.snapshotStarts).toBe(0);
      expect(cell!.phases.otherStarts).toBeGreaterThanOrEqual(2);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("is built from an ASCII-only bundle holding zod's English locale alone: less heap for every process to deserialize", () => {
    const source = readFileSync(path.join(DIST, 'agent-entry.bundle.cjs'));
    // One byte past ASCII and V8 keeps the whole source, which the snapshot holds, two bytes a character.
    expect(source.findIndex((byte) => byte > 0x7f)).toBe(-1);
    const text = source.toString('latin1');
    expect(text).toContain('// node_modules/zod/v4/locales/en.js');
    expect(text.match(/\/\/ node_modules\/zod\/v4\/locales\/[a-z-]+\.js/gu)).toEqual([
      '// node_modules/zod/v4/locales/index.js',
      '// node_modules/zod/v4/locales/en.js',
    ]);
  });

  it('is built from a bundle without the results and scenario schemas: an agent validates neither, and every process would deserialize their ~380 zod schemas', () => {
    const text = readFileSync(path.join(DIST, 'agent-entry.bundle.cjs'), 'latin1');
    expect(text).toContain('// dist/harness/results/protocols.js');
    expect(text).not.toContain('// dist/harness/results/schema.js');
    expect(text).not.toContain('// dist/harness/scenarios/format.js');
  });

  it('is tried once before it is used: one that V8 refuses (here a damaged copy) is not used', async () => {
    const { snapshotLoads } = await built<ProcessModule>('harness/process/agent-process.js');
    const bundle = path.join(DIST, 'agent-entry.bundle.cjs');
    const blob = path.join(DIST, 'agent-entry.snapshot.blob');
    expect(snapshotLoads(blob, bundle)).toBe(true);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'membench-snapshot-bad-'));
    try {
      const damaged = path.join(dir, 'damaged.blob');
      writeFileSync(damaged, readFileSync(blob).subarray(0, 4096));
      expect(snapshotLoads(damaged, bundle)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is tried once per Node binary, blob and V8 flags: a passed check is recorded beside the blob', async () => {
    const { snapshotLoadsOnce, agentProcessStats } = await built<ProcessModule>('harness/process/agent-process.js');
    const bundle = path.join(DIST, 'agent-entry.bundle.cjs');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'membench-snapshot-once-'));
    try {
      const blob = path.join(dir, 'agent-entry.snapshot.blob');
      copyFileSync(path.join(DIST, 'agent-entry.snapshot.blob'), blob);
      const checks = (): number => agentProcessStats.snapshotChecks;
      const start = checks();
      expect(snapshotLoadsOnce(blob, bundle, '')).toBe(true);
      expect(checks() - start).toBe(1);
      // Another process (a pool worker) finds the record: no check.
      expect(snapshotLoadsOnce(blob, bundle, '')).toBe(true);
      expect(checks() - start).toBe(1);
      // Other V8 flags, or a blob written again since: checked again.
      snapshotLoadsOnce(blob, bundle, '--stack-size=2000');
      expect(checks() - start).toBe(2);
      utimesSync(blob, new Date(), new Date(Date.now() + 5_000));
      expect(snapshotLoadsOnce(blob, bundle, '')).toBe(true);
      expect(checks() - start).toBe(3);
      // A blob V8 refuses is never recorded as passed: every process tries it (and falls back).
      writeFileSync(blob, readFileSync(path.join(DIST, 'agent-entry.snapshot.blob')).subarray(0, 4096));
      expect(snapshotLoadsOnce(blob, bundle, '')).toBe(false);
      expect(snapshotLoadsOnce(blob, bundle, '')).toBe(false);
      expect(checks() - start).toBe(5);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is used only for the Node and the bundle file it was built with', async () => {
    const { snapshotIn, snapshotStatus } = await built<ProcessModule>('harness/process/agent-process.js');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'membench-snapshot-'));
    try {
      for (const file of ['agent-entry.bundle.cjs', 'agent-entry.snapshot.blob'])
        copyFileSync(path.join(DIST, file), path.join(dir, file));
      const bundle = path.join(dir, 'agent-entry.bundle.cjs');
      const record = (changes: object = {}): void => {
        const { mtimeMs, size } = statSync(bundle);
        writeFileSync(
          path.join(dir, 'agent-entry.snapshot.json'),
          JSON.stringify({
            node: process.version,
            arch: process.arch,
            nodeOptions: '',
            bundle,
            bundleBytes: size,
            bundleMtimeMs: mtimeMs,
            v8Flags: SNAPSHOT_V8_FLAGS,
            ...changes,
          }),
        );
      };
      record();
      expect(snapshotIn(dir, '')).toBe(path.join(dir, 'agent-entry.snapshot.blob'));
      expect(snapshotStatus(dir, '').reason).toBeNull();
      // V8 refuses a snapshot under other V8 flags: a user's NODE_OPTIONS falls back to the bundle.
      expect(snapshotIn(dir, '--max-old-space-size=4096')).toBeNull();
      // Each refusal says why (`membench bench` prints it rather than a silently slower figure).
      expect(snapshotStatus(dir, '--max-old-space-size=4096').reason).toContain('NODE_OPTIONS');
      // Built under other V8 flags (or before they were recorded): V8 would refuse it under the agents' flags.
      record({ v8Flags: undefined });
      expect(snapshotIn(dir, '')).toBeNull();
      expect(snapshotStatus(dir, '').reason).toContain('V8 flags ""');
      record({ v8Flags: [] });
      expect(snapshotStatus(dir, '').reason).toContain(`agent processes start under "${SNAPSHOT_V8_FLAGS.join(' ')}"`);
      record({ node: 'v18.0.0' });
      expect(snapshotIn(dir, '')).toBeNull();
      expect(snapshotStatus(dir, '').reason).toContain('Node v18.0.0');
      record({ bundle: path.join(DIST, 'agent-entry.bundle.cjs') }); // built for another copy of the bundle
      expect(snapshotIn(dir, '')).toBeNull();
      expect(snapshotStatus(dir, '').reason).toContain('copied from another checkout');
      record({ bundleBytes: 1 }); // the bundle was rebuilt since
      expect(snapshotIn(dir, '')).toBeNull();
      expect(snapshotStatus(dir, '').reason).toContain('changed since the snapshot was built');
      record();
      rmSync(path.join(dir, 'agent-entry.snapshot.blob'));
      expect(snapshotIn(dir, '')).toBeNull();
      expect(snapshotStatus(dir, '').reason).toContain('is missing');
      expect(snapshotIn(path.join(dir, 'nowhere'))).toBeNull();
      expect(snapshotStatus(path.join(dir, 'nowhere')).reason).toContain('no startup snapshot was built');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
