/**
 * What the `summary` and `summary-buffer` strategies share: a running summary with a version,
 * the messages not yet folded into it, and a durable queue of fold jobs, all in one SQLite file
 * so that "summary written + its messages dropped + job done" is a single commit.
 *
 * Durability modes map onto where that database lives: `sync` and `async` use the file (every
 * message and job committed before the call returns; the queue runs with synchronous=FULL), `exit`
 * works on an in-memory copy that is written back atomically on close, `none` never touches disk.
 * A fold that save() waits for (synchronous summarising) is staged: its single commit is the next
 * message's (or flush's, or close's), its job queued until then, so a crash in between only makes
 * the next open fold again — a turn costs one commit per message.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
  SystemMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import type { DurabilityMode, StrategyContext } from '../types.js';
import { writeFileAtomic } from '../../harness/core/fs.js';
import { JobQueue, JobWorker, type Job } from './jobs.js';
import type { ChatModel } from '../../harness/models/types.js';
import { summarizePrompt } from '../../harness/core/prompts.js';
import {
  assertNotEmptied,
  commitDerived,
  namingFile,
  openDatabase,
  type SqliteDatabase,
} from '../../harness/core/sqlite.js';
import { messageText, roleOf, type TokenCounter } from '../../harness/core/tokens.js';

/** Database file of the `summary` and `summary-buffer` strategies inside their dir. */
export const SUMMARY_FILE = 'summary.sqlite';

/** Job kind of a fold: messages `fromSeq..throughSeq` (inclusive) go into the summary. */
export const FOLD_JOB = 'fold-summary';

/** Payload of a fold job: the messages stay in the `messages` table until the fold commits. */
export interface FoldPayload {
  fromSeq: number;
  throughSeq: number;
}

/** The running summary; `version` grows by one with every write. */
export interface SummaryRecord {
  text: string;
  version: number;
}

/** A message as stored, with its position in the log. */
export interface StoredMessage {
  seq: number;
  message: BaseMessage;
}

/** Prefix of the system message that carries the summary into the context. */
export const SUMMARY_PREFIX = 'Summary of the earlier conversation:\n';

/** The context message for a summary (callers cache it: token counts are cached per message object). */
export function summaryMessage(text: string): SystemMessage {
  return new SystemMessage(SUMMARY_PREFIX + text);
}

/** One line per message, LangChain-style (`Human: ...`), tool calls and results included. */
export function conversationLines(messages: readonly BaseMessage[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    const text = messageText(message).trim();
    const role = roleOf(message);
    const calls =
      'tool_calls' in message ? ((message.tool_calls as { name: string; args: unknown }[] | undefined) ?? []) : [];
    if (role === 'user' && text) lines.push(`Human: ${text}`);
    else if (role === 'assistant') {
      if (text) lines.push(`AI: ${text}`);
      for (const call of calls) lines.push(`AI: called ${call.name} ${JSON.stringify(call.args ?? {})}`);
    } else if (role === 'tool' && text) lines.push(`Tool: ${message.name ? `${message.name} returned ` : ''}${text}`);
    else if (text) lines.push(`${role[0]!.toUpperCase()}${role.slice(1)}: ${text}`);
  }
  return lines.join('\n');
}

/**
 * The longest start (`keep: 'start'`) or end (`keep: 'end'`) of `text` within `maxTokens`,
 * by binary search over characters: about log2(length) tokenizer calls, paid only when
 * something must be cut.
 */
export function truncateText(text: string, maxTokens: number, tokens: TokenCounter, keep: 'start' | 'end'): string {
  if (maxTokens <= 0) return '';
  if (tokens.countText(text) <= maxTokens) return text;
  const chars = Array.from(text);
  const take = (n: number) => (keep === 'start' ? chars.slice(0, n) : chars.slice(chars.length - n)).join('');
  let low = 0;
  let high = chars.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (tokens.countText(take(middle)) <= maxTokens) low = middle;
    else high = middle - 1;
  }
  const cut = take(low);
  const trimmed = cut.trim();
  // Dropping the space at the cut can re-tokenise into more tokens: keep the space then.
  return trimmed === cut || tokens.countText(trimmed) <= maxTokens ? trimmed : cut;
}

/**
 * Folds `messages` into `previous` with one `summarize` call (counted as maintenance by the
 * metered model) and cuts the result to `maxTokens` in case the model ignored the limit.
 * `stale`: the summary changed since the job was queued (a correction landed), so the job's
 * lines are the older part and the current summary goes last, where newer facts win.
 */
