/**
 * What the `file-index` strategy shows the model: high-priority memories in full, the MEMORY.md
 * index lines of the rest within a token budget (the lines left out are reachable through
 * `recall_memory`), and the bodies recalled for the query.
 */
import { compareMemories, indexLine, MEMORY_SCOPES, type MemoryRecord } from './memory-format.js';

const PRIORITY_RANK = { high: 0, normal: 1, low: 2 } as const;

/** Higher priority first, then the latest updated, then index order: which memories matter most. */
export const byImportance = (a: MemoryRecord, b: MemoryRecord): number =>
  PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] ||
  (a.updated < b.updated ? 1 : a.updated > b.updated ? -1 : 0) ||
  compareMemories(a, b);

/** The index lines that fit a budget, in index order, and how many were left out. */
export interface BudgetedIndex {
  listed: MemoryRecord[];
  omitted: number;
}

/** The most important memories (byImportance) whose index lines fit `budget` tokens, so the index stays flat as memories grow. */
export function indexWithinBudget(
  records: readonly MemoryRecord[],
  budget: number,
  lineTokens: (record: MemoryRecord) => number,
): BudgetedIndex {
  const listed: MemoryRecord[] = [];
  let used = 0;
  for (const record of [...records].sort(byImportance)) {
    const tokens = lineTokens(record);
    if (used + tokens > budget) break;
    used += tokens;
    listed.push(record);
  }
  return { listed: listed.sort(compareMemories), omitted: records.length - listed.length };
}

// The name leads the body on one line, so no line holds the name alone (an extractive reader would quote it).
const shown = (record: MemoryRecord): string => `- ${record.name} (${record.type}, ${record.scope}): ${record.body}`;

/** The index's last line when lines were left out for the budget. */
export const omittedLine = (omitted: number): string =>
  `(${omitted} more ${omitted === 1 ? 'memory' : 'memories'} not listed: call recall_memory with a name or a topic)`;

/** The memory system message: high-priority memories in full, the index of the rest (within its budget), and the recalled bodies. */
export function renderContext(
  high: readonly MemoryRecord[],
  index: BudgetedIndex,
  recalled: readonly MemoryRecord[],
): string {
  const parts: string[] = [];
  if (high.length > 0) parts.push(['## Memories (high priority, always loaded)', ...high.map(shown)].join('\n'));
  if (index.listed.length + index.omitted > 0) {
    const lines = ['## Memory index (MEMORY.md): call recall_memory with a name to read that memory'];
    for (const scope of MEMORY_SCOPES) {
      const inScope = index.listed.filter((record) => record.scope === scope);
      if (inScope.length > 0) lines.push(`${scope}:`, ...inScope.map(indexLine));
    }
    if (index.omitted > 0) lines.push(omittedLine(index.omitted));
    parts.push(lines.join('\n'));
  }
  if (recalled.length > 0) parts.push(['## Recalled memories (recall_memory)', ...recalled.map(shown)].join('\n'));
  return parts.join('\n\n');
}
