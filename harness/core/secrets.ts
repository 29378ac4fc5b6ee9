/**
 * The one secret filter (DESIGN §9: API keys never appear in results, caches, logs or reports).
 * The API key (from --api-key, OPENAI_API_KEY or whatever built an endpoint) and any
 * `Authorization` value are masked in whatever text carries them: an endpoint that echoes the
 * request's headers, a proxy's error page, a model that repeats its prompt. Every writer of
 * results, reports, cell files and the response cache passes its text through here.
 */

/** What a secret is replaced with. */
export const MASK = '***';

/** Shorter values are not masked: splitting text on "ab" would mangle it, and no real key is that short. */
const MIN_SECRET_LENGTH = 4;

/** Keys this process was given (by flags, the environment, a provider's options). */
const registered = new Set<string>();

/** Adds a value to the secrets masked everywhere in this process. */
export function registerSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= MIN_SECRET_LENGTH) registered.add(value);
}

/** The values masked: every registered one, and OPENAI_API_KEY as it is now. */
function secrets(): string[] {
  const fromEnv = process.env.OPENAI_API_KEY;
  const all = new Set(registered);
  if (fromEnv !== undefined && fromEnv.length >= MIN_SECRET_LENGTH) all.add(fromEnv);
  // Longest first, so a key that contains another is masked whole.
  return [...all].sort((a, b) => b.length - a.length);
}

/**
 * `Authorization: Bearer X`, `"authorization":"X"`, `Authorization=Basic X`: the scheme kept, the
 * credential masked. The credential stops at white space, quotes, a backslash (a JSON escape) and
 * separators, so masking JSON text leaves it JSON.
 */
const AUTHORIZATION = /(authorization["']?\s*[:=]\s*["']?)((?:bearer|basic|token)\s+)?[^\s"'\\,;}\]<>]+/giu;
/** A bearer token on its own (`Bearer sk-...`): 8 or more token characters with a digit or `-_.` in them (not "the bearer of ..."). */
const BEARER = /\b(bearer\s+)(?=[A-Za-z0-9._~+/=-]*[0-9._-])[A-Za-z0-9._~+/=-]{8,}/giu;

/** `text` with every secret and Authorization value masked. */
export function maskSecrets(text: string): string {
  return maskWith(text, secrets());
}

/** `text` with each of `values` and every Authorization value masked. */
function maskWith(text: string, values: readonly string[]): string {
  let masked = text;
  for (const secret of values) if (masked.includes(secret)) masked = masked.split(secret).join(MASK);
  if (/authorization|bearer/iu.test(masked)) {
    masked = masked.replace(
      AUTHORIZATION,
      (_match, label: string, scheme: string | undefined) => `${label}${scheme ?? ''}${MASK}`,
    );
    masked = masked.replace(BEARER, `$1${MASK}`);
  }
  return masked;
}

/**
 * `value` with every string in it (object keys included) masked; other values as they are. What
 * holds nothing to mask is returned as it is, not copied: a run's results (megabytes of turns and
 * probes) stay the same object, so what renderers computed from them (the leaderboards' bootstraps)
 * is not computed again for a copy.
 */
export function maskSecretsDeep<T>(value: T): T {
  return maskDeep(value, secrets());
}

function maskDeep<T>(value: T, values: readonly string[]): T {
  if (typeof value === 'string') return maskWith(value, values) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item: unknown) => {
      const masked = maskDeep(item, values);
      changed ||= masked !== item;
      return masked;
    });
    return (changed ? items : value) as T;
  }
  if (value !== null && typeof value === 'object') {
    let changed = false;
    const entries = Object.entries(value as Record<string, unknown>).map(([key, item]): [string, unknown] => {
      const entry: [string, unknown] = [maskWith(key, values), maskDeep(item, values)];
      changed ||= entry[0] !== key || entry[1] !== item;
      return entry;
    });
    return (changed ? Object.fromEntries(entries) : value) as T;
  }
  return value;
}
