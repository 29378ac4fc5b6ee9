/**
 * The on-disk format of `file-index` memories (docs/design.md §3): safe names and slugs, descriptions,
 * YAML front matter, the `MEMORY.md` index text, and an uncached audit of a scope dir that
 * checks docs/design.md §6 invariant 5. No locking or caching: the store in memory-files.ts adds those.
 */
import { isoInstant } from '../../harness/core/dates.js';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { z } from 'zod';
import { MembenchError } from '../../harness/core/errors.js';
import { collapseWhitespace, normalizeText, sentences, shortenText, slugify } from '../../harness/core/text.js';
import { memoryNameProblem, normalizedMemoryName } from '../../harness/scenarios/memory-name.js';

/** Front matter vocabularies (docs/design.md §3): what a memory is about, where it applies, how eagerly it is loaded. */

/**
 * yaml loads with the first memory file read or written, so a process of another strategy run
 * from source never loads it. The agent bundle imports it statically instead (scripts/bundle-agent.mjs),
 * so the agent processes' startup snapshot holds it evaluated and no process pays for it.
 */
let yamlModule: typeof Yaml | undefined;
const yaml = (): typeof Yaml => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

export const MEMORY_TYPES = ['user', 'feedback', 'project', 'reference'] as const;
export const MEMORY_SCOPES = ['global', 'project'] as const;
export const MEMORY_PRIORITIES = ['high', 'normal', 'low'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];
export type MemoryScope = (typeof MEMORY_SCOPES)[number];
export type MemoryPriority = (typeof MEMORY_PRIORITIES)[number];

/** Longest description kept in the index line. */
export const MAX_DESCRIPTION_CHARS = 150;
export { MAX_NAME_BYTES, MAX_NAME_CHARS, memoryNameProblem } from '../../harness/scenarios/memory-name.js';
/** The index file of a scope dir, and the folder of its memory files. */
export const INDEX_FILE = 'MEMORY.md';
export const MEMORIES_DIR = 'memories';

/** One memory as stored: front matter fields plus the Markdown body. */
export interface MemoryRecord {
  name: string;
  type: MemoryType;
  scope: MemoryScope;
  priority: MemoryPriority;
  /** ISO date or time after which the memory is left out of the index and of loads. */
  expires?: string;
  description: string;
  /** Incremented by every write of this memory (re-read under the lock, so no update is lost). */
  version: number;
  updated: string;
  /** Scenario step ids the memory was made from (a `remember` step, the exchanges auto-memory read), for retrieval metrics. */
  sources?: string[];
  body: string;
}

/** What a caller asks to store; the description is derived from the content when absent. */
export interface MemoryDraft {
  name: string;
  content: string;
  type: MemoryType;
  scope: MemoryScope;
  priority: MemoryPriority;
  description?: string;
  expires?: string;
  sources?: readonly string[];
}

const refuse = (message: string): MembenchError => new MembenchError('INVALID_ARGUMENT', message);
const codePoints = (text: string): number => Array.from(text).length;

/** Normalises a user or model supplied name (NFC, lower case, trimmed) and refuses unsafe ones. */
export function normalizeMemoryName(raw: string): string {
  const name = normalizedMemoryName(raw);
  const problem = memoryNameProblem(name);
  if (problem) throw refuse(problem);
  return name;
}

/**
 * A stable, safe name for content without one: the first characters of the normalised text
 * (letters and digits of any script, CJK included, runs of anything else become "-") plus a
 * short hash of the whole text, so the same content always maps to the same file.
 */
export function deriveMemoryName(content: string): string {
  const normalized = normalizeText(content);
  const hash = createHash('sha256').update(normalized).digest('hex').slice(0, 8);
  const slug = normalized.replace(/[^\p{L}\p{M}\p{N}]+/gu, '-').replace(/^[^\p{L}\p{N}]+/u, '');
  let cut = Array.from(slug).slice(0, 40).join('');
  if (cut.length < slug.length && slug[cut.length] !== '-' && cut.lastIndexOf('-') > 10)
    cut = cut.slice(0, cut.lastIndexOf('-'));
  cut = cut.replace(/-+$/u, '');
  return cut ? `${cut}-${hash}` : `memory-${hash}`;
}

/** The index description of content the caller did not describe: its first sentence, shortened. */
export function deriveDescription(content: string): string {
  const first = sentences(content)[0] ?? content;
  return shortenText(collapseWhitespace(first), MAX_DESCRIPTION_CHARS);
}

