/** `buffer`: every message, always (LangChain's BufferMemory), persisted as a SQLite session history. */
import { z } from 'zod';
import { HistoryMemory } from './shared/history-memory.js';
import { defineStrategy } from './types.js';

export const bufferOptions = z.object({}).strict();

export const buffer = defineStrategy({
  name: 'buffer',
  kind: 'full-history',
  description: 'every message, always (LangChain BufferMemory)',
  options: bufferOptions,
  defaultDurability: 'sync',
  keepsVerbatim: true,
  create: (context) => new HistoryMemory(context),
});
