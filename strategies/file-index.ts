/**
 * `file-index`: explicit memories as Markdown files behind a `MEMORY.md` index (Reasonix memory,
 * Hermes `MEMORY.md`/`USER.md`, Claude Code auto-memory). High-priority memories are injected in
 * full; the rest appear as index lines the model can open with `recall_memory`. Offline, that
 * call is emulated: the `recallTopK` memories that best match the query are loaded too (and
 * counted in `recalls`). A short window of recent messages comes along from a SQLite history.
 *
 * Automatic memory (`autoMemory`, on by default, like Claude Code's auto-memory): after each
 * completed exchange one `extract-memories` model call (maintenance) gets the user's message(s),
 * the MEMORY.md index lines and the bodies of the few memories related to them, and returns the
 * durable facts as memories; each is written like `remember` (locked, re-read, atomic, indexed).
 * A correction reuses the existing memory's name, so it replaces the old value instead of
 * contradicting it. A cursor file (`auto-memory.json`) records the last extracted reply, so an
 * exchange whose extraction a crash interrupted is extracted when the strategy reopens.
 *
 * Refusals (unsafe names, oversized content, descriptions over 150 characters, symlinked files)
 * throw a MembenchError with code INVALID_ARGUMENT and a message meant for the user; nothing
 * is written. Durability: `sync` acknowledges a memory only after its file and the index are
 * fsynced; `async` does the same for memories (a memory write is already one locked, atomic
 * operation) and writes recent messages behind; `exit` keeps changes in memory and writes them
 * on close; `none` never touches the disk.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { SystemMessage, type AIMessage, type BaseMessage } from '@langchain/core/messages';
import { z } from 'zod';
import { MembenchError } from '../harness/core/errors.js';
import { replaceDerivedFile, writeHeldReplacement } from '../harness/core/fs.js';
import { SqliteChatMessageHistory } from './stores/history.js';
import { MemoryFileStore } from './stores/memory-files.js';
import {
  auditScopeDir,
  compareMemories,
  deriveMemoryName,
  INDEX_FILE,
  indexLine,
  isExpired,
  MEMORIES_DIR,
  MEMORY_SCOPES,
  memoryNameProblem,
  normalizeMemoryName,
  parseExtractedMemories,
  prepareMemory,
  type MemoryDraft,
  type MemoryRecord,
  type MemoryScope,
  type MemoryType,
} from './stores/memory-format.js';
import {
  byImportance,
  indexWithinBudget,
  omittedLine,
  renderContext,
  type BudgetedIndex,
} from './stores/memory-context.js';
import { extractMemoriesPrompt } from '../harness/core/prompts.js';
import { matchTerms, normalizeText, sentences, shortenText } from '../harness/core/text.js';
import { messageText } from '../harness/core/tokens.js';
import { windowStart } from './shared/trimming.js';
import {
  defineStrategy,
  type LoadInput,
  type LoadResult,
  type MemoryEvent,
  type MemoryItem,
  type MemoryStrategy,
  type RememberAck,
  type StoreCheck,
  type StrategyContext,
} from './types.js';

const booleanKnob = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);

/** The knobs users tune with `--param file-index.KEY=V` (`tune` sweeps recallTopK and recentExchanges). */
export const fileIndexOptions = z
  .object({
    /** Dir of memories shared across projects, relative to the strategy dir or absolute (default `global`). */
    globalDir: z.string().min(1).optional(),
    /** Dir of this project's memories, relative to the strategy dir or absolute (default `project`). */
    projectDir: z.string().min(1).optional(),
    /** Largest memory body accepted, in UTF-8 bytes; larger ones are refused. */
    maxMemoryBytes: z.coerce.number().int().min(1).default(4096),
    /** Non-high memories loaded in full per query, emulating the model calling recall_memory. */
    recallTopK: z.coerce.number().int().min(0).default(2),
    /**
     * Tokens of MEMORY.md index lines shown in the context and the extraction prompt, so both stay
     * flat as memories grow: the most important lines (priority, then the latest updated) are
     * listed, the rest are reachable through `recall_memory`.
     */
    indexTokens: z.coerce.number().int().min(0).default(1000),
    /** Completed exchanges of raw conversation kept besides the memories (the current user message always comes along). */
    recentExchanges: z.coerce.number().int().min(0).default(1),
    /** Delete expired memory files when an index is rebuilt (default false; they are never loaded either way). */
    pruneExpired: booleanKnob.optional(),
    /** Extract durable facts from each completed exchange into memories (one maintenance call per exchange). */
    autoMemory: booleanKnob.default(true),
  })
  .strict();
