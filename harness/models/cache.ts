/**
 * The response cache (docs/design.md §4): live runs made repeatable and cheap in CI. A chat answer is
 * keyed by a SHA-256 of the whole request (model, task, messages, parameters; never the key)
 * plus the trial index; hits come back marked `cached` so their latency stays out of latency
 * statistics, while the harness still counts their tokens.
 */
import { createHash } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import { makeDirs } from '../core/fs.js';
import path from 'node:path';
import { maskSecrets } from '../core/secrets.js';
import { openDatabase, type SqliteDatabase } from '../core/sqlite.js';
import { toChatMessages } from './openai.js';
import type { ChatModel, ChatRequest, ChatResponse, Embedder } from './types.js';

const SCHEMA_VERSION = 1;

/** JSON with object keys sorted, so equal requests hash equally whatever order their fields were built in. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, item]) => item !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
}

/** SHA-256 (hex) of a request's canonical JSON. */
export function requestKey(request: unknown): string {
  return createHash('sha256').update(canonicalJson(request)).digest('hex');
}

/** The SQLite file behind the cache: one connection, WAL, safe to share between processes. */
export class ResponseCache {
  private readonly getChatRow: Statement<[string, number], { text: string; cut: number | null }>;
  private readonly putChatRow: Statement<[string, number, string, string, number | null, number, string]>;
  private readonly getEmbeddingRow: Statement<[string], { vector: Buffer }>;
  private readonly putEmbeddingRow: Statement<[string, string, number, Buffer, string]>;

