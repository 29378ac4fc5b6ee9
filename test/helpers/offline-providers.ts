/** Providers for running a cell in the test process (runCell): the offline model and hashed embedder, a fixed clock. */
import { HashedEmbedder, OfflineModel } from '../../harness/models/index.js';
import type { Providers } from '../../harness/run/cell.js';

/** The model classes the providers are made of: the sources' by default, or the built ones (test/helpers/built.ts). */
interface OfflineModels {
  OfflineModel: typeof OfflineModel;
  HashedEmbedder: typeof HashedEmbedder;
}

export function offlineProviders(models: OfflineModels = { OfflineModel, HashedEmbedder }): Providers {
  return {
    model: new models.OfflineModel(),
    modelFor: () => new models.OfflineModel(),
    live: {},
    embedder: new models.HashedEmbedder(),
    modelProvider: 'offline',
    embedderProvider: 'hashed',
    isolate: false,
    tokenizerModel: 'offline',
    clock: new Date(0).toISOString(),
    keepCellDirs: false,
  };
}
