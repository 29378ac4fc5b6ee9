/**
 * glibc's allocator settings every forked child gets (harness/process/worker.ts): added to the
 * child's GLIBC_TUNABLES, never over a name the user set, and really in the environment of a process
 * forked through ForkedWorker.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ForkedWorker, MALLOC_TUNABLES, withMallocTunables } from '../../../harness/process/worker.js';

const linux = process.platform === 'linux';
const ours = Object.entries(MALLOC_TUNABLES).map(([name, value]) => `${name}=${value}`);

describe.runIf(linux)('malloc tunables of forked children', () => {
  it('adds every tunable to an environment without GLIBC_TUNABLES, and leaves the rest of it alone', () => {
    const env = withMallocTunables({ PATH: '/bin' });
    expect(env.PATH).toBe('/bin');
    expect(env.GLIBC_TUNABLES!.split(':').sort()).toEqual([...ours].sort());
    expect(ours).toContain('glibc.malloc.hugetlb=1');
  });

  it("keeps the user's own tunables, and their value of a name it would set", () => {
    const env = withMallocTunables({ GLIBC_TUNABLES: 'glibc.malloc.hugetlb=0:glibc.pthread.rseq=0' });
    const entries = env.GLIBC_TUNABLES!.split(':');
    expect(entries).toContain('glibc.malloc.hugetlb=0');
    expect(entries).not.toContain('glibc.malloc.hugetlb=1');
    expect(entries).toContain('glibc.pthread.rseq=0');
    expect(entries.filter((entry) => entry.startsWith('glibc.malloc.hugetlb='))).toHaveLength(1);
    expect(entries).toContain(`glibc.malloc.mmap_threshold=${MALLOC_TUNABLES['glibc.malloc.mmap_threshold']}`);
  });

  it('returns the same environment when the user set every name', () => {
    const env = { GLIBC_TUNABLES: ours.map((entry) => entry.replace(/=.*/, '=7')).join(':') };
    expect(withMallocTunables(env)).toBe(env);
  });

  it('reaches a process forked through ForkedWorker', { timeout: 60_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-tunables-'));
    const file = path.join(dir, 'child.cjs');
    await writeFile(file, 'process.send({ tunables: process.env.GLIBC_TUNABLES ?? null }, () => process.exit(0));\n');
    try {
      const worker = new ForkedWorker<never, { tunables: string | null }>({
        entry: { file, execArgv: [] },
        env: { PATH: process.env.PATH },
        isReady: () => true,
      });
      const message = await new Promise<{ tunables: string | null }>((resolve) => worker.onMessage(resolve));
      await worker.exited;
      expect(message.tunables?.split(':').sort()).toEqual([...ours].sort());
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