export type FileIndexOptions = z.output<typeof fileIndexOptions>;

/** What a direct caller (a test, a tool call) may add to an agent loop's MemoryItem. */
export interface FileMemoryItem extends MemoryItem {
  description?: string;
  /** ISO date after which the memory is no longer loaded. */
  expires?: string;
}

/** The acknowledgement of a write: where the memory went and its version after the write. */
export interface FileMemoryAck extends RememberAck {
  scope: MemoryScope;
  version: number;
}

/** Where a new memory goes when the caller names no scope: facts about the user travel across projects. */
const DEFAULT_SCOPE: Record<MemoryType, MemoryScope> = {
  user: 'global',
  feedback: 'global',
  project: 'project',
  reference: 'project',
};
const keyOf = (scope: MemoryScope, name: string): string => `${scope}/${name}`;
const isHuman = (message: BaseMessage): boolean => message.getType() === 'human';
const isFinalReply = (message: BaseMessage): boolean =>
  message.getType() === 'ai' && ((message as AIMessage).tool_calls ?? []).length === 0;
/** The cursor of automatic memory: messages up to this index have been extracted. */
const CURSOR_FILE = 'auto-memory.json';
/** How many related bodies (so an addition keeps what a memory says) and reply characters an extraction call sees. */
const RELATED_BODIES = 3;
const REPLY_CHARS = 120;

/** Exported so tests and tools can reach `recallMemory` and the store's counters. */
export class FileIndexStrategy implements MemoryStrategy {
  readonly capabilities = { persistent: true, explicitMemory: true, backgroundWork: false };
  /** Memory bodies read on demand: `recallMemory` calls plus the emulated recalls of `load`. */
  recalls = 0;
  /** Memories written (created or changed) by automatic extraction. */
  autoMemories = 0;
  /** The files on disk; absent in durability mode `none`. */
  readonly store: MemoryFileStore | undefined;
  /** Changes not yet on disk (`exit` and `none` modes): a record, or null for a deletion. */
  private readonly pending = new Map<string, MemoryRecord | null>();
  private readonly history: SqliteChatMessageHistory;
  private readonly humanAt: number[] = [];
  /** The last final reply in the history, and the first message not yet extracted (the cursor). */
  private lastReplyAt = -1;
  private extractedThrough = 0;
  private readonly termsOf = new WeakMap<MemoryRecord, ReadonlySet<string>>();
  /** Scenario step ids of history messages saved in this session (auto-memory records where a memory came from). */
  private readonly stepIdAt = new Map<number, string>();
  /** Tokens of each record's index line (records are replaced, never changed, so the count holds). */
  private readonly lineTokens = new WeakMap<MemoryRecord, number>();
  private lastContext: SystemMessage | undefined;

  constructor(
    private readonly context: StrategyContext,
    private readonly options: FileIndexOptions,
  ) {
    this.history = new SqliteChatMessageHistory({ dir: context.dir, durability: context.durability });
    if (context.durability !== 'none') {
      this.store = new MemoryFileStore({
        dirs: {
          global: path.resolve(context.dir, options.globalDir ?? 'global'),
          project: path.resolve(context.dir, options.projectDir ?? 'project'),
        },
        maxMemoryBytes: options.maxMemoryBytes,
        now: context.now,
        pruneExpired: options.pruneExpired ?? false,
        afterMemoryFile: () => context.checkpoint?.('mid_memory_write'),
      });
    }
  }

