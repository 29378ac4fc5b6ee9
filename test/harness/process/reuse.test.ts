/**
 * A cleanly closed agent process serves the next cell: nothing of the closed cell may be left in
 * it. For every built-in strategy, one process replays a cell, closes it for reuse and replays the
 * same cell on a new dir: the replies are the same as the first time (no module-level state of the
 * strategy carried over), and its handles and environment are what they were before the first
 * cell. Real processes, real strategies, nothing mocked. The processes are the built ones
 * (test/helpers/built.ts): they start from the agent bundle, as a user's do.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type * as Agents from '../../../harness/process/agent-process.js';
import type { AgentCell, FromAgent } from '../../../harness/process/protocol.js';
import { offlineAgentCell } from '../../helpers/agent-cell.js';
import type * as Spares from '../../../harness/process/spares.js';
import type * as Builtins from '../../../harness/scenarios/builtins.js';
import type * as Strategies from '../../../strategies/index.js';
import { builtModule } from '../../helpers/built.js';

const { AgentProcess, isExit } = await builtModule<typeof Agents>('harness/process/agent-process.js');
const { killSpares, returnSpare, spareKind, takeSpare } = await builtModule<typeof Spares>('harness/process/spares.js');
const { loadScenarios } = await builtModule<typeof Builtins>('harness/scenarios/builtins.js');
const { builtinStrategies } = await builtModule<typeof Strategies>('strategies/index.js');

/** The cell dirs made, removed after the tests. */
const made: string[] = [];
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

async function cellDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Room for real processes on a loaded 2-core machine. */
const TIMEOUT = { timeout: 240_000 };

/** A reply without what depends on the clock (load and save times, model latencies, memory use). */
function timeless(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(timeless);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !/Ms$|^modelLatencies$|^maxRssKb$/u.test(key))
        .map(([key, item]) => [key, timeless(item)]),
    );
  return value;
}

async function cellIn(strategy: string, dir: string): Promise<AgentCell> {
  return offlineAgentCell(dir, strategy, `reuse/${strategy}`);
}

async function inspect(agent: Agents.AgentProcess): Promise<Extract<FromAgent, { type: 'inspected' }>> {
  const reply = await agent.request({ type: 'inspect' }, 'inspected');
  if (isExit(reply) || reply.type !== 'inspected') throw new Error(`inspect failed: ${JSON.stringify(reply)}`);
  return reply;
}

describe('an agent process reused after a clean close', () => {
  it(
    'replays a cell of every built-in strategy as a fresh process does, and holds no handle or variable of the closed cell',
    TIMEOUT,
    async () => {
      const { scenarios } = await loadScenarios(['preference-corrections']);
      const steps = scenarios[0]!.steps.filter(
        (step) => step.kind === 'user' || step.kind === 'remember' || step.kind === 'forget' || step.kind === 'probe',
      );
      expect(steps.length).toBeGreaterThan(5);
      const agent = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true, offline: true });
      try {
        await agent.settled();
        const before = await inspect(agent);
        for (const definition of builtinStrategies) {
          const replay = async (): Promise<unknown[]> => {
            const dir = await cellDir(`membench-reuse-${definition.name}-`);
            const opened = await agent.open(
              await cellIn(definition.name, dir),
              { turn: 0, session: 0 },
              () => undefined,
            );
            expect(opened, definition.name).toMatchObject({ type: 'opened' });
            const replies: unknown[] = [];
            for (const [index, step] of steps.entries())
              replies.push(timeless(await agent.request({ type: 'step', index, step }, 'step-done')));
            const closed = await agent.close({ reuse: true });
            expect(closed, definition.name).toMatchObject({ type: 'closed' });
            expect(agent.reusable).toBe(true);
            return replies;
          };
          const first = await replay();
          const again = await replay();
          expect(again, definition.name).toEqual(first);
          const after = await inspect(agent);
          // Every store closed, no timer left, no variable set: the process is as it was before any cell.
          expect(after.resources, definition.name).toEqual(before.resources);
          expect(after.openFiles, definition.name).toBe(before.openFiles);
          expect(after.env, definition.name).toEqual(before.env);
        }
        expect(agent.opens).toBe(builtinStrategies.length * 2);
      } finally {
        await agent.kill();
      }
    },
  );

  it(
    "goes back to the spares and serves the next cell; a killed process or a user strategy's never does",
    TIMEOUT,
    async () => {
      const kind = spareKind({ tokenizerModel: 'offline', strategy: 'buffer', model: 'offline', embedder: 'hashed' });
      try {
        const first = takeSpare(kind);
        await first.settled();
        await first.open(
          await cellIn('buffer', await cellDir('membench-reuse-')),
          { turn: 0, session: 0 },
          () => undefined,
        );
        await first.close({ reuse: true });
        await returnSpare(kind, first);
        expect(takeSpare(kind)).toBe(first);
        await first.kill();
        await returnSpare(kind, first);
        expect(takeSpare(kind)).not.toBe(first);
        const user = takeSpare(kind);
        await user.settled();
        await user.open(
          await cellIn('buffer', await cellDir('membench-reuse-')),
          { turn: 0, session: 0 },
          () => undefined,
        );
        await user.close({ reuse: true });
        await returnSpare({ ...kind, builtin: false }, user);
        expect(user.alive).toBe(false);
      } finally {
        await killSpares();
      }
    },
  );
});
