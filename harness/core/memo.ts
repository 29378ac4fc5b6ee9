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
 * `compute` memoised for the last argument it was called with (by identity), for what is derived
 * from a whole scenario's steps (its sessions, its evidence): a run in one process plays a
 * scenario's cells one after another on the same steps, so each derives it once, and only one
 * scenario's is kept at a time (a run of 500 questions would otherwise hold all of theirs). The
 * argument must not change after the first call.
 */
export function memoLast<K extends object, T>(compute: (key: K) => T): (key: K) => T {
  let last: { key: K; value: T } | undefined;
  return (key) => {
    if (last?.key !== key) last = { key, value: compute(key) };
    return last.value;
  };
}
