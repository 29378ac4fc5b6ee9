/** Providers for running a cell in the test process (runCell): the offline model and hashed embedder, a fixed clock. */
import { HashedEmbedder, OfflineModel } from '../../harness/models/index.js';
import type { Providers } from '../../harness/run/cell.js';

export function offlineProviders(): Providers {
  return {
    model: new OfflineModel(),
    modelFor: () => new OfflineModel(),
    live: {},
    embedder: new HashedEmbedder(),
    modelProvider: 'offline',
    embedderProvider: 'hashed',
    isolate: false,
    tokenizerModel: 'offline',
    clock: new Date(0).toISOString(),
    keepCellDirs: false,
  };
}
