/**
 * ISO 8601 dates as scenario files, generator specs and memory files write them, read strictly:
 * `Date.parse` took "peanut 7" for July 2001, "1" for 2001, rolled 2025-02-30 into March, and read
 * a date-time without a zone in the machine's own time zone (the same file scored differently
 * under another TZ). Here a date is `YYYY-MM-DD`, a date-time adds `THH:MM`, `:SS` and a fraction
 * (a space in place of `T` too), the zone is `Z` or `±HH:MM` (`±HHMM`, `±HH`), and a date-time
 * without one is UTC, as the dataset importers read theirs.
 */

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/iu;

/** `text` read: the instant it names and the text with its zone said, or undefined when it is no ISO date or date-time that exists on the calendar. */
function readIso(text: string): { instant: number; zoned: string } | undefined {
  const trimmed = text.trim();
  const match = ISO.exec(trimmed);
  if (!match) return undefined;
  const [, year, month, day, hour, minute = '0', second = '0', fraction = '', zone] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour ?? '0', minute, second].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined; // 2025-02-30
  const millis = Number(`0.${fraction || '0'}`) * 1000;
  let offset = 0;
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const [, sign, zh, zm = '0'] = /^([+-])(\d{2}):?(\d{2})?$/u.exec(zone)!;
    if (Number(zh) > 23 || Number(zm) > 59) return undefined;
    offset = (sign === '-' ? -1 : 1) * (Number(zh) * 60 + Number(zm)) * 60_000;
  }
  // A time without a zone is said as UTC (a space before it made `T`); a date alone, or a zoned time, as written.
  const zoned = hour !== undefined && zone === undefined ? `${trimmed.replace(' ', 'T')}Z` : text;
  return { instant: date.getTime() + ((h * 60 + mi) * 60 + s) * 1000 + millis - offset, zoned };
}

/** The instant `text` names (ms since the epoch), or undefined when it is no ISO date or date-time that exists on the calendar. */
export function isoInstant(text: string): number | undefined {
  return readIso(text)?.instant;
}

/**
 * `text` as the file should have said it, or undefined when it is no ISO date or date-time: a time
 * without a zone gets `Z` (and a space before the time becomes `T`), so every reader takes the same
 * instant; a date alone or a zoned time stays as written. One reading, for a schema that checks and
 * rewrites (a dataset's steps carry a date each).
 */
export function isoTimestamp(text: string): string | undefined {
  return readIso(text)?.zoned;
}