  private constructor(private readonly db: SqliteDatabase) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS chat (
        key TEXT NOT NULL, trial INTEGER NOT NULL, model TEXT NOT NULL, text TEXT NOT NULL,
        latency_ms REAL, created_at TEXT NOT NULL, cut INTEGER, PRIMARY KEY (key, trial));
      CREATE TABLE IF NOT EXISTS embedding (
        key TEXT PRIMARY KEY, model TEXT NOT NULL, dimensions INTEGER NOT NULL, vector BLOB NOT NULL, created_at TEXT NOT NULL);
    `);
    // A cache made before answers cut at the token limit were recorded: its rows read as not cut (NULL).
    // Looked at and added in one write transaction: workers opening one cache at once add it once.
    db.transaction(() => {
      const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('chat') as string[];
      if (!columns.includes('cut')) db.exec('ALTER TABLE chat ADD COLUMN cut INTEGER');
    }).immediate();
    db.prepare('INSERT OR IGNORE INTO meta (name, value) VALUES (?, ?)').run('schema_version', String(SCHEMA_VERSION));
    this.getChatRow = db.prepare<[string, number], { text: string; cut: number | null }>(
      'SELECT text, cut FROM chat WHERE key = ? AND trial = ?',
    );
    this.putChatRow = db.prepare<[string, number, string, string, number | null, number, string]>(
      'INSERT OR REPLACE INTO chat (key, trial, model, text, latency_ms, cut, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.getEmbeddingRow = db.prepare<[string], { vector: Buffer }>('SELECT vector FROM embedding WHERE key = ?');
    this.putEmbeddingRow = db.prepare<[string, string, number, Buffer, string]>(
      'INSERT OR REPLACE INTO embedding (key, model, dimensions, vector, created_at) VALUES (?, ?, ?, ?, ?)',
    );
  }

  /** Opens (or creates, with its folder) the cache file. */
  static open(file: string): ResponseCache {
    makeDirs(path.dirname(path.resolve(file)));
    // Losing the last writes on a power cut only costs a repeated call, so no fsync per write.
    return new ResponseCache(openDatabase(file, 'async'));
  }

  /** A cached answer's text, and whether the endpoint had cut it at the token limit. */
  getChat(key: string, trial: number): { text: string; cut: boolean } | undefined {
    const row = this.getChatRow.get(key, trial);
    // Masked on the way out too: a cache written by an older membench may hold a variant of the key.
    return row === undefined ? undefined : { text: maskSecrets(row.text), cut: row.cut === 1 };
  }

  putChat(key: string, trial: number, model: string, response: Pick<ChatResponse, 'text' | 'latencyMs' | 'cut'>): void {
    const { text, latencyMs, cut } = response;
    this.putChatRow.run(key, trial, model, maskSecrets(text), latencyMs ?? null, cut ? 1 : 0, new Date().toISOString());
  }

  getEmbedding(key: string): Float32Array | undefined {
    const row = this.getEmbeddingRow.get(key);
    // Copy: a Buffer from SQLite may sit at an offset a Float32Array cannot view.
    return row ? new Float32Array(new Uint8Array(row.vector).buffer) : undefined;
  }

  putEmbeddings(rows: ReadonlyArray<{ key: string; model: string; vector: Float32Array }>): void {
    const createdAt = new Date().toISOString();
    this.db.transaction(() => {
      for (const { key, model, vector } of rows) {
        this.putEmbeddingRow.run(
          key,
          model,
          vector.length,
          Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength),
          createdAt,
        );
      }
    })();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** How a cached model knows which trial it serves and what of a request decides its answer. */
export interface CachedChatModelOptions {
  /** Trials are independent samples: each gets its own answers (default 0). */
  trial?: number;
  /** The request as the provider sends it (default: chat-completions messages and the output limit). */
  describe?: (request: ChatRequest) => unknown;
}

function defaultDescription(request: ChatRequest): unknown {
  return { messages: toChatMessages(request.messages), maxOutputTokens: request.maxOutputTokens };
}

/** Wraps a chat model with the cache: a hit skips the call and comes back `cached: true`, with no latency. */
export class CachedChatModel implements ChatModel {
  readonly id: string;
  readonly offline: boolean;
  readonly trial: number;
  hits = 0;
  misses = 0;
  private readonly describe: (request: ChatRequest) => unknown;

  constructor(
    private readonly inner: ChatModel,
    private readonly store: ResponseCache,
    options: CachedChatModelOptions = {},
  ) {
    this.id = inner.id;
    this.offline = inner.offline;
    this.trial = options.trial ?? 0;
    this.describe = options.describe ?? defaultDescription;
  }

  /** The same model and cache, for another trial (the runner makes one per cell). */
  forTrial(trial: number): CachedChatModel {
    return new CachedChatModel(this.inner, this.store, { trial, describe: this.describe });
  }

  async chat(request: ChatRequest): Promise<ChatResponse> {
    const key = requestKey({ model: this.inner.id, task: request.task, request: this.describe(request) });
    const hit = this.store.getChat(key, this.trial);
    if (hit !== undefined) {
      this.hits++;
      return hit.cut ? { text: hit.text, cached: true, cut: true } : { text: hit.text, cached: true };
    }
    this.misses++;
    const response = await this.inner.chat(request);
    this.store.putChat(key, this.trial, this.inner.id, response);
    return response;
  }
}

/**
 * Wraps an embedder with the cache, per text: only texts never seen go to the provider, in one call.
 * Embeddings are not per trial: a vector is a function of the text (there is no sampling to repeat).
 */
export class CachedEmbedder implements Embedder {
  readonly id: string;
  hits = 0;
  misses = 0;
  private cachedDimensions = 0;

  constructor(
    private readonly inner: Embedder,
    private readonly store: ResponseCache,
    private readonly parameters: Record<string, unknown> = {},
  ) {
    this.id = inner.id;
  }

  get dimensions(): number {
    return this.inner.dimensions || this.cachedDimensions;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const keys = texts.map((text) => requestKey({ model: this.inner.id, parameters: this.parameters, text }));
    const vectors = keys.map((key) => this.store.getEmbedding(key));
    const missing = [...new Set(keys.filter((_, index) => vectors[index] === undefined))];
    // A miss is a text sent to the provider; everything else (a repeat within the call too) is a hit.
    this.hits += texts.length - missing.length;
    this.misses += missing.length;
    if (missing.length > 0) {
      const firstIndex = new Map<string, number>();
      keys.forEach((key, index) => {
        if (!firstIndex.has(key)) firstIndex.set(key, index);
      });
      const fresh = await this.inner.embed(missing.map((key) => texts[firstIndex.get(key)!]!));
      const byKey = new Map(missing.map((key, index) => [key, fresh[index]!]));
      this.store.putEmbeddings(missing.map((key) => ({ key, model: this.inner.id, vector: byKey.get(key)! })));
      keys.forEach((key, index) => {
        vectors[index] ??= byKey.get(key);
      });
    }
    const result = vectors.map((vector) => vector!);
    if (result[0]) this.cachedDimensions = result[0].length;
    return result;
  }
}
