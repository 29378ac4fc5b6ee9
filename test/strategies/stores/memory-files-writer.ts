/**
 * Child process for the concurrent-writer test of the memory file store: opens a `file-index`
 * strategy on a shared dir, waits for "go", then remembers its own memories and bumps one shared
 * memory each time, saying so after each step. Run with `node --import tsx`.
 */
import { HashedEmbedder, MeteredModel, OfflineModel } from '../../../harness/models/index.js';
import { TokenCounter } from '../../../harness/core/tokens.js';
import { fileIndex, type FileIndexStrategy } from '../../../strategies/file-index.js';

const [dir, writer, count] = process.argv.slice(2);
const tokens = new TokenCounter('gpt-4o');
const strategy = fileIndex.create(
  {
    dir: dir!,
    tokens,
    model: new MeteredModel(new OfflineModel(), tokens),
    embedder: new HashedEmbedder(8),
    durability: 'sync',
    seed: 1,
    now: () => new Date('2026-01-01T00:00:00Z'),
  },
  fileIndex.options.parse({}),
) as FileIndexStrategy;

await strategy.open();
process.send!({ kind: 'ready' });
process.once('message', async () => {
  for (let step = 0; step < Number(count); step++) {
    await strategy.remember({
      name: `w${writer}-m${step}`,
      content: `Writer ${writer} wrote memory ${step}. ${'padding '.repeat(step)}`,
      type: 'project',
    });
    await strategy.remember({
      name: 'shared-counter',
      content: `Last bumped by writer ${writer} at step ${step}.`,
      type: 'project',
    });
    process.send!({ kind: 'wrote', step });
  }
  await strategy.close();
  process.send!({ kind: 'done' }, () => process.exit(0));
});
