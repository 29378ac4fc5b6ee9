/**
 * The side-effect ledger (docs/design.md §6): a SQLite file outside the strategy's dir that records every
 * effect a tool causes (an order placed, a mail sent). With an idempotency key a repeated effect
 * is refused and counted; without one it happens again and is counted as a duplicate. Either way
 * the numbers come from the ledger, not from guesses.
 */
import { openDatabase, type SqliteDatabase } from '../core/sqlite.js';
import type { LedgerCounts } from '../results/schema.js';

export interface EffectOutcome {
  /** True when the effect took place now; false when the key had already been used. */
  applied: boolean;
  /** How many times an effect with this key (or this tool call, without a key) has been attempted. */
  attempts: number;
}

/** Opened by every agent process of a cell; each call commits with fsync before returning. */
export class Ledger {
  private readonly db: SqliteDatabase;

  constructor(file: string) {
    this.db = openDatabase(file, 'sync');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS effects (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        call_id TEXT NOT NULL,
        tool TEXT NOT NULL,
        args TEXT NOT NULL,
        idempotency_key TEXT,
        applied INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS effects_call ON effects (call_id);
      CREATE INDEX IF NOT EXISTS effects_key ON effects (idempotency_key);
    `);
  }

  /** Performs (records) an effect; with a key already used it is refused instead. */
  apply(callId: string, tool: string, args: unknown, idempotencyKey?: string): EffectOutcome {
    return this.db.transaction((): EffectOutcome => {
      const previous = idempotencyKey
        ? (this.db
            .prepare('SELECT count(*) AS n, sum(applied) AS done FROM effects WHERE idempotency_key = ?')
            .get(idempotencyKey) as { n: number; done: number | null })
        : (this.db.prepare('SELECT count(*) AS n, sum(applied) AS done FROM effects WHERE call_id = ?').get(callId) as {
            n: number;
            done: number | null;
          });
      const applied = !(idempotencyKey && (previous.done ?? 0) > 0);
      this.db
        .prepare('INSERT INTO effects (call_id, tool, args, idempotency_key, applied) VALUES (?, ?, ?, ?, ?)')
        .run(callId, tool, JSON.stringify(args ?? null), idempotencyKey ?? null, applied ? 1 : 0);
      return { applied, attempts: previous.n + 1 };
    })();
  }

  /** Whether an effect for this key (or call) has taken place: how recovery classifies an interrupted call. */
  completed(callId: string, idempotencyKey?: string): boolean {
    const row = idempotencyKey
      ? (this.db.prepare('SELECT sum(applied) AS done FROM effects WHERE idempotency_key = ?').get(idempotencyKey) as {
          done: number | null;
        })
      : (this.db.prepare('SELECT sum(applied) AS done FROM effects WHERE call_id = ?').get(callId) as {
          done: number | null;
        });
    return (row.done ?? 0) > 0;
  }

  /** Applied effects per call id. */
  appliedCount(callId: string): number {
    return (
      this.db.prepare('SELECT count(*) AS n FROM effects WHERE call_id = ? AND applied = 1').get(callId) as {
        n: number;
      }
    ).n;
  }

  counts(): LedgerCounts {
    const effects = (this.db.prepare('SELECT count(*) AS n FROM effects WHERE applied = 1').get() as { n: number }).n;
    const effectsDuplicated = (
      this.db
        .prepare(
          'SELECT coalesce(sum(n - 1), 0) AS n FROM (SELECT count(*) AS n FROM effects WHERE applied = 1 GROUP BY call_id HAVING n > 1)',
        )
        .get() as { n: number }
    ).n;
    const effectsRefused = (
      this.db.prepare('SELECT count(*) AS n FROM effects WHERE applied = 0').get() as { n: number }
    ).n;
    return { effects, effectsDuplicated, effectsRefused };
  }

  close(): void {
    this.db.close();
  }
}
