/** A run's provider settings from its options: what every cell builds its model, embedder, tokenizer and metrics from, as plain data. */
import path from 'node:path';
import type { ProviderSettings } from './cell.js';
import { isLiveProvider } from '../models/index.js';
import { PROTOCOL_K } from '../results/protocols.js';
import type { RunOptions } from './options.js';
import { DEFAULT_CACHE_FILE, SETTINGS } from './settings.js';
import { retrievalKs } from './setting-values.js';

/** The settings every cell of the run gets (the pool sends them once to each worker). */
export function providerSettings(options: RunOptions): ProviderSettings {
  const modelProvider = options.model ?? SETTINGS.model.default;
  const embedderProvider = options.embedder ?? SETTINGS.embedder.default;
  const isLive = isLiveProvider(modelProvider) || isLiveProvider(embedderProvider);
  const cacheFile =
    isLive && options.cache !== false
      ? typeof options.cache === 'string'
        ? options.cache
        : DEFAULT_CACHE_FILE
      : undefined;
  return {
    modelProvider,
    embedderProvider,
    live: options.live ?? {},
    ...(cacheFile ? { cacheFile: path.resolve(cacheFile) } : {}),
    ...(options.crashFuzz !== undefined ? { crashFuzz: options.crashFuzz } : {}),
    isolate: options.agentProcesses ?? SETTINGS.isolate.default,
    tokenizerModel: options.tokenizer ?? modelProvider.replace(/^openai:/u, ''),
    keepCellDirs: options.keepCellDirs ?? SETTINGS.keepCellDirs.default,
    retrievalK: retrievalKs(options.retrievalK ?? (options.protocol ? PROTOCOL_K[options.protocol] : undefined)),
    ...(options.protocol ? { protocol: options.protocol } : {}),
    ...(options.keepRankings ? { keepRankings: true } : {}),
    ...(options.protocolFull ? { protocolFull: true } : {}),
    ...(options.profile ? { profile: true } : {}),
  };
}