/** Validates a draft and turns it into the record to write: size budget, description, expiry, version. */
export function prepareMemory(
  draft: MemoryDraft,
  previousVersion: number,
  now: Date,
  maxMemoryBytes: number,
): MemoryRecord {
  const name = normalizeMemoryName(draft.name);
  const body = draft.content.trim();
  if (body.length === 0) throw refuse(`memory "${name}" refused: its content is empty`);
  const bytes = Buffer.byteLength(body);
  if (bytes > maxMemoryBytes)
    throw refuse(
      `memory "${name}" refused: its content is ${bytes} bytes; the limit is ${maxMemoryBytes} (maxMemoryBytes)`,
    );
  const given = draft.description && collapseWhitespace(draft.description);
  if (given && codePoints(given) > MAX_DESCRIPTION_CHARS) {
    throw refuse(
      `memory "${name}" refused: its description is ${codePoints(given)} characters; the limit is ${MAX_DESCRIPTION_CHARS}`,
    );
  }
  if (draft.expires !== undefined && isoInstant(draft.expires) === undefined) {
    throw refuse(`memory "${name}" refused: expires ${JSON.stringify(draft.expires)} is not an ISO date`);
  }
  return {
    name,
    type: draft.type,
    scope: draft.scope,
    priority: draft.priority,
    ...(draft.expires !== undefined ? { expires: draft.expires } : {}),
    description: given || deriveDescription(body),
    version: previousVersion + 1,
    updated: now.toISOString(),
    ...(draft.sources?.length ? { sources: [...draft.sources] } : {}),
    body,
  };
}

/** True once the memory's `expires` lies before `now`. */
export function isExpired(record: MemoryRecord, now: Date): boolean {
  return record.expires !== undefined && (isoInstant(record.expires) ?? Number.POSITIVE_INFINITY) < now.getTime();
}

/** The file text of a memory: YAML front matter, a blank line, the body. */
export function renderMemoryFile(record: MemoryRecord): string {
  const { body, ...front } = record;
  return `---\n${yaml().stringify(front, { lineWidth: 0 })}---\n\n${body}\n`;
}

const frontMatter = z.object({
  type: z.enum(MEMORY_TYPES).default('user'),
  priority: z.enum(MEMORY_PRIORITIES).default('normal'),
  expires: z
    .string()
    .refine((value) => isoInstant(value) !== undefined, 'expected an ISO date')
    .optional(),
  description: z.string().max(MAX_DESCRIPTION_CHARS).optional(),
  version: z.number().int().min(1).default(1),
  updated: z.string().default(''),
  sources: z.array(z.string()).optional(),
});

/** Parses a memory file; the file name and folder are authoritative for `name` and `scope`. Throws on a malformed file. */
export function parseMemoryFile(text: string, name: string, scope: MemoryScope): MemoryRecord {
  const normalized = text.replace(/\r\n/gu, '\n');
  if (!normalized.startsWith('---\n')) throw new Error(`${name}.md: missing front matter`);
  const end = normalized.indexOf('\n---\n', 3);
  if (end < 0) throw new Error(`${name}.md: front matter is not closed by "---"`);
  const parsed = frontMatter.safeParse(yaml().parse(normalized.slice(4, end)) ?? {});
  if (!parsed.success)
    throw new Error(
      `${name}.md: ${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    );
  const body = normalized.slice(end + 5).trim();
  if (body.length === 0) throw new Error(`${name}.md: empty body`);
  const { description, expires, sources, ...rest } = parsed.data;
  return {
    name,
    scope,
    ...rest,
    ...(expires !== undefined ? { expires } : {}),
    ...(sources?.length ? { sources } : {}),
    description: (description && collapseWhitespace(description)) || deriveDescription(body),
    body,
  };
}

const PRIORITY_RANK: Record<MemoryPriority, number> = { high: 0, normal: 1, low: 2 };

/** Index order: grouped by type, high priority first, then by name. */
export function compareMemories(a: MemoryRecord, b: MemoryRecord): number {
  return (
    MEMORY_TYPES.indexOf(a.type) - MEMORY_TYPES.indexOf(b.type) ||
    PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] ||
    (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}

/** One index line: what the model sees before it decides to call recall_memory. */
export function indexLine(record: MemoryRecord): string {
  return `- [${record.name}](${MEMORIES_DIR}/${record.name}.md) — ${record.description}`;
}

/** The text of `MEMORY.md` for the given live memories. */
export function renderIndex(scope: MemoryScope, records: readonly MemoryRecord[]): string {
  const lines = [
    `# Memory index (${scope})`,
    '',
    '<!-- Rebuilt by membench after every change: one line per live memory. -->',
  ];
  let type: MemoryType | undefined;
  for (const record of [...records].sort(compareMemories)) {
    if (record.type !== type) lines.push('', `## ${record.type}`);
    type = record.type;
    lines.push(indexLine(record));
  }
  return `${lines.join('\n')}\n`;
}

