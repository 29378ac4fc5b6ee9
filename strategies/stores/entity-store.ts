/**
 * The store behind the `entity` strategy: versioned entity summaries and the extraction queue in
 * SQLite. Every write is a compare-and-set on the version it read, ordered by tickets, so a job
 * never overwrites a newer writer (docs/design.md §6, invariant 4); the queue survives a crash in `sync`
 * and `async`.
 */
import type { Statement } from 'better-sqlite3';
import type { DurabilityMode } from '../types.js';
import { commitDerived, namingFile, openDatabase, type SqliteDatabase } from '../../harness/core/sqlite.js';
import { hasCjk, matchTerms, normalizeText } from '../../harness/core/text.js';

/**
 * One entity as stored (`name` is its key): `version` counts its writes; `job` is its last writer's ticket, so an older job never overwrites it;
 * `sources` are the scenario step ids of the exchanges its summary was folded from (for retrieval metrics).
 */
export type EntityRecord = {
  name: string;
  display: string;
  summary: string;
  version: number;
  updatedTurn: number;
  job: number;
  sources: string[];
};

/** A new summary for an entity; without `job` it is a direct write (a correction), newer than every queued job. */
export type EntityWrite = { name: string; summary: string; turn: number; job?: number; stepIds?: readonly string[] };

/** An exchange waiting for extraction; `id` is its ticket in the writers' order. */
export type EntityJob = { id: number; turn: number; lines: string[]; stepIds: string[] };

/** A write a job prepared, with the version it read: committed only if the entity is still at that version. */
export type EntityDraft = { write: EntityWrite; expectedVersion: number };

