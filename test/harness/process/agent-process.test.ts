/** The harness side of one agent process: preloads asked of it go one at a time, and `settled` waits for all of them. */
import { describe, expect, it } from 'vitest';
import { AgentProcess } from '../../../harness/process/agent-process.js';

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
