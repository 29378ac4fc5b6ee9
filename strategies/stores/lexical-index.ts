/**
 * A BM25-ranked full-text index over integer keys: an SQLite FTS5 table with one column of
 * pre-segmented terms joined by spaces (see segmenters.ts). The `unicode61` tokenizer then only
 * splits at those spaces (a Chinese word is one token, as the segmenter cut it), and `porter`
 * stems English words, so "cooking" finds "cook". Ranking is FTS5's built-in `bm25()`
 * (k1 = 1.2, b = 0.75), negated so that a higher score ranks first.
 *
 * The table lives either in a strategy's SQLite file as an external-content table over its
 * `exchanges` rows (durable, shared by every writer of the file, written in the same
 * transaction as the exchange), or in an in-memory database for modes that keep nothing on disk
 * until close (`exit`) or at all (`none`).
 */
import Database from 'better-sqlite3';
import type { SqliteDatabase } from '../../harness/core/sqlite.js';

/** A ranked key: higher scores rank first. */
export interface LexicalHit {
  key: number;
  score: number;
}

/** The FTS5 tokenizer over pre-segmented terms. */
const TOKENIZE = `tokenize = 'porter unicode61'`;
/** An upper bound for rowid ranges (SQLite rowids are signed 64-bit; JavaScript numbers are exact below 2^53). */
const MAX_KEY = Number.MAX_SAFE_INTEGER;

/** An FTS5 MATCH expression: any of the terms, each as a quoted string (so no term is read as an operator). */
export function matchAny(terms: readonly string[]): string | undefined {
  const unique = [...new Set(terms)];
  if (unique.length === 0) return undefined;
  return unique.map((term) => `"${term.replace(/"/gu, '""')}"`).join(' OR ');
}

/** Where the table's text lives: in the table itself, or in a content table's column of the same name. */
export type LexicalContent = { kind: 'own' } | { kind: 'external'; table: string; rowid: string };

/** An FTS5 table of terms keyed by integer; the caller decides which database (and so which transaction) it lives in. */
export class LexicalIndex {
  private readonly statements: ReturnType<LexicalIndex['prepare']>;

  /**
   * Creates the table `name` (with a `terms` column) when missing. With external content the
   * content table must have a `terms` column and the given rowid column.
   */
  constructor(
    private readonly db: SqliteDatabase,
    private readonly name: string,
    content: LexicalContent = { kind: 'own' },
    private readonly ownsDatabase = false,
  ) {
    const contentOption =
      content.kind === 'external' ? `, content = '${content.table}', content_rowid = '${content.rowid}'` : '';
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${name} USING fts5(terms${contentOption}, ${TOKENIZE})`);
    this.statements = this.prepare();
  }

  /** An index in a private in-memory database (modes `exit` and `none`); close() releases it. */
  static inMemory(): LexicalIndex {
    return new LexicalIndex(new Database(':memory:'), 'terms_index', { kind: 'own' }, true);
  }

  /** Indexes `terms` under `key` (call inside the transaction that stores what the key names). */
  add(key: number, terms: string): void {
    this.statements.insert.run(key, terms);
  }

  /**
   * Runs `update` (adds, removals) in one transaction of a private in-memory database: FTS5 writes
   * its pending terms out once per transaction, so a few hundred rows added one commit each cost
   * it about three times the CPU of the same rows in one (an index in a strategy's file is written
   * in each exchange's own transaction instead).
   */
  batch(update: () => void): void {
    if (!this.ownsDatabase || this.db.inTransaction) return update();
    this.db.transaction(update)();
  }

  /** Whether a transaction is open on the table's database (tests: what `batch` wraps). */
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  /** Drops an entry (an own-content table only). */
  remove(key: number): void {
    this.statements.remove.run(key);
  }

  /** Moves an entry to another key (an own-content table only: mode `exit` gives held exchanges their ids). */
  rekey(from: number, to: number): void {
    const terms = this.statements.termsOf.get(from) as string | undefined;
    if (terms === undefined) return;
    this.statements.remove.run(from);
    this.statements.insert.run(to, terms);
  }

  /** The `n` best keys in [from, below) for the query terms, best first; ties go to the newer (higher) key. */
  search(queryTerms: readonly string[], n: number, below = Infinity, from = 0): LexicalHit[] {
    const match = matchAny(queryTerms);
    if (match === undefined || n <= 0) return [];
    const rows = this.statements.search.all({ match, from, below: Number.isFinite(below) ? below : MAX_KEY, n }) as {
      key: number;
      rank: number;
    }[];
    return rows.map((row) => ({ key: row.key, score: -row.rank }));
  }

  /** Releases a private in-memory database; a file's table closes with its file. */
  close(): void {
    if (this.ownsDatabase) this.db.close();
  }

  private prepare() {
    const table = this.name;
    return {
      insert: this.db.prepare(`INSERT INTO ${table} (rowid, terms) VALUES (?, ?)`),
      remove: this.db.prepare(`DELETE FROM ${table} WHERE rowid = ?`),
      termsOf: this.db.prepare(`SELECT terms FROM ${table} WHERE rowid = ?`).pluck(),
      search: this.db.prepare(
        `SELECT rowid AS key, bm25(${table}) AS rank FROM ${table} WHERE ${table} MATCH @match AND rowid >= @from AND rowid < @below ORDER BY rank, rowid DESC LIMIT @n`,
      ),
    };
  }
}
