/** ISO dates read strictly: what Date.parse took for a date (a word with a number, day 30 of February) refused; no zone is UTC on every machine. */
import { describe, expect, it } from 'vitest';
import { isoInstant, isoTimestamp } from '../../../harness/core/dates.js';

describe('isoInstant', () => {
  it('reads dates and date-times, with or without a zone (none: UTC), as Date.UTC would', () => {
    expect(isoInstant('2025-05-12')).toBe(Date.UTC(2025, 4, 12));
    expect(isoInstant('2025-05-12T09:30')).toBe(Date.UTC(2025, 4, 12, 9, 30));
    expect(isoInstant('2025-05-12 09:30:15.5')).toBe(Date.UTC(2025, 4, 12, 9, 30, 15, 500));
    expect(isoInstant('2025-05-12T09:30:00Z')).toBe(Date.UTC(2025, 4, 12, 9, 30));
    expect(isoInstant('2025-05-12T09:30:00+08:00')).toBe(Date.UTC(2025, 4, 12, 1, 30));
    expect(isoInstant('2025-05-12T09:30:00-0330')).toBe(Date.UTC(2025, 4, 12, 13, 0));
    expect(isoInstant('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(isoInstant('0023-01-01')).toBe(new Date('0023-01-01T00:00:00Z').getTime());
  });

  it.each([
    'peanut 7',
    '1',
    'hello world 2020',
    'next tuesday',
    '2025-02-30',
    '2025-06-31',
    '2023-02-29',
    '2025-13-01',
    '2025-05-12T24:00',
    '2025-05-12T09:60',
    '2025-05-12T09:30:00+25:00',
    '1700000000',
    '',
  ])('refuses %j', (text) => {
    expect(isoInstant(text)).toBeUndefined();
  });

  it('writes a time without a zone as UTC, and leaves dates and zoned times alone', () => {
    expect(isoTimestamp('2025-05-12T09:30')).toBe('2025-05-12T09:30Z');
    expect(isoTimestamp('2025-05-12 09:30:00')).toBe('2025-05-12T09:30:00Z');
    expect(isoTimestamp('2025-05-12')).toBe('2025-05-12');
    expect(isoTimestamp('2025-05-12T09:30:00+08:00')).toBe('2025-05-12T09:30:00+08:00');
    expect(new Date(isoTimestamp('2025-05-12T09:30')!).getTime()).toBe(Date.UTC(2025, 4, 12, 9, 30));
    expect(isoTimestamp('2025-02-30')).toBeUndefined();
  });
});
