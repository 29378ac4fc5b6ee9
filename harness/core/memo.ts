/** One memo for the pure functions of a string that hot paths call again and again. */

/**
 * `compute` memoised by its argument, at most `limit` results kept: the memo is cleared when full
 * (cheaper than tracking recency, and these workloads revisit a bounded working set).
 */
export function boundedMemo<T>(limit: number, compute: (key: string) => T): (key: string) => T {
  const memo = new Map<string, T>();
  return (key) => {
    let value = memo.get(key);
    if (value === undefined) {
      value = compute(key);
      if (memo.size >= limit) memo.clear();
      memo.set(key, value);
    }
    return value;
  };
}
