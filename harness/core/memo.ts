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
 * `compute` memoised by its argument, its keys holding at most `maxChars` characters in all, in two
 * generations of half the budget each: new keys go to the recent one; when it is full it becomes the
 * older one and the older one is dropped; a key found in the older one is kept again in the recent
 * one. What is used all the time (a language's common words and their token counts) so outlives
 * every turnover, and what was not used for a whole generation goes. (Clearing the whole memo when
 * full, as it did, cost the cell after each clear as much as a cold worker's first cell: up to 5× the
 * median on a LongMemEval_S-shaped file.) A budget in characters, not entries: the keys are anything
 * from a word to a whole message, and what is kept for a key (its terms, its normal form) grows with
 * it, so a count of entries bounds nothing (a pool worker running a thousand LongMemEval_S questions
 * grew by a gigabyte under a 200,000-entry limit). A key longer than half the budget is computed,
 * not kept.
 */
export function boundedMemo<T>(maxChars: number, compute: (key: string) => T): (key: string) => T {
  const generationChars = maxChars / 2;
  let recent = new Map<string, T>();
  let older = new Map<string, T>();
  let chars = 0;
  const keep = (key: string, value: T): void => {
    if (chars + key.length > generationChars) {
      older = recent;
      recent = new Map();
      chars = 0;
    }
    recent.set(key, value);
    chars += key.length;
  };
  return (key) => {
    let value = recent.get(key);
    if (value !== undefined) return value;
    // Kept as a copy of its own, and computed from it: the key may be a slice of a far larger string.
    const own = key.length > generationChars ? key : ownCopy(key);
    value = older.get(key);
    if (value === undefined) {
      value = compute(own);
      if (key.length > generationChars) return value;
    }
    keep(own, value);
    return value;
  };
}

/**
 * `text` as a string of its own. A string cut out of a larger one (`slice`, `split`, a regex
 * match, the values a YAML parser reads out of a file's text) is a view that keeps all of that
 * larger string alive: a memo keyed by a message of a scenario file kept the whole file (a
 * LongMemEval_M question's, ~6.6 MB) as long as the key stayed. Prepending a character makes V8
 * copy the characters into a new string (to flatten the pair), of which the result is the view.
 */
export function ownCopy(text: string): string {
  return ` ${text}`.slice(1);
}

/**
 * `compute` memoised for the last argument it was called with (by `===`: an object by identity, a
 * string by value), for what is derived from a whole scenario's steps (its sessions, its evidence):
 * a run in one process plays a scenario's cells one after another on the same steps, so each
 * derives it once, and only one scenario's is kept at a time (a run of 500 questions would
 * otherwise hold all of theirs); and for what consecutive calls share (a session's date note). An
 * object argument must not change after the first call.
 */
export function memoLast<K, T>(compute: (key: K) => T): (key: K) => T {
  let last: { key: K; value: T } | undefined;
  return (key) => {
    if (last?.key !== key) last = { key, value: compute(key) };
    return last.value;
  };
}