  /** Memory writes go straight to disk (`sync`, `async`) or wait in `pending` (`exit`, `none`). */
  private get writesThrough(): boolean {
    return this.context.durability === 'sync' || this.context.durability === 'async';
  }

  async open(): Promise<void> {
    this.history.open();
    this.humanAt.length = 0;
    this.lastReplyAt = -1;
    this.history.messages.forEach((message, index) => {
      if (isHuman(message)) this.humanAt.push(index);
      if (isFinalReply(message)) this.lastReplyAt = index;
    });
    await this.store?.open();
    if (!this.options.autoMemory) return;
    this.extractedThrough = await this.readCursor();
    // A crash between a reply and the end of its extraction (or before a replay's held cursor was
    // written): extract every exchange after the cursor now, in order.
    const messages = this.history.messages;
    const due: number[] = [];
    for (let index = this.extractedThrough; index < messages.length; index++)
      if (isFinalReply(messages[index]!)) due.push(index);
    if (due.length === 0) return;
    this.lastReplyAt = messages.slice(0, this.extractedThrough).findLastIndex(isFinalReply);
    for (const replyAt of due) await this.extractExchange(replyAt);
  }

  async save(event: MemoryEvent): Promise<void> {
    const index = this.history.messages.length;
    if (isHuman(event.message)) this.humanAt.push(index);
    if (event.stepId !== undefined) this.stepIdAt.set(index, event.stepId);
    await this.history.addMessage(event.message);
    if (!isFinalReply(event.message)) return;
    if (this.options.autoMemory) await this.extractExchange(index);
    else this.lastReplyAt = index;
  }

  async load(input: LoadInput): Promise<LoadResult> {
    await this.store?.refresh();
    const now = this.context.now();
    const live = this.memories()
      .filter((record) => !isExpired(record, now))
      .sort(compareMemories);
    const high = live.filter((record) => record.priority === 'high');
    const rest = live.filter((record) => record.priority !== 'high');
    const recalled = this.bestMatches(rest, input.query, this.options.recallTopK);
    this.recalls += recalled.length;
    const recent = this.recentMessages();
    // Asked for a ranking (a probe): every live memory, high priority too, ranked as recall_memory would rank it.
    const ranking =
      input.rankDepth === undefined
        ? {}
        : {
            retrieved: this.rankMemories(live, input.query, Math.max(this.options.recallTopK, input.rankDepth)).map(
              ({ record, score }) => ({ stepIds: record.sources ?? [], score }),
            ),
          };
    const text = renderContext(high, this.indexWithinBudget(rest), recalled);
    if (!text) return { messages: recent, ...ranking };
    // The same object while nothing changed, so the token counter's per-message cache keeps working.
    if (this.lastContext?.content !== text) this.lastContext = new SystemMessage(text);
    return { messages: [this.lastContext, ...recent], ...ranking };
  }

  /**
   * Writes or updates a memory; unspecified fields of an existing memory of that name are kept.
   * `derivedFrom` adds the step ids of the exchange an automatic memory was read from.
   */
  async remember(item: FileMemoryItem, derivedFrom: readonly string[] = []): Promise<FileMemoryAck> {
    const name = item.name !== undefined ? normalizeMemoryName(item.name) : deriveMemoryName(item.content);
    await this.store?.refresh();
    const existing = this.find(name, item.scope);
    const type = item.type ?? existing?.type ?? 'user';
    const draft: MemoryDraft = {
      name,
      content: item.content,
      type,
      scope: item.scope ?? existing?.scope ?? DEFAULT_SCOPE[type],
      priority: item.priority ?? existing?.priority ?? 'normal',
      ...(item.description !== undefined ? { description: item.description } : {}),
      ...(item.expires !== undefined ? { expires: item.expires } : {}),
      sources: [
        ...new Set([...(existing?.sources ?? []), ...(item.stepId !== undefined ? [item.stepId] : []), ...derivedFrom]),
      ],
    };
    if (this.writesThrough) {
      const record = await this.store!.write(draft);
      return { name, scope: record.scope, version: record.version };
    }
    const previous = this.find(name, draft.scope);
    const record = prepareMemory(draft, previous?.version ?? 0, this.context.now(), this.options.maxMemoryBytes);
    this.pending.set(keyOf(record.scope, name), record);
    return { name, scope: record.scope, version: record.version };
  }

