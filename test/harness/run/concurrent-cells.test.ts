/**
 * Concurrent sessions of one cell, each in an agent process: two runs with one seed agree apart from
 * the interleaving figures, which are flagged. The run is the built one (test/helpers/built.ts): its
 * agent processes start from the bundle, as a user's do.
 */
import { describe, expect, it } from 'vitest';
import type * as Runner from '../../../harness/run/runner.js';
import { builtModule } from '../../helpers/built.js';
import { allOk } from '../../helpers/cells.js';
import { sameSeedView } from '../../helpers/same-seed.js';

const { runBenchmark } = await builtModule<typeof Runner>('harness/run/runner.js');

describe('runBenchmark with concurrent sessions', () => {
  it('reproduces concurrent cells apart from the flagged interleaving figures, records in canonical order', async () => {
    // summary: a lossy strategy whose context depends on the order the writes were folded in.
    const options = { scenarios: ['concurrent-edits'], strategies: ['summary'], seed: 7 };
    const [a, b] = [await runBenchmark(options), await runBenchmark(options)];
    expect(a.cells.every((cell) => cell.interleaved === true)).toBe(true);
    expect(sameSeedView(b)).toEqual(sameSeedView(a));
    // Concurrent sessions' turns come out grouped by session, whatever order they finished in.
    for (const cell of allOk(a).cells) {
      const concurrent = cell.turns.filter((turn) => turn.step >= 10_000).map((turn) => turn.step);
      expect(concurrent).toEqual([...concurrent].sort((x, y) => x - y));
    }
  }, 180_000);
});
