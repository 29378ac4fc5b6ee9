/** Counts in messages and reports, in the number they take: "1 question", "3 questions". */

/** `n` and the noun, singular for 1 (the plural given without its final "s": "QA items" → "1 QA item"). */
export function counted(n: number, plural: string): string {
  return `${n} ${n === 1 ? plural.replace(/s$/u, '') : plural}`;
}
