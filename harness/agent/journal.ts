/**
 * The agent loop's own durable journal (one SQLite file per cell, outside the strategy's dir):
 * which step each process got to, and every tool call's progress (intent → call saved → result saved). After a crash the fresh process reads it back to recover instead of guessing.
 */
import { openDatabase, type SqliteDatabase } from '../core/sqlite.js';

export type ToolState = 'intent' | 'call_saved' | 'result_saved';
export type StepState = 'started' | 'user_saved' | 'done';

export interface ToolIntent {
  callId: string;
  step: number;
  tool: string;
  idempotencyKey: string | null;
  state: ToolState;
}

const TOOL_ORDER: readonly ToolState[] = ['intent', 'call_saved', 'result_saved'];

/** Durable progress of the agent loop; every write commits with fsync before returning. */
export class Journal {
  private readonly db: SqliteDatabase;

  constructor(file: string) {
    this.db = openDatabase(file, 'sync');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS steps (session TEXT NOT NULL, step INTEGER NOT NULL, state TEXT NOT NULL, PRIMARY KEY (session, step));
      CREATE TABLE IF NOT EXISTS tools (call_id TEXT PRIMARY KEY, step INTEGER NOT NULL, tool TEXT NOT NULL, idempotency_key TEXT, state TEXT NOT NULL);
    `);
  }

  stepState(session: string, step: number): StepState | undefined {
    return (
      this.db.prepare('SELECT state FROM steps WHERE session = ? AND step = ?').get(session, step) as
        | { state: StepState }
        | undefined
    )?.state;
  }

  setStep(session: string, step: number, state: StepState): void {
    this.db
      .prepare(
        'INSERT INTO steps (session, step, state) VALUES (?, ?, ?) ON CONFLICT (session, step) DO UPDATE SET state = excluded.state',
      )
      .run(session, step, state);
  }

  tool(callId: string): ToolIntent | undefined {
    const row = this.db
      .prepare('SELECT call_id, step, tool, idempotency_key, state FROM tools WHERE call_id = ?')
      .get(callId) as
      | { call_id: string; step: number; tool: string; idempotency_key: string | null; state: ToolState }
      | undefined;
    return (
      row && {
        callId: row.call_id,
        step: row.step,
        tool: row.tool,
        idempotencyKey: row.idempotency_key,
        state: row.state,
      }
    );
  }

  /** Records a tool intent before anything else of the call happens. */
  recordIntent(callId: string, step: number, tool: string, idempotencyKey: string | undefined): void {
    this.db
      .prepare('INSERT OR IGNORE INTO tools (call_id, step, tool, idempotency_key, state) VALUES (?, ?, ?, ?, ?)')
      .run(callId, step, tool, idempotencyKey ?? null, 'intent');
  }

  advanceTool(callId: string, state: ToolState): void {
    this.db.prepare('UPDATE tools SET state = ? WHERE call_id = ?').run(state, callId);
  }

  /** True when the call had reached `state` (or beyond). */
  static reached(intent: ToolIntent | undefined, state: ToolState): boolean {
    return intent !== undefined && TOOL_ORDER.indexOf(intent.state) >= TOOL_ORDER.indexOf(state);
  }

  close(): void {
    this.db.close();
  }
}