export async function foldSummary(
  model: ChatModel,
  tokens: TokenCounter,
  previous: string,
  messages: readonly BaseMessage[],
  maxTokens: number,
  stale = false,
): Promise<string> {
  const lines = conversationLines(messages);
  if (!lines) return previous;
  const prompt = stale ? summarizePrompt(lines, previous) : summarizePrompt(previous, lines);
  const { text } = await model.chat({ task: 'summarize', messages: prompt, maxOutputTokens: maxTokens });
  return truncateText(text.trim(), maxTokens, tokens, 'end');
}

/** Opens the database where the durability mode says it lives. */
function openModeDatabase(file: string, durability: DurabilityMode): SqliteDatabase {
  switch (durability) {
    case 'sync':
    case 'async':
      return openDatabase(file, durability);
    case 'exit': {
      if (!existsSync(file)) return new Database(':memory:');
      assertNotEmptied(file);
      // A file written in sync/async mode is in WAL mode, with commits possibly still in its -wal
      // file: fold them in and switch it to rollback mode, so its image deserialises in memory.
      const disk = new Database(file);
      disk.pragma('journal_mode = DELETE');
      const image = disk.serialize();
      disk.close();
      return new Database(image);
    }
    case 'none':
      return new Database(':memory:');
  }
}

function prepareStatements(db: SqliteDatabase) {
  db.exec(`CREATE TABLE IF NOT EXISTS summary (
    id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL, text TEXT NOT NULL, updated_at TEXT NOT NULL)`);
  db.exec('CREATE TABLE IF NOT EXISTS messages (seq INTEGER PRIMARY KEY AUTOINCREMENT, data TEXT NOT NULL)');
  return {
    initSummary: db.prepare("INSERT OR IGNORE INTO summary (id, version, text, updated_at) VALUES (1, 0, '', ?)"),
    readSummary: db.prepare('SELECT text, version FROM summary WHERE id = 1'),
    writeSummary: db.prepare(
      'UPDATE summary SET text = ?, version = version + 1, updated_at = ? WHERE id = 1 AND version = ?',
    ),
    insert: db.prepare('INSERT INTO messages (data) VALUES (?)'),
    range: db.prepare('SELECT seq, data FROM messages WHERE seq BETWEEN ? AND ? ORDER BY seq'),
    dropRange: db.prepare('DELETE FROM messages WHERE seq BETWEEN ? AND ?'),
  };
}

/** A fold whose result waits for the next commit: the job, the new text, and the summary version it was computed on. */
interface StagedFold {
  job: Job<FoldPayload>;
  text: string;
  readVersion: number;
}

/** Summary + unfolded messages + fold queue of one strategy, in one database (see the file comment). */
export class SummaryStore {
  readonly queue: JobQueue;
  /**
   * Stage folds instead of committing each: a fold's result (summary, dropped messages, job done)
   * joins the next commit — the next message's, or flush's, or close's — so a turn costs one commit
   * per message. Until then the job stays queued: a crash loses nothing but the model call, which
   * the next open makes again. For folds awaited by save() (synchronous summarising).
   */
  stageFolds = false;
  private staged: StagedFold | undefined;
  private readonly statements: ReturnType<typeof prepareStatements>;
  private summaryCache: SummaryRecord;

  private constructor(
    private readonly db: SqliteDatabase,
    private readonly file: string,
    private readonly durability: DurabilityMode,
    private readonly now: () => Date,
  ) {
    this.statements = prepareStatements(db);
    this.statements.initSummary.run(now().toISOString());
    this.queue = new JobQueue(db, { durability, now });
    this.summaryCache = this.readSummary();
  }

  /** Opens `dir/file` per the durability mode; running jobs left by a dead process become pending again. */
  static open(dir: string, file: string, durability: DurabilityMode, now: () => Date = () => new Date()): SummaryStore {
    const location = path.join(dir, file);
    return namingFile(location, () => {
      const store = new SummaryStore(openModeDatabase(location, durability), location, durability, now);
      store.queue.recover();
      return store;
    });
  }

  /** The summary as last written (by this process). */
  get summary(): SummaryRecord {
    return this.summaryCache;
  }

  /** Every message not yet folded, oldest first (read once, on open). */
  readMessages(): StoredMessage[] {
    const rows = this.statements.range.all(0, Number.MAX_SAFE_INTEGER) as { seq: number; data: string }[];
    return toStored(rows);
  }

  /**
   * Runs `work` in one write transaction (nested calls become savepoints), with the staged fold's
   * result, if any. IMMEDIATE: the write lock is taken (waiting for other writers) before the
   * staged fold's reads, so no other process's commit can slip in between.
   */
  transaction<T>(work: () => T): T {
    return this.db
      .transaction(() => {
        this.commitStaged();
        return work();
      })
      .immediate();
  }

  /** Whether this job's result is staged (committed with the next write). */
  isStaged(jobId: number): boolean {
    return this.staged?.job.id === jobId;
  }

