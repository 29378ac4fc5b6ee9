/**
 * A cell's peak resident set is read with a system call: at the first step, then at most every
 * RSS_INTERVAL_MS (20 ms), and once at the end of a run, never after every probe.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentSession } from '../../../harness/agent/loop.js';
import { OfflineModel } from '../../../harness/models/offline.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import type { Step } from '../../../harness/scenarios/format.js';
import type { MemoryStrategy } from '../../../strategies/types.js';

const nothing = (): MemoryStrategy => ({
  capabilities: { persistent: false, explicitMemory: false, backgroundWork: false },
  open: async () => undefined,
  close: async () => undefined,
  save: async () => undefined,
  load: async () => ({ messages: [] }),
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('AgentSession peak RSS', () => {
  it('reads the resident set a bounded number of times however many probes the cell asks', async () => {
    const session = new AgentSession({
      createStrategy: nothing,
      model: new OfflineModel(),
      tokens: new TokenCounter('offline'),
    });
    await session.start();
    const steps: Step[] = Array.from(
      { length: 300 },
      (_, index) =>
        ({
          kind: 'probe',
          probe: `what was answer ${index}?`,
          expect: [`answer ${index}`],
          forbid: [],
          category: 'extraction',
          evidence: [],
        }) as Step,
    );
    const rss = vi.spyOn(process.memoryUsage, 'rss');
    const started = performance.now();
    await session.run(steps);
    const elapsedMs = performance.now() - started;
    // The first step, one reading per 20 ms at most after it, and the end of the run.
    expect(rss.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(rss.mock.calls.length).toBeLessThanOrEqual(2 + Math.floor(elapsedMs / 20));
    expect(session.peakRssBytes).toBeGreaterThan(0);
  });
});