const NAME_SEPARATORS = /[^\p{L}\p{N}\p{M}'’-]+/u;
const MAX_NAME_WORDS = 4;
const MAX_CJK_NAME = 8;

/** The one form of an entity's name (NFKC, case fold, punctuation and possessive dropped), so "Mochi" and "mochi's" are one entity. */
export function entityKey(name: string): string {
  return normalizeText(name)
    .split(NAME_SEPARATORS)
    .map((part) => part.replace(/['’]s$/u, '').replace(/^['’-]+|['’-]+$/gu, ''))
    .filter((part) => part.length > 0)
    .join(' ');
}

/** Every name the query could contain, as keys: word n-grams, and substrings of CJK runs (which have no spaces). */
function* namesInQuery(query: string): Generator<string> {
  const tokens = entityKey(query).split(' ');
  for (let i = 0; i < tokens.length; i++) {
    for (let n = 1; n <= MAX_NAME_WORDS && i + n <= tokens.length; n++) yield tokens.slice(i, i + n).join(' ');
    if (!hasCjk(tokens[i]!)) continue;
    const chars = Array.from(tokens[i]!);
    for (let a = 0; a < chars.length; a++) {
      for (let b = a + 1; b <= Math.min(chars.length, a + MAX_CJK_NAME); b++) yield chars.slice(a, b).join('');
    }
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS entities (
  name TEXT PRIMARY KEY, display TEXT NOT NULL, summary TEXT NOT NULL, version INTEGER NOT NULL,
  updated_turn INTEGER NOT NULL, updated_job INTEGER NOT NULL, updated_at TEXT NOT NULL, step_ids TEXT);
CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, turn INTEGER NOT NULL, lines TEXT NOT NULL, step_ids TEXT);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);`;

const SELECT_ENTITIES =
  'SELECT name, display, summary, version, updated_turn AS updatedTurn, updated_job AS job, step_ids AS sources FROM entities';
/** Columns added after the first release: a file written before them gets them (empty) on open. */
const ADDED_COLUMNS: [table: string, column: string][] = [
  ['entities', 'step_ids'],
  ['jobs', 'step_ids'],
];
const fromRow = (row: Omit<EntityRecord, 'sources'> & { sources: string | null }): EntityRecord => ({
  ...row,
  sources: row.sources ? (JSON.parse(row.sources) as string[]) : [],
});
const INSERT_ENTITY = `INSERT INTO entities (name, display, summary, version, updated_turn, updated_job, updated_at, step_ids)
  VALUES (@name, @display, @summary, @version, @updatedTurn, @job, @updatedAt, @stepIds) ON CONFLICT (name) DO NOTHING`;
const UPDATE_ENTITY = `UPDATE entities SET display = @display, summary = @summary, version = @version, updated_turn = @updatedTurn,
  updated_job = @job, updated_at = @updatedAt, step_ids = @stepIds WHERE name = @name AND version = @expectedVersion AND updated_job < @job`;

/**
 * Entity summaries and the extraction queue (and the strategy's message history), in `entities.sqlite`: committed per write in `sync`
 * and `async`, kept in memory and written on close in `exit`, memory only in `none`. All rows are
 * read once at open; afterwards a turn reads at most the rows a conflict forces it to re-read.
 */
export class EntityStore {
  /** Writes refused or skipped because the entity moved on (another version, or a newer writer). */
  staleWrites = 0;
  private readonly records = new Map<string, EntityRecord>();
  private readonly index = new Map<string, Set<string>>();
  private readonly termsOf = new Map<string, string[]>();
  private readonly storedVersion = new Map<string, number>();
  private readonly dirty = new Set<string>();
  private db: SqliteDatabase | undefined;
  private readonly statements = new Map<string, Statement>();
  private nextTicket = 1;

  constructor(
    private readonly file: string,
    private readonly durability: DurabilityMode,
    private readonly now: () => Date,
  ) {}

  private get commitsEachWrite(): boolean {
    return this.db !== undefined && (this.durability === 'sync' || this.durability === 'async');
  }

  /** Loads what was persisted; returns the jobs a crash left in the queue. */
  open(): EntityJob[] {
    if (this.db || this.durability === 'none') return [];
    return namingFile(this.file, () => this.openFile());
  }

  private openFile(): EntityJob[] {
    const db = openDatabase(this.file, this.durability);
    db.exec(SCHEMA);
    for (const [table, column] of ADDED_COLUMNS) {
      const columns = db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[];
      if (!columns.includes(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} TEXT`);
    }
    for (const record of (db.prepare(SELECT_ENTITIES).all() as Parameters<typeof fromRow>[0][]).map(fromRow)) {
      this.cache(record);
      this.storedVersion.set(record.name, record.version);
    }
    const rows = db.prepare('SELECT id, turn, lines, step_ids FROM jobs ORDER BY id').all() as {
      id: number;
      turn: number;
      lines: string;
      step_ids: string | null;
    }[];
    const jobs = rows.map(
      (row): EntityJob => ({
        id: row.id,
        turn: row.turn,
        lines: JSON.parse(row.lines) as string[],
        stepIds: row.step_ids ? (JSON.parse(row.step_ids) as string[]) : [],
      }),
    );
    for (const { job } of this.records.values()) this.nextTicket = Math.max(this.nextTicket, job + 1);
    for (const { id } of jobs) this.nextTicket = Math.max(this.nextTicket, id + 1);
    this.db = db;
    return this.durability === 'exit' ? [] : jobs;
  }

  /** The open database (undefined in `none`): the strategy keeps its message history in it too. */
  get database(): SqliteDatabase | undefined {
    return this.db;
  }

  /** Runs `work` in one commit when writes commit as they happen (`sync`, `async`); nested ticket and job writes join it. */
  transaction<T>(work: () => T): T {
    return this.commitsEachWrite ? this.db!.transaction(work).immediate() : work();
  }

  /** The entity under any spelling of its name. */
  get(name: string): EntityRecord | undefined {
    return this.records.get(entityKey(name));
  }

  get size(): number {
    return this.records.size;
  }

  all(): EntityRecord[] {
    return [...this.records.values()];
  }

  /** Queues an exchange (its lines and the step ids they came from) for extraction: durable before it returns in `sync` and `async`. */
  enqueue(turn: number, lines: string[], stepIds: string[] = []): EntityJob {
    return { id: this.ticket({ turn, lines, stepIds }), turn, lines, stepIds };
  }

  /** True when `job` may still write the entity: nobody newer has (counted as stale), and it has not already. */
  admits(name: string, job: number): boolean {
    const record = this.get(name);
    if (record && record.job > job) this.staleWrites++;
    return record === undefined || record.job < job;
  }

  /** Writes only if the entity is still at `expectedVersion` (0: does not exist yet) and no newer writer got there; undefined when refused. */
  compareAndSet(write: EntityWrite, expectedVersion: number): EntityRecord | undefined {
    const name = entityKey(write.name);
    const job = write.job ?? this.ticket();
    const current = this.records.get(name);
    const sources = [...new Set([...(current?.sources ?? []), ...(write.stepIds ?? [])])];
    const record: EntityRecord = {
      name,
      display: write.name.trim(),
      summary: write.summary,
      version: expectedVersion + 1,
      updatedTurn: write.turn,
      job,
      sources,
    };
    const accepted = this.commitsEachWrite
      ? this.writeRow(record, expectedVersion)
      : (current?.version ?? 0) === expectedVersion && (current?.job ?? 0) < job;
    if (!accepted) {
      this.staleWrites++;
      if (this.commitsEachWrite) this.refresh(name);
      return undefined;
    }
    this.cache(record);
    if (this.durability === 'exit') this.dirty.add(name);
    return record;
  }

  /** Applies a job's drafts in one transaction and, when all were taken (or `last`), removes the job from the queue. Returns the names refused. */
  commit(drafts: readonly EntityDraft[], job: number, last: boolean): string[] {
    const apply = (): string[] => {
      const refused = drafts
        .filter((draft) => !this.compareAndSet(draft.write, draft.expectedVersion))
        .map((draft) => draft.write.name);
      if ((refused.length === 0 || last) && this.commitsEachWrite) this.sql('DELETE FROM jobs WHERE id = ?').run(job);
      return refused;
    };
    // Derived from the queued job, which is durable: lost to a power cut, the job runs again.
    return this.commitsEachWrite ? commitDerived(this.db!, apply) : apply();
  }

  /** The `k` most relevant entities: named in the query first, then by terms shared with the summary, ties by recency. */
  relevant(query: string, k: number): EntityRecord[] {
    if (k === 0 || this.records.size === 0) return [];
    const named = new Set<string>();
    for (const candidate of namesInQuery(query)) if (this.records.has(candidate)) named.add(candidate);
    const overlap = new Map<string, number>([...named].map((name) => [name, 0]));
    for (const term of new Set(matchTerms(query))) {
      const names = this.index.get(term);
      if (!names || names.size === 0) continue;
      // Rarer terms weigh more (inverse document frequency), so one shared rare word beats many common ones.
      const weight = Math.log(1 + this.records.size / names.size);
      for (const name of names) overlap.set(name, (overlap.get(name) ?? 0) + weight);
    }
    const rank = (name: string): number => (named.has(name) ? 1e9 : 0) + overlap.get(name)!;
    const ranked = [...overlap.keys()].map((name) => this.records.get(name)!);
    return ranked
      .sort((a, b) => rank(b.name) - rank(a.name) || b.job - a.job || a.name.localeCompare(b.name))
      .slice(0, k);
  }

  /** Writes what `exit` mode kept back (still compare-and-set against the versions read at open), then releases the file. */
  close(): void {
    const db = this.db;
    if (!db) return;
    db.transaction(() => {
      for (const name of this.dirty)
        if (!this.writeRow(this.records.get(name)!, this.storedVersion.get(name) ?? 0)) this.staleWrites++;
    }).immediate();
    this.dirty.clear();
    this.statements.clear();
    db.close();
    this.db = undefined;
  }

  /** Prepares each statement once per open file. */
  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) this.statements.set(text, (statement = this.db!.prepare(text)));
    return statement;
  }

  /** Takes the next ticket in the writers' order, recording a job with it when given (one transaction). */
  private ticket(job?: { turn: number; lines: string[]; stepIds: string[] }): number {
    if (!this.commitsEachWrite) return this.nextTicket++;
    return this.db!.transaction((): number => {
      const stored =
        (this.sql("SELECT value FROM meta WHERE key = 'next_job'").get() as { value: number } | undefined)?.value ?? 1;
      const id = Math.max(stored, this.nextTicket);
      if (job)
        this.sql('INSERT INTO jobs (id, turn, lines, step_ids) VALUES (?, ?, ?, ?)').run(
          id,
          job.turn,
          JSON.stringify(job.lines),
          job.stepIds.length > 0 ? JSON.stringify(job.stepIds) : null,
        );
      this.sql(
        "INSERT INTO meta (key, value) VALUES ('next_job', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      ).run(id + 1);
      this.nextTicket = id + 1;
      return id;
    }).immediate();
  }

  /** The compare-and-set itself, in SQL: the row moves only from `expectedVersion`, and only forward in the writers' order. */
  private writeRow(record: EntityRecord, expectedVersion: number): boolean {
    const { sources, ...fields } = record;
    const values = {
      ...fields,
      stepIds: sources.length > 0 ? JSON.stringify(sources) : null,
      updatedAt: this.now().toISOString(),
      expectedVersion,
    };
    const statement = this.sql(expectedVersion === 0 ? INSERT_ENTITY : UPDATE_ENTITY);
    return statement.run(values).changes === 1;
  }

  /** Re-reads one row after a refused write (another writer moved it). */
  private refresh(name: string): void {
    const row = this.sql(`${SELECT_ENTITIES} WHERE name = ?`).get(name) as Parameters<typeof fromRow>[0] | undefined;
    if (row) this.cache(fromRow(row));
  }

  private cache(record: EntityRecord): void {
    for (const term of this.termsOf.get(record.name) ?? []) this.index.get(term)?.delete(record.name);
    const terms = [...new Set(matchTerms(`${record.display} ${record.summary}`))];
    for (const term of terms) {
      let names = this.index.get(term);
      if (!names) this.index.set(term, (names = new Set()));
      names.add(record.name);
    }
    this.termsOf.set(record.name, terms);
    this.records.set(record.name, record);
  }
}
