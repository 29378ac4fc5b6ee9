/**
 * What produced an exchange store's vectors and terms, recorded in its `meta` table and checked on
 * every open: rows embedded by another model, of another dimension, or segmented by another
 * tokenizer would not be comparable, so mixing them is an error that names both.
 */
import { MembenchError } from '../../harness/core/errors.js';
import type { SqliteDatabase } from '../../harness/core/sqlite.js';

/**
 * What produced the stored vectors and terms: a store reopened with another embedder or
 * tokenizer would mix incomparable rows, so open() refuses it, naming both.
 */
export interface StoreIdentity {
  embedder?: { id: string; dimensions: number };
  tokenizer?: string;
  /** What of an exchange its vector and terms were made from (the `index` knob: `exchange` or `user`). */
  index?: string;
}

/** The error for vectors of two sizes in one store: it names both. */
function dimensionMismatch(file: string, embedder: string, stored: number, now: number): MembenchError {
  return new MembenchError(
    'INVALID_ARGUMENT',
    `${file}: its exchanges hold ${stored}-dimension vectors, but the embedder ${embedder} gives ${now}-dimension vectors; use an embedder of ${stored} dimensions or a fresh dir`,
  );
}

/** Records the identity on a fresh store, refuses another one (inside the open transaction); returns the recorded vector dimension, if any. */
export function checkIdentity(db: SqliteDatabase, file: string, identity: StoreIdentity): number | undefined {
  const settings: [key: string, value: string, verb: string][] = [];
  if (identity.embedder) settings.push(['embedder', identity.embedder.id, 'embedded with']);
  if (identity.tokenizer) settings.push(['tokenizer', identity.tokenizer, 'segmented by the tokenizer']);
  if (identity.index) settings.push(['index', identity.index, 'indexed with']);
  for (const [key, value, verb] of settings) {
    db.prepare('INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)').run(key, value);
    const stored = db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key) as string;
    if (stored !== value)
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `${file}: its exchanges were ${verb} ${stored}, not ${value}; use the same ${key} or a fresh dir`,
      );
  }
  const recorded = db.prepare(`SELECT value FROM meta WHERE key = 'dimensions'`).pluck().get() as string | undefined;
  const dimensions = recorded === undefined ? undefined : Number(recorded);
  const embedder = identity.embedder;
  if (embedder && dimensions !== undefined && embedder.dimensions > 0 && embedder.dimensions !== dimensions)
    throw dimensionMismatch(file, embedder.id, dimensions, embedder.dimensions);
  return dimensions;
}

/** Records the vectors' dimension once known (a model's first response); refuses another than the store holds. */
export function recordDimensions(db: SqliteDatabase, file: string, embedder: string, dimensions: number): void {
  db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('dimensions', ?)`).run(String(dimensions));
  const stored = Number(db.prepare(`SELECT value FROM meta WHERE key = 'dimensions'`).pluck().get());
  if (stored !== dimensions) throw dimensionMismatch(file, embedder, stored, dimensions);
}