/** Names and descriptions listed in a `MEMORY.md` text. */
export function parseIndex(text: string): Map<string, string> {
  const entries = new Map<string, string>();
  for (const match of text.matchAll(/^- \[([^\]\n]+)\]\(memories\/[^)\n]+\.md\) — (.*)$/gmu))
    entries.set(match[1]!, match[2]!);
  return entries;
}

/** Reads a file without following a symlink at its last component (O_NOFOLLOW where the platform has it). */
export async function readFileNoFollow(file: string): Promise<string> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      throw refuse(`${file} is a symbolic link; memory files must be regular files`);
    throw error;
  }
  try {
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** What a scope dir holds: live memory files, index entries, and files that do not parse (torn or hand-broken). */
export interface ScopeAudit {
  files: Map<string, string>;
  indexed: Map<string, string>;
  unreadable: string[];
  /** One line per memory the index and the files disagree about. */
  mismatches: string[];
  /** docs/design.md §6 invariant 5: the index lists exactly the live files, with their descriptions, and no file is torn. */
  agrees: boolean;
}

/** Reads a scope dir from scratch (no cache) to check invariant 5 after crashes or concurrent writers. */
export async function auditScopeDir(scopeDir: string, scope: MemoryScope, now: Date): Promise<ScopeAudit> {
  const names = await readdir(path.join(scopeDir, MEMORIES_DIR)).catch(() => [] as string[]);
  const files = new Map<string, string>();
  const unreadable: string[] = [];
  for (const file of names.filter((name) => name.endsWith('.md') && !name.startsWith('.'))) {
    try {
      const record = parseMemoryFile(
        await readFileNoFollow(path.join(scopeDir, MEMORIES_DIR, file)),
        file.slice(0, -3),
        scope,
      );
      if (!isExpired(record, now)) files.set(record.name, record.description);
    } catch {
      unreadable.push(file);
    }
  }
  const indexed = parseIndex(await readFileNoFollow(path.join(scopeDir, INDEX_FILE)).catch(() => ''));
  const mismatches = [
    ...[...files]
      .filter(([name, description]) => indexed.get(name) !== description)
      .map(
        ([name]) =>
          `${name}: ${indexed.has(name) ? 'index line differs from the file' : 'file missing from the index'}`,
      ),
    ...[...indexed.keys()].filter((name) => !files.has(name)).map((name) => `${name}: indexed but no live file`),
  ];
  return { files, indexed, unreadable, mismatches, agrees: unreadable.length === 0 && mismatches.length === 0 };
}

/** A safe memory name made from free text (a topic, or a model's loose name), or undefined when none can be. */
export function slugifyName(text: string): string | undefined {
  const slug = slugify(text);
  return slug && !memoryNameProblem(slug) ? slug : undefined;
}

/** A memory proposed by the `extract-memories` model task, made safe to write. */
export interface ExtractedMemory {
  name: string;
  description: string;
  content: string;
  type: MemoryType;
}

/**
 * Reads the model's JSON array of memories (possibly wrapped in prose or a code fence). Model
 * output is never trusted: names are normalised or slugified (derived from the content when
 * unusable), descriptions shortened to 150 characters, oversized or empty content dropped.
 */
export function parseExtractedMemories(text: string, maxMemoryBytes: number, maxItems = 8): ExtractedMemory[] {
  let items: unknown;
  try {
    items = JSON.parse(text.slice(text.indexOf('['), text.lastIndexOf(']') + 1));
  } catch {
    return [];
  }
  if (!Array.isArray(items)) return [];
  const out = new Map<string, ExtractedMemory>();
  for (const item of items as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { name, description, content, type } = item as Record<string, unknown>;
    if (typeof content !== 'string' || !content.trim() || Buffer.byteLength(content.trim()) > maxMemoryBytes) continue;
    const raw = typeof name === 'string' ? name.normalize('NFC').trim().toLowerCase() : '';
    const safe = raw && !memoryNameProblem(raw) ? raw : (slugifyName(raw) ?? deriveMemoryName(content));
    const oneLine = typeof description === 'string' ? collapseWhitespace(description) : '';
    out.set(safe, {
      name: safe,
      description: oneLine ? shortenText(oneLine, MAX_DESCRIPTION_CHARS) : deriveDescription(content),
      content: content.trim(),
      type: MEMORY_TYPES.includes(type as MemoryType) ? (type as MemoryType) : 'user',
    });
    if (out.size >= maxItems) break;
  }
  return [...out.values()];
}