  /**
   * Drops memories by name (in both scopes), else those whose content derives the same name,
   * else every memory whose body contains the text. False when nothing matched.
   */
  async forget(nameOrContent: string): Promise<boolean> {
    await this.store?.refresh();
    const all = this.memories();
    const asName = nameOrContent.normalize('NFC').trim().toLowerCase();
    const names = new Set([deriveMemoryName(nameOrContent), ...(memoryNameProblem(asName) ? [] : [asName])]);
    let targets = all.filter((record) => names.has(record.name));
    const needle = normalizeText(nameOrContent);
    if (targets.length === 0 && needle) targets = all.filter((record) => normalizeText(record.body).includes(needle));
    for (const record of targets) {
      if (this.writesThrough) await this.store!.remove(record.scope, record.name);
      else this.pending.set(keyOf(record.scope, record.name), null);
    }
    return targets.length > 0;
  }

  /** The `recall_memory` tool: a memory's full body (project scope first), or undefined when there is none. */
  async recallMemory(name: string): Promise<string | undefined> {
    const normalized = normalizeMemoryName(name);
    await this.store?.refresh();
    const record = this.find(normalized);
    if (!record || isExpired(record, this.context.now())) return undefined;
    this.recalls++;
    return record.body;
  }

  async flush(): Promise<void> {
    await this.history.flush();
  }

  /** What is persisted, for the durability checks: the messages and every memory (name and body). */
  async snapshot(): Promise<string[]> {
    await this.store?.refresh();
    return [
      ...this.history.messages.map(messageText),
      ...this.memories().map((record) => `${record.name}: ${record.body}`),
    ];
  }

  /** Memory files skipped because they do not parse (or are links, or badly named), relative to the strategy's dir where inside it. */
  unreadable(): string[] {
    return [...(this.store?.problems ?? [])].map(
      ([file, reason]) =>
        `${path.relative(this.context.dir, file).startsWith('..') ? file : path.relative(this.context.dir, file)}: ${reason}`,
    );
  }

  /**
   * Invariant 5, read from disk without the cache: no torn memory file, and MEMORY.md matches the
   * files. A file deleted behind the store's back, which it dropped from the index, counts as a
   * mismatch too (the index and the files disagreed until then).
   */
  async verify(): Promise<StoreCheck> {
    const check: StoreCheck = { torn: 0, indexMismatches: 0, details: [] };
    if (!this.store) return check;
    for (const scope of MEMORY_SCOPES) {
      const audit = await auditScopeDir(this.store.dirs[scope], scope, this.context.now());
      check.torn += audit.unreadable.length;
      check.indexMismatches += audit.mismatches.length;
      check.details.push(
        ...audit.unreadable.map((file) => `${scope}/${MEMORIES_DIR}/${file}: does not parse`),
        ...audit.mismatches.map((line) => `${scope}/${INDEX_FILE}: ${line}`),
      );
      for (const [file, reason] of this.store.problems) {
        const name = path.basename(file, '.md');
        if (
          !reason.startsWith('missing: ') ||
          path.dirname(file) !== path.join(this.store.dirs[scope], MEMORIES_DIR) ||
          audit.indexed.has(name)
        )
          continue;
        check.indexMismatches++;
        check.details.push(`${scope}/${MEMORIES_DIR}/${name}.md: ${reason}`);
      }
    }
    return check;
  }

  /**
   * Mode `sync`: the history, the memory files and the extraction cursor in process are what is on
   * disk; the step ids of this session's messages are forgotten, as a reopen forgets them
   * (MemoryStrategy.newSession).
   */
  async newSession(): Promise<boolean> {
    if (this.context.durability !== 'sync') return false;
    this.stepIdAt.clear();
    return true;
  }

