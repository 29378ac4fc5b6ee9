/**
 * The harness side of one agent process: preloads asked of it go one at a time, and `settled` waits
 * for all of them; an offline process starts without TLS-only settings, a live one keeps them.
 * The processes are the built ones (test/helpers/built.ts): they start from the agent bundle, as a user's do.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import type * as Agents from '../../../harness/process/agent-process.js';
import type * as Spares from '../../../harness/process/spares.js';
import { builtModule } from '../../helpers/built.js';

const { AgentProcess } = await builtModule<typeof Agents>('harness/process/agent-process.js');
const { spareKind } = await builtModule<typeof Spares>('harness/process/spares.js');

describe('AgentProcess.prepare', () => {
  it('settles only when every preload sent is done, even when the last one asked for was made before', async () => {
    const agent = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true });
    try {
      await agent.prepare('buffer', { cjk: false });
      let jiebaLoaded = false;
      void agent.prepare('bm25', { cjk: true }).then(() => (jiebaLoaded = true)); // loads a dictionary: takes a while
      const again = agent.prepare('buffer', { cjk: false }); // made already: nothing is sent
      await again;
      await agent.settled();
      expect(jiebaLoaded).toBe(true); // a cell's next request cannot cross the dictionary's reply
      expect(agent.prepared).toBe(true);
    } finally {
      await agent.kill();
    }
  });
});

describe('AgentProcess.prepare with handed jieba cuts', () => {
  it("sends a cell's cuts once, and another cell's cuts again (a spare or reused process prepared for another cell)", async () => {
    const agent = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true });
    const request = vi.spyOn(agent, 'request');
    const prepares = (): number => request.mock.calls.filter(([message]) => message.type === 'prepare').length;
    try {
      const cellA = [['我家只有一口铸铁锅', ['我家', '只有', '一口', '铸铁', '铸铁锅']]] as const;
      const cellB = [['奶奶住在杭州', ['奶奶', '住', '在', '杭州']]] as const;
      await agent.prepare('bm25', { cjk: true, jiebaCuts: cellA });
      await agent.prepare('bm25', { cjk: true, jiebaCuts: cellA });
      await agent.prepare('bm25', { cjk: false });
      expect(prepares()).toBe(1);
      await agent.prepare('bm25', { cjk: true, jiebaCuts: cellB });
      expect(prepares()).toBe(2);
      await agent.settled();
    } finally {
      request.mockRestore();
      await agent.kill();
    }
  });
});

describe('an agent process started from its snapshot', () => {
  it("finds the default encoding's ranks in the snapshot and reads only another encoding's from disk", async () => {
    const byDefault = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true, offline: true });
    const other = AgentProcess.spawn({ tokenizerModel: 'gpt-4o', builtinOnly: true, offline: true }); // o200k_base
    try {
      const [first, second] = await Promise.all([byDefault.ready, other.ready]);
      expect(first).toMatchObject({ from: 'snapshot', ranksRead: 0 });
      expect(second).toMatchObject({ from: 'snapshot', ranksRead: 1 });
    } finally {
      await Promise.all([byDefault.kill(), other.kill()]);
    }
  });
});

describe('an agent process environment', () => {
  /** The environment the process was started with, as the kernel holds it (Linux). */
  const environOf = (pid: number): string[] => readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');

  it.skipIf(!existsSync('/proc/self/environ'))(
    'an offline process starts without NODE_EXTRA_CA_CERTS (Node loads the bundle at every start); one that may call a live model keeps it',
    async () => {
      const saved = process.env.NODE_EXTRA_CA_CERTS;
      const bundle = saved ?? '/membench-test/no-such-bundle.pem'; // a missing bundle: a live process warns once
      process.env.NODE_EXTRA_CA_CERTS = bundle;
      const offline = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true, offline: true });
      const live = AgentProcess.spawn({ tokenizerModel: 'offline', builtinOnly: true });
      try {
        await Promise.all([offline.ready, live.ready]);
        expect(environOf(offline.pid!).some((entry) => entry.startsWith('NODE_EXTRA_CA_CERTS='))).toBe(false);
        expect(environOf(live.pid!)).toContain(`NODE_EXTRA_CA_CERTS=${bundle}`);
        expect(environOf(offline.pid!)).toContain(`PATH=${process.env.PATH}`); // the rest of the environment is kept
      } finally {
        if (saved === undefined) delete process.env.NODE_EXTRA_CA_CERTS;
        else process.env.NODE_EXTRA_CA_CERTS = saved;
        await Promise.all([offline.kill(), live.kill()]);
      }
    },
  );

  it('a cell is offline only with a built-in strategy, the offline model and a hashed embedder', () => {
    const cell = { tokenizerModel: 'offline', strategy: 'buffer', model: 'offline', embedder: 'hashed' };
    expect(spareKind(cell).offline).toBe(true);
    expect(spareKind({ ...cell, embedder: 'hashed:64' }).offline).toBe(true);
    expect(spareKind({ ...cell, model: 'openai:gpt-4o-mini' }).offline).toBe(false);
    expect(spareKind({ ...cell, embedder: 'openai:text-embedding-3-small' }).offline).toBe(false);
    expect(spareKind({ ...cell, strategy: './my-strategy.ts' }).offline).toBe(false); // a user's code may open connections itself
  });
});
