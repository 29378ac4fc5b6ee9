/**
 * Child process for the concurrent-writer tests of the memory file store: opens a `MemoryFileStore`
 * on a shared dir (waiting up to the given lock timeout for another writer), waits for "go", then
 * writes its own memories and bumps one shared memory each time, saying so after each step.
 * Run with `node memory-files-writer.mjs DIR WRITER COUNT LOCK_TIMEOUT_MS`: it runs the built store
 * (a third of the start-up CPU of the sources through tsx), so memory-files.test.ts is in
 * vitest.config.ts's DIST_TESTS, whose setup rebuilds a dist/ older than the sources.
 */
import path from 'node:path';
import { MemoryFileStore } from '../../../dist/strategies/stores/memory-files.js';

const [dir, writer, count, lockTimeoutMs] = process.argv.slice(2);
const store = new MemoryFileStore({
  dirs: { global: path.join(dir, 'global'), project: path.join(dir, 'project') },
  maxMemoryBytes: 4096,
  now: () => new Date('2026-01-01T00:00:00Z'),
  lockTimeoutMs: Number(lockTimeoutMs),
});

await store.open();
process.send({ kind: 'ready' });
process.once('message', async () => {
  for (let step = 0; step < Number(count); step++) {
    const memory = { type: 'project', scope: 'project', priority: 'normal' };
    await store.write({
      ...memory,
      name: `w${writer}-m${step}`,
      content: `Writer ${writer} wrote memory ${step}. ${'padding '.repeat(step % 50)}`,
    });
    await store.write({
      ...memory,
      name: 'shared-counter',
      content: `Last bumped by writer ${writer} at step ${step}.`,
    });
    process.send({ kind: 'wrote', step });
  }
  store.close();
  process.send({ kind: 'done' }, () => process.exit(0));
});
