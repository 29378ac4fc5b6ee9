/** The judge gate's fixed share, apart from the judges so the flag table (run/settings.ts) can name it without loading them. */

/** The share of a judge's replies that may be unreadable (neither yes nor no) before its accuracy stops being a measurement. */
export const MAX_UNPARSED_SHARE = 0.2;
