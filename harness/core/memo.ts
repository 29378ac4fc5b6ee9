/** One memo for the pure functions of a string that hot paths call again and again. */

/**
 * The budgets of the process's memos, in characters of key. A LongMemEval_S question's haystack is
 * about 0.5 M characters: a budget holds a cell's working set many times over, and all of them
 * together keep a pool worker that runs a thousand such cells under a gigabyte.
 */
export const MEMO_CHARS = {
  /** Memos keyed by whole messages (their terms, their normal form). */
  messages: 8_000_000,
  /** Memos keyed by sentences and short texts (a summary's facts, entities, normal forms, token counts of a part). */
  sentences: 4_000_000,
} as const;

/**
 * `compute` memoised by its argument, its keys holding at most `maxChars` characters in all: the
 * memo is cleared when full (cheaper than tracking recency, and these workloads revisit a bounded
 * working set). A budget in characters, not entries: the keys are anything from a word to a
 * whole message, and what is kept for a key (its terms, its normal form) grows with it, so a
 * count of entries bounds nothing (a pool worker running a thousand LongMemEval_S questions grew
 * by a gigabyte under a 200,000-entry limit). A key longer than the budget is computed, not kept.
 */
export function boundedMemo<T>(maxChars: number, compute: (key: string) => T): (key: string) => T {
  const memo = new Map<string, T>();
  let chars = 0;
  return (key) => {
    let value = memo.get(key);
    if (value === undefined) {
      value = compute(key);
      if (key.length > maxChars) return value;
      if (chars + key.length > maxChars) {
        memo.clear();
        chars = 0;
      }
      memo.set(key, value);
      chars += key.length;
    }
    return value;
  };
}

/**
 * `compute` memoised by its argument's identity, for what is derived from a whole scenario's steps
 * (its sessions, its evidence): the cells of one scenario in one process share the same steps, so
 * each derives it once. The argument must not change after the first call; nothing keeps it alive.
 */
export function memoByIdentity<K extends object, T>(compute: (key: K) => T): (key: K) => T {
  const memo = new WeakMap<K, { value: T }>();
  return (key) => {
    let entry = memo.get(key);
    if (entry === undefined) {
      entry = { value: compute(key) };
      memo.set(key, entry);
    }
    return entry.value;
  };
}
