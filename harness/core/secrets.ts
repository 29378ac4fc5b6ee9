/**
 * The one secret filter (DESIGN §9: API keys never appear in results, caches, logs or reports;
 * masking replaces only a secret's own occurrences). A key is registered by the live endpoint that
 * sends it, and masked only in text that came back from an endpoint (answers, error bodies) or
 * in an error message, where its exact value occurs: as given, in any letter case, URL-encoded,
 * or base64-encoded (alone or inside a longer base64 string, e.g. a Basic credential). Data is
 * never filtered: an offline run registers nothing, so it masks nothing, and a key too short to be
 * told apart from a word is refused before it is used (`checkSecretLength`).
 */
import { MembenchError } from './errors.js';

/** What a secret is replaced with. */
export const MASK = '***';

/** The shortest key a live endpoint accepts: shorter ones ("none", "sk-1") would be words to erase, not secrets to find. */
export const MIN_SECRET_LENGTH = 8;

/** Keys this process sent to an endpoint. */
const registered = new Set<string>();
/** The patterns matching every variant of every registered key (rebuilt when a key is added). */
let patterns: RegExp[] | undefined;

/** Refuses a key shorter than MIN_SECRET_LENGTH (exit 2): `source` says where it came from (`--api-key`, `OPENAI_API_KEY`). */
export function checkSecretLength(value: string, source: string): void {
  if (value.length >= MIN_SECRET_LENGTH) return;
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `${source} is ${value.length} character${value.length === 1 ? '' : 's'} long: a live endpoint needs a key of at least ${MIN_SECRET_LENGTH} characters, ` +
      'because a shorter one cannot be told apart from ordinary words when it is masked in answers and errors; ' +
      `pass the real key, or ${source === 'OPENAI_API_KEY' ? 'unset OPENAI_API_KEY' : 'leave --api-key out'} for an endpoint that needs none`,
  );
}

/** Adds a key this process sends to an endpoint to the secrets masked in what endpoints and errors return. */
export function registerSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH || registered.has(value)) return;
  registered.add(value);
  patterns = undefined;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');

/**
 * The base64 text that encodes `value` wherever it sits in a longer byte string: for each of the
 * three alignments, the characters that depend on its bytes only (the ones shared with a
 * neighbouring byte, at either end, are dropped). Standard and URL-safe alphabets.
 */
function base64Cores(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const cores: string[] = [];
  for (const offset of [0, 1, 2]) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = Math.ceil((offset * 8) / 6);
    const last = Math.floor(((offset + bytes.length) * 8) / 6);
    const core = encoded.slice(first, last);
    cores.push(core, core.replace(/\+/gu, '-').replace(/\//gu, '_'));
  }
  return cores;
}

/** One alternation of `values`, longest first (a key that contains another is masked whole). */
function alternation(values: readonly string[], flags: string): RegExp {
  const sorted = [...new Set(values)].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map(escapeRegExp).join('|'), flags);
}

/** The patterns of every registered key's variants (none while no key is registered). */
function secretPatterns(): RegExp[] {
  if (registered.size === 0) return [];
  patterns ??= [
    // Any letter case: the key as given, upper or lower case, URL-encoded (hex digits in either case).
    alternation(
      [...registered].flatMap((key) => [key, encodeURIComponent(key)]),
      'giu',
    ),
    // Base64's letter case carries the bits: matched as it is.
    alternation([...registered].flatMap(base64Cores), 'gu'),
  ];
  return patterns;
}

/** `text` (from an endpoint or an error) with every occurrence of a registered key, in any of its variants, masked. */
export function maskSecrets(text: string): string {
  let masked = text;
  for (const secret of secretPatterns()) masked = masked.replace(secret, MASK);
  return masked;
}
