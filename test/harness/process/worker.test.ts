/**
 * A forked worker's states (harness/process/worker.ts), shared by agent processes and the pool's
 * workers: starting until it says it is ready, busy while a request is in flight, closed when its
 * end was asked for, crashed when it died on its own (here, at an armed crash point). The processes
 * are the built ones (test/helpers/built.ts): they start from the agent bundle, as a user's do.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type * as Agents from '../../../harness/process/agent-process.js';
import type { AgentCell } from '../../../harness/process/protocol.js';
import type { Step } from '../../../harness/scenarios/format.js';
import { offlineAgentCell } from '../../helpers/agent-cell.js';
import { builtModule } from '../../helpers/built.js';

const { AgentProcess, isExit } = await builtModule<typeof Agents>('harness/process/agent-process.js');

/** Real processes on a loaded 2-core machine. */
const TIMEOUT = { timeout: 120_000 };

const cellIn = (dir: string): AgentCell => offlineAgentCell(dir, 'buffer', 'worker/buffer');

describe('the states of an agent process', () => {
  it(
    'starting → ready ⇄ busy, then crashed at an armed crash point; closed when killed or closed',
    TIMEOUT,
    async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'membench-worker-'));
      const crashing = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true, offline: true });
      const killed = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true, offline: true });
      const closed = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true, offline: true });
      try {
        expect(crashing.state).toBe('starting');
        await crashing.ready;
        expect(crashing.state).toBe('ready');
        const opening = crashing.open(cellIn(dir), { turn: 0, session: 0 }, () => undefined);
        expect(crashing.state).toBe('busy');
        expect(await opening).toMatchObject({ type: 'opened' });
        expect(crashing.state).toBe('ready');
        crashing.post({ type: 'arm', point: 'before_model_call' });
        const step = { kind: 'user', user: 'hello there' } as Step;
        const reply = await crashing.request({ type: 'step', index: 0, step }, 'step-done');
        expect(isExit(reply) && reply.signal).toBe('SIGKILL');
        expect(crashing.state).toBe('crashed');

        await killed.ready;
        await killed.kill();
        expect(killed.state).toBe('closed');

        await closed.ready;
        await closed.open(cellIn(dir), { turn: 1, session: 0 }, () => undefined);
        expect(await closed.close()).toMatchObject({ type: 'closed' });
        expect(closed.state).toBe('closed');
      } finally {
        await Promise.all([crashing.kill(), killed.kill(), closed.kill()]);
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
