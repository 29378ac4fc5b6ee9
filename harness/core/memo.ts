/** One memo for the pure functions of a string that hot paths call again and again. */

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
