/** A run's provider settings from its options: what every cell builds its model, embedder, tokenizer and metrics from, as plain data. */
import path from 'node:path';
import type { ProviderSettings } from './cell.js';
import { MembenchError } from '../core/errors.js';
import { isLiveProvider } from '../models/index.js';
import { DEFAULT_RETRIEVAL_K } from '../results/retrieval.js';
import { PROTOCOL_K } from '../results/protocols.js';
import { DEFAULT_CACHE_FILE, type RunOptions } from './run-options.js';

/** The retrieval k, checked, distinct and ascending (default 1, 5, 10). */
export function retrievalKs(ks: readonly number[] | undefined, given = ks?.join(',')): number[] {
  if (ks === undefined) return [...DEFAULT_RETRIEVAL_K];
  const bad = ks.find((k) => !Number.isInteger(k) || k < 1);
  if (bad !== undefined || ks.length === 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--retrieval-k ${given}: expected whole numbers >= 1 separated by commas, e.g. 1,5,10`,
    );
  return [...new Set(ks)].sort((a, b) => a - b);
}

/** The settings every cell of the run gets (the pool sends them once to each worker). */
export function providerSettings(options: RunOptions): ProviderSettings {
  const modelProvider = options.model ?? 'offline';
  const embedderProvider = options.embedder ?? 'hashed';
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
    isolate: options.isolate ?? false,
    tokenizerModel: options.tokenizer ?? modelProvider.replace(/^openai:/u, ''),
    keepCellDirs: options.keepCellDirs ?? false,
    retrievalK: retrievalKs(options.retrievalK ?? (options.protocol ? PROTOCOL_K[options.protocol] : undefined)),
    ...(options.protocol ? { protocol: options.protocol } : {}),
    ...(options.keepRankings ? { keepRankings: true } : {}),
    ...(options.protocolFull ? { protocolFull: true } : {}),
    ...(options.profile ? { profile: true } : {}),
  };
}