  /** Commits the staged fold now (flush, close), if there is one. */
  commitStagedFold(): void {
    if (this.staged) this.transaction(() => undefined);
  }

  /** Inside a transaction: writes the staged fold; if another writer got there first, ours is dropped (its job, if still queued, folds again). */
  private commitStaged(): void {
    const staged = this.staged;
    if (!staged) return;
    this.staged = undefined;
    if (typeof this.applyFold(staged.job, staged.text, staged.readVersion) === 'string')
      this.summaryCache = this.readSummary();
  }

  /** The conditional write of a fold's result: the summary (if still at `readVersion`), its messages dropped, its job done. */
  private applyFold(job: Job<FoldPayload>, text: string, readVersion: number): SummaryRecord | 'gone' | 'conflict' {
    if (!this.queue.has(job.id)) return 'gone';
    if (this.statements.writeSummary.run(text, this.now().toISOString(), readVersion).changes === 0) return 'conflict';
    this.statements.dropRange.run(job.payload.fromSeq, job.payload.throughSeq);
    this.queue.complete(job.id);
    return { text, version: readVersion + 1 };
  }

  /** Appends a message to the log of unfolded messages; returns its seq (never reused, even after folds). */
  append(message: BaseMessage): number {
    return Number(
      this.statements.insert.run(JSON.stringify(mapChatMessagesToStoredMessages([message])[0])).lastInsertRowid,
    );
  }

  /**
   * Queues the fold of `fromSeq..throughSeq`. Its base version is the version the summary will
   * have once the jobs ahead of it are done, so a write by anything else in between shows up
   * as a version mismatch when the job runs.
   */
  enqueueFold(fromSeq: number, throughSeq: number): Job<FoldPayload> {
    return this.transaction(() =>
      this.queue.enqueue<FoldPayload>(
        FOLD_JOB,
        { fromSeq, throughSeq },
        this.readSummary().version + this.queue.size(FOLD_JOB),
      ),
    );
  }

  /** Fold jobs not finished yet (the backlog, or what a crash left behind), oldest first. */
  pendingFolds(): Job<FoldPayload>[] {
    return this.queue.pending<FoldPayload>(FOLD_JOB);
  }

  /**
   * Runs one fold job: reads its messages and the current summary, asks `summarize` for the new
   * text, then commits summary (conditional on the version it read), message deletion and job
   * completion together. If the summary changed during the model call it folds again on top of
   * the newer one, so it never overwrites a write it did not see. Returns the new summary, or
   * undefined when the job had already been completed by someone else.
   */
  async runFold(
    job: Job<FoldPayload>,
    summarize: (previous: string, messages: BaseMessage[], stale: boolean) => Promise<string>,
    checkpoint?: (point: 'mid_summary') => void,
  ): Promise<SummaryRecord | undefined> {
    const { fromSeq, throughSeq } = job.payload;
    // A fold reads the summary from the file: an earlier staged one is committed first.
    this.commitStagedFold();
    const messages = toStored(this.statements.range.all(fromSeq, throughSeq) as { seq: number; data: string }[]).map(
      (stored) => stored.message,
    );
    for (let attempt = 1; ; attempt++) {
      const current = this.readSummary();
      const text = await summarize(current.text, messages, current.version !== job.baseVersion);
      // A crash here: the model answered, nothing is committed, the job is still queued.
      checkpoint?.('mid_summary');
      if (this.stageFolds) {
        if (!this.queue.has(job.id)) return undefined;
        this.staged = { job, text, readVersion: current.version };
        this.summaryCache = { text, version: current.version + 1 };
        return this.summaryCache;
      }
      // Derived from what is durable already (the folded messages and the queued job): lost to a
      // power cut, the fold runs again from them.
      const outcome = commitDerived(this.db, () => this.applyFold(job, text, current.version));
      if (outcome === 'gone') return undefined;
      if (outcome !== 'conflict') {
        this.summaryCache = outcome;
        return outcome;
      }
      if (attempt >= 3) throw new Error(`fold job ${job.id}: the summary kept changing during the model call`);
    }
  }

  /** Writes the `exit` copy back (atomically) and releases the file. */
  async close(): Promise<void> {
    if (!this.db.open) return;
    this.commitStagedFold();
    if (this.durability === 'exit') {
      const image = this.db.serialize();
      this.db.close();
      await writeFileAtomic(this.file, image);
      return;
    }
    this.db.close();
  }

  private readSummary(): SummaryRecord {
    return this.statements.readSummary.get() as SummaryRecord;
  }
}

function toStored(rows: readonly { seq: number; data: string }[]): StoredMessage[] {
  const messages = mapStoredMessagesToChatMessages(rows.map((row) => JSON.parse(row.data)));
  return rows.map((row, index) => ({ seq: row.seq, message: messages[index]! }));
}