  /** Persists what `exit` mode kept back (memories, then messages); refusals are reported together. */
  async close(): Promise<void> {
    const problems: string[] = [];
    if (this.context.durability === 'exit' && this.store) {
      for (const [key, record] of this.pending) {
        const [scope, name] = key.split('/') as [MemoryScope, string];
        try {
          if (record)
            await this.store.write({
              name,
              content: record.body,
              type: record.type,
              scope,
              priority: record.priority,
              description: record.description,
              ...(record.expires !== undefined ? { expires: record.expires } : {}),
              ...(record.sources ? { sources: record.sources } : {}),
            });
          else await this.store.remove(scope, name);
        } catch (error) {
          problems.push((error as Error).message);
        }
      }
    }
    this.pending.clear();
    if (this.context.durability === 'exit' && this.options.autoMemory) await this.writeCursor();
    writeHeldReplacement(this.cursorFile);
    await this.history.close();
    this.store?.close();
    if (problems.length > 0)
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `${problems.length} memories could not be written on close`,
        problems,
      );
  }

  /**
   * Automatic memory for the exchange ending with the reply at `replyAt`: one model call with the
   * user's message(s), the index lines and a few related bodies; every proposed memory that
   * changes something is written like `remember` (unchanged ones are skipped, so a re-extraction
   * after a crash bumps no version). Refused proposals are dropped; crashes and I/O errors are not.
   */
  private async extractExchange(replyAt: number): Promise<void> {
    const messages = this.history.messages;
    const userMessages = messages
      .slice(this.lastReplyAt + 1, replyAt)
      .filter(isHuman)
      .map(messageText)
      .filter((text) => text.trim().length > 0);
    const stepIds: string[] = [];
    for (let index = this.lastReplyAt + 1; index <= replyAt; index++) {
      const stepId = this.stepIdAt.get(index);
      if (stepId !== undefined && !stepIds.includes(stepId)) stepIds.push(stepId);
    }
    this.lastReplyAt = replyAt;
    if (userMessages.length > 0) {
      await this.store?.refresh();
      const now = this.context.now();
      const live = this.memories()
        .filter((record) => !isExpired(record, now))
        .sort(compareMemories);
      // A body the index line already shows in full is not repeated.
      const related = this.bestMatches(live, userMessages.join('\n'), RELATED_BODIES)
        .filter((record) => !normalizeText(record.description).includes(normalizeText(record.body)))
        .map((record) => ({ name: record.name, body: record.body }));
      const { listed, omitted } = this.indexWithinBudget(live);
      const indexLines = [...listed.map(indexLine), ...(omitted > 0 ? [omittedLine(omitted)] : [])];
      const prompt = extractMemoriesPrompt({
        indexLines,
        related,
        userMessages,
        reply: shortenText(sentences(messageText(messages[replyAt]!))[0] ?? '', REPLY_CHARS),
      });
      const response = await this.context.model.chat({
        task: 'extract-memories',
        messages: prompt,
        maxOutputTokens: 500,
      });
      for (const memory of parseExtractedMemories(response.text, this.options.maxMemoryBytes)) {
        const existing = this.find(memory.name);
        if (existing && normalizeText(existing.body) === normalizeText(memory.content)) continue;
        try {
          await this.remember(memory, stepIds);
          this.autoMemories++;
        } catch (error) {
          if (!(error instanceof MembenchError)) throw error;
        }
      }
    }
    this.extractedThrough = replyAt + 1;
    if (this.writesThrough) await this.writeCursor();
  }

  private async readCursor(): Promise<number> {
    if (this.context.durability === 'none') return this.extractedThrough;
    // Missing or unreadable: the last exchange is extracted again, which rewrites nothing unchanged.
    writeHeldReplacement(this.cursorFile);
    const text = await readFile(this.cursorFile, 'utf8').catch(() => '');
    return Math.min(Number(/"through":\s*(\d+)/u.exec(text)?.[1] ?? 0), this.history.messages.length);
  }

  /**
   * Atomic but not fsynced, and inside a replay's durable batch written once at its end: a cursor
   * left behind (a power cut, a crash inside a batch) only makes the exchanges after it be
   * extracted again on open, which rewrites nothing unchanged.
   */
  private async writeCursor(): Promise<void> {
    replaceDerivedFile(this.cursorFile, `${JSON.stringify({ through: this.extractedThrough })}\n`);
  }

  private get cursorFile(): string {
    return path.join(this.context.dir, CURSOR_FILE);
  }

  /** The store's memories with this session's unwritten changes applied. */
  private memories(): MemoryRecord[] {
    const base = this.store?.all() ?? [];
    if (this.pending.size === 0) return base;
    const merged = new Map(base.map((record) => [keyOf(record.scope, record.name), record]));
    for (const [key, record] of this.pending) {
      if (record) merged.set(key, record);
      else merged.delete(key);
    }
    return [...merged.values()];
  }

  private find(name: string, scope?: MemoryScope): MemoryRecord | undefined {
    const candidates = this.memories().filter((record) => record.name === name);
    for (const wanted of scope ? [scope] : [...MEMORY_SCOPES].reverse()) {
      const found = candidates.find((record) => record.scope === wanted);
      if (found) return found;
    }
    return undefined;
  }

  /** The index lines within `indexTokens` (token counts cached per record). */
  private indexWithinBudget(records: readonly MemoryRecord[]): BudgetedIndex {
    return indexWithinBudget(records, this.options.indexTokens, (record) => {
      let tokens = this.lineTokens.get(record);
      if (tokens === undefined)
        this.lineTokens.set(record, (tokens = this.context.tokens.countText(indexLine(record))));
      return tokens;
    });
  }
  private bestMatches(records: readonly MemoryRecord[], query: string, k: number): MemoryRecord[] {
    return this.rankMemories(records, query, k).map((entry) => entry.record);
  }

  /** Term overlap with the query (rarer, longer terms weigh more), computed on terms cached per record; the best `k`, with their scores. */
  private rankMemories(
    records: readonly MemoryRecord[],
    query: string,
    k: number,
  ): { record: MemoryRecord; score: number }[] {
    if (k === 0) return [];
    const queryTerms = new Set(matchTerms(query));
    if (queryTerms.size === 0) return [];
    const scored: { record: MemoryRecord; score: number }[] = [];
    for (const record of records) {
      let terms = this.termsOf.get(record);
      if (!terms) {
        terms = new Set(matchTerms(`${record.name.replace(/[-_.]/gu, ' ')} ${record.description} ${record.body}`));
        this.termsOf.set(record, terms);
      }
      let score = 0;
      for (const term of queryTerms) if (terms.has(term)) score += 1 + Math.min(term.length, 8) / 8;
      if (score > 0) scored.push({ record, score });
    }
    scored.sort((a, b) => b.score - a.score || byImportance(a.record, b.record));
    return scored.slice(0, k);
  }

  /** The last `recentExchanges` completed exchanges, plus the current user message when it has no reply yet. */
  private recentMessages(): BaseMessage[] {
    const messages = this.history.messages;
    const last = messages[messages.length - 1];
    const exchanges = this.options.recentExchanges + (last && isHuman(last) ? 1 : 0);
    if (exchanges === 0) return [];
    return messages.slice(windowStart(messages, this.humanAt, exchanges));
  }
}

/** The registry entry (`file-index` on the CLI). */
export const fileIndex = defineStrategy({
  name: 'file-index',
  kind: 'extraction',
  storage: 'files',
  description: 'Markdown memory files behind a MEMORY.md index; high priority in full, the rest recalled on demand',
  options: fileIndexOptions,
  defaultDurability: 'sync',
  keepsVerbatim: false,
  crashPoints: ['mid_memory_write'],
  create: (context, options) => new FileIndexStrategy(context, options),
});