/** When folds run: `sync` inside save(), `async` off the hot path. */
export type SummarizeMode = 'sync' | 'async';

/**
 * The lifecycle both summary strategies share: the store on the context dir, the worker that
 * runs fold jobs (resuming what a crash left), and the summary as a context message.
 * The summarising mode defaults to `async` in durability mode `async`, `sync` otherwise.
 */
export class SummaryMemory {
  readonly store: SummaryStore;
  readonly mode: SummarizeMode;
  private readonly worker: JobWorker<FoldPayload>;
  private shown: { version: number; message: SystemMessage } | undefined;

  constructor(
    context: StrategyContext,
    mode: SummarizeMode | undefined,
    runFold: (job: Job<FoldPayload>) => Promise<void>,
  ) {
    this.store = SummaryStore.open(context.dir, SUMMARY_FILE, context.durability, context.now);
    this.mode = mode ?? (context.durability === 'async' ? 'async' : 'sync');
    // Synchronous folds are awaited by save(): their claim needs no commit of its own, and their result joins the next message's commit.
    this.worker = new JobWorker(this.store.queue, FOLD_JOB, runFold, this.mode === 'async', (job) =>
      this.store.isStaged(job.id),
    );
    this.store.stageFolds = this.mode === 'sync';
  }

  /** The summary as a context message: one object per version, so it is tokenised once. */
  summaryMessage(): SystemMessage | undefined {
    const { text, version } = this.store.summary;
    if (!text) return undefined;
    if (this.shown?.version !== version) this.shown = { version, message: summaryMessage(text) };
    return this.shown.message;
  }

  /** Runs queued folds as the mode says: awaited in `sync`, started in the background in `async`. */
  async runFolds(): Promise<void> {
    if (this.mode === 'sync') await this.worker.drain();
    else this.worker.kick();
  }

  /** Starts folds left over from a crash or an unclean close, without blocking open(). */
  resume(): void {
    if (this.store.queue.size(FOLD_JOB) > 0) this.worker.kick();
  }

  /** What is persisted, as texts: the summary and the messages not folded into it yet (for durability checks). */
  snapshot(): string[] {
    return [this.store.summary.text, ...this.store.readMessages().map((stored) => messageText(stored.message))];
  }

  /** Waits until every queued fold is written. */
  async flush(): Promise<void> {
    await this.worker.drain();
    this.store.commitStagedFold();
  }

  /** Lets the running fold finish, then closes the store; other queued folds wait for the next open. */
  async close(): Promise<void> {
    await this.worker.stop();
    await this.store.close();
  }
}

/**
 * What `summary` and `summary-buffer` share: a SummaryMemory opened by open(), and the lifecycle
 * around it (flush, snapshot, pending jobs, close). Subclasses say how a fold job runs.
 */
export abstract class SummaryBackedStrategy {
  readonly capabilities = { persistent: true, explicitMemory: false, backgroundWork: true, lossy: true };
  protected memory: SummaryMemory | undefined;

  constructor(
    protected readonly context: StrategyContext,
    private readonly summarize: SummarizeMode | undefined,
  ) {}

  /** Runs one queued fold job. */
  protected abstract fold(job: Job<FoldPayload>): Promise<void>;

  /** Opens the memory; undefined when it was already open. */
  protected openMemory(): SummaryMemory | undefined {
    if (this.memory) return undefined;
    this.memory = new SummaryMemory(this.context, this.summarize, (job) => this.fold(job));
    return this.memory;
  }

  protected ready(): SummaryMemory {
    if (!this.memory) throw new Error(`${this.constructor.name}: open() was not called`);
    return this.memory;
  }

  async flush(): Promise<void> {
    await this.memory?.flush();
  }

  async snapshot(): Promise<string[]> {
    return this.ready().snapshot();
  }

  /** Folds not done yet; a staged fold is done (its result waits for the next commit, and a crash only redoes it). */
  pendingJobs(): number {
    const { store } = this.ready();
    return store.pendingFolds().filter((job) => !store.isStaged(job.id)).length;
  }

  /**
   * Durability `sync` with folds run inside save(): the summary, the unfolded messages and the
   * queue in process are what the store holds once a staged fold is committed (as close() commits
   * it), so a new session keeps the store open (MemoryStrategy.newSession). Background folds stop
   * and resume at a reopen: that mode reopens.
   */
  async newSession(): Promise<boolean> {
    const memory = this.memory;
    if (!memory || this.context.durability !== 'sync' || memory.mode !== 'sync') return false;
    memory.store.commitStagedFold();
    return true;
  }

  async close(): Promise<void> {
    await this.memory?.close();
    this.memory = undefined;
  }
}
