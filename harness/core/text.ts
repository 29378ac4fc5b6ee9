/** Text helpers shared by recall metrics, the offline model and the hashed embedder. */
import { boundedMemo, MEMO_CHARS, memoLast } from './memo.js';

/**
 * The runs of whitespace that collapseWhitespace replaces: every run but a lone plain space, which
 * stays as it is (replacing each space of a message with a new one was half of normalizeText's cost).
 */
const WHITESPACE_TO_COLLAPSE = /\s{2,}|[^\S ]/gu;

/** Control characters a terminal acts on (C0 but tab and line feed, DEL, C1): ESC starts an escape sequence. */
const CONTROL_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/gu;

/**
 * `text` with every control character but tab and line feed written as its `\uXXXX` escape: a
 * text from outside (a strategy's error) printed on a terminal, where an ESC would start an escape
 * sequence (recolour, move the cursor, retitle the window) and a carriage return overwrite the line.
 */
export function visibleControls(text: string): string {
  return text.replace(CONTROL_CHARS, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `text` on one line of output (a Markdown line, a chart's title or label): each line break (CR, LF
 * or CRLF) a space, any other control character but tab as its escape (visibleControls).
 */
export function oneLine(text: string): string {
  return visibleControls(text.replace(/\r\n?|\n/gu, ' '));
}

/** Every run of whitespace as one space, trimmed. */
export function collapseWhitespace(text: string): string {
  return text.replace(WHITESPACE_TO_COLLAPSE, ' ').trim();
}

/**
 * NFKC, lower case, collapsed whitespace. `toLowerCase()` is the root locale's mapping: the same
 * as `toLocaleLowerCase('und')` on every code point, final sigma included (checked over the whole
 * of Unicode), and several times cheaper (no locale to resolve at each call).
 */
const normalForm = (text: string): string => collapseWhitespace(text.normalize('NFKC').toLowerCase());

/** Texts up to this long are memoised by normalizeText (sentences, messages: the ones hot paths repeat); longer ones (whole contexts) are not kept. */
const NORMALIZE_MEMO_CHARS = 2048;
const normalizedShort = boundedMemo(MEMO_CHARS.sentences, normalForm);

/** NFKC, case fold and collapsed whitespace: the form in which recall strings are compared. */
export function normalizeText(text: string): string {
  // The offline summariser re-reads every kept sentence at every fold: the same short strings again and again.
  return text.length <= NORMALIZE_MEMO_CHARS ? normalizedShort(text) : normalForm(text);
}

// Made on first use, not at load: an agent process's startup snapshot can hold no ICU object.
let wordSegmenter: Intl.Segmenter | undefined;
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** A UTF-16 surrogate not in a pair (`\ud800` escapes no text can hold; with the `u` flag a pair is one code point and never matches). */
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** How a refusal says a string holds one: the scenario loader's and the local endpoint's words. */
export const LONE_SURROGATE_PROBLEM =
  'holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape without its pair): not text';

/**
 * Where the strings (and keys) inside `value` hold a lone surrogate: the first `keep` paths
 * (`['steps', 1, 'expect', 0]`) and how many there are. One walk over a whole dataset element or
 * scenario: the path is a stack, copied only where one is found.
 */
export function loneSurrogatesIn(value: unknown, keep: number): { paths: (string | number)[][]; count: number } {
  const found = { paths: [] as (string | number)[][], count: 0 };
  const path: (string | number)[] = [];
  const hit = (): void => {
    found.count++;
    if (found.paths.length < keep) found.paths.push([...path]);
  };
  const walk = (item: unknown): void => {
    if (typeof item === 'string') {
      if (LONE_SURROGATE.test(item)) hit();
    } else if (Array.isArray(item)) {
      for (let index = 0; index < item.length; index++) {
        path.push(index);
        walk(item[index]);
        path.pop();
      }
    } else if (typeof item === 'object' && item !== null) {
      for (const [key, element] of Object.entries(item)) {
        path.push(key);
        if (LONE_SURROGATE.test(key)) hit();
        else walk(element);
        path.pop();
      }
    }
  };
  walk(value);
  return found;
}

/** True when the string contains CJK characters (segmentation and matching differ for them). */
export function hasCjk(text: string): boolean {
  return CJK.test(text);
}

/**
 * True when any string inside `value` (a step, a scenario's steps: its strings, and its objects'
 * keys) contains CJK characters. Each string is tested where it is: serialising a LongMemEval_S
 * question's 600,000 characters to test them as one string cost ~4 ms, walking them ~0.2 ms.
 */
export function hasCjkIn(value: unknown): boolean {
  if (typeof value === 'string') return hasCjk(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return value.some(hasCjkIn);
  for (const key in value)
    if (Object.hasOwn(value, key) && (hasCjk(key) || hasCjkIn((value as Record<string, unknown>)[key]))) return true;
  return false;
}

/**
 * Word-like segments of normalised text. Intl.Segmenter splits Chinese into words with its
 * dictionary, so "红烧肉" and "素食" come out as units rather than single characters.
 */
export function words(text: string): string[] {
  return wordsOfNormalized(normalizeText(text));
}

/** Latin-1's letters (Word_Break ALetter; × and ÷ are not letters), and with ASCII's. */
const LATIN1_LETTER = '\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff';
const LATIN_LETTER = `a-zA-Z${LATIN1_LETTER}`;
/** ’ and ‘ join as `'` does (MidNumLet); dashes, curly double quotes, → and ° separate (Other). */
const JOINING_QUOTES = '\u2018\u2019';
/**
 * Characters that separate (Word_Break Other) and are common in chat text: dashes, curly double
 * quotes, → and °; Latin-1's symbols that NFKC keeps (¡¢£¤¥¦§©«¬®±¶»¿×÷; not the middle dot ·,
 * which joins letters, nor the soft hyphen, which attaches); bullets, daggers, per mille, low and
 * angle quotes, prime, arrows, euro, check mark.
 */
const SEPARATORS =
  '\u2013\u2014\u201c\u201d\u2192\u00b0\u00a1-\u00a7\u00a9\u00ab\u00ac\u00ae\u00b1\u00b6\u00bb\u00bf\u00d7\u00f7' +
  '\u2022\u2020\u2021\u2030\u201a\u201e\u2039\u203a\u2032\u2190\u2191\u2193\u20ac\u2713';

/** The characters the fast path segments: ASCII, Latin-1 letters, the quotes and separators above (a regular expression class's body). */
const LATIN_CHARS = `\\x00-\\x7f${LATIN1_LETTER}${JOINING_QUOTES}${SEPARATORS}`;
/** Text the fast path segments. */
const LATIN_TEXT = new RegExp(`^[${LATIN_CHARS}]*$`, 'u');

/**
 * Unicode's word boundaries (UAX #29) as they fall in that text: letters, digits and `_` join;
 * a `.`, `'`, `’`, `‘` or `:` joins two letters, a `.`, `'`, `’`, `‘`, `,` or `;` two digits. ICU
 * calls every such segment word-like except a lone `_`. The same segments Intl.Segmenter gives (a
 * test compares them on random strings of every such character and every built-in text), without
 * ICU's per-segment cost and its ~20 ms first use in every process.
 */
const LATIN_WORD = new RegExp(
  `[${LATIN_LETTER}0-9_]+(?:(?:(?<=[${LATIN_LETTER}])[.':${JOINING_QUOTES}](?=[${LATIN_LETTER}])|(?<=[0-9])[.',;${JOINING_QUOTES}](?=[0-9]))[${LATIN_LETTER}0-9_]+)*`,
  'gu',
);

/** Latin text shorter than this between two characters off the fast path goes to ICU with them: one call fewer costs less than its characters. */
const ICU_CALL_CHARS = 32;

/** A character off the fast path. */
const NOT_LATIN = new RegExp(`[^${LATIN_CHARS}]`, 'gu');

/** The fast path's words of Latin text. */
function latinWords(text: string): string[] {
  return (text.match(LATIN_WORD) ?? []).filter((word) => word !== '_');
}

/**
 * `words` of text already normalised (normalizeText is idempotent: a caller that has the normal
 * form skips the second pass). Latin text takes the fast path. In other text, ICU gets only the
 * stretches around the characters off the fast path, each from the last cut before the character
 * to the first after it (`isCut`: after white space, before what neither is white space nor
 * attaches, a word boundary whatever surrounds it), and the Latin text between the stretches takes
 * the fast path: the words are the whole text's (a test compares them on random mixed text). One
 * bullet, euro sign or emoji in an English message used to hand the whole message to ICU, at about
 * 30× the fast path's cost per character. Text with CJK characters goes to ICU whole, as before:
 * most of it is ICU's anyway, and the stretches would only add calls.
 */
export function wordsOfNormalized(normalized: string): string[] {
  if (LATIN_TEXT.test(normalized)) return latinWords(normalized);
  // Chinese, Japanese and Korean are ICU's anyway (its dictionaries): the whole text goes there, as it did.
  if (hasCjk(normalized)) return icuWords(normalized);
  const out: string[] = [];
  /** Where the text not yet segmented starts: 0, or a cut. */
  let done = 0;
  NOT_LATIN.lastIndex = 0;
  let found = NOT_LATIN.exec(normalized);
  while (found) {
    let start = found.index;
    while (start > done && !isCut(normalized, start)) start--;
    let end: number;
    // Characters off the fast path close to one another share one call (a call costs ICU about what 20 characters do).
    do {
      end = nextCut(normalized, found.index + found[0].length);
      NOT_LATIN.lastIndex = end;
      found = NOT_LATIN.exec(normalized);
    } while (found && found.index - end < ICU_CALL_CHARS);
    const latin = normalized.slice(done, start);
    const other = normalized.slice(start, end);
    // Latin text of more than a window without a cut was cut inside by icuWords (segmentWindows): the
    // whole text goes there, as it did. ICU's own stretches need no such check: whether it is handed
    // the whole text or a stretch, a window ends at the cut that starts a run without cuts, so the
    // run is cut at the same places.
    if (mayHoldLongUncut(latin)) return icuWords(normalized);
    append(out, latinWords(latin));
    append(out, icuWords(other));
    done = end;
  }
  const rest = done === 0 ? normalized : normalized.slice(done);
  if (mayHoldLongUncut(rest)) return icuWords(normalized);
  append(out, latinWords(rest));
  return out;
}

/** Appends `words` to `out` one by one: `out.push(...words)` passes each as an argument, and a long text's hundred thousand words overflow the stack. */
function append(out: string[], words: readonly string[]): void {
  for (const word of words) out.push(word);
}

/**
 * The longest text handed to Intl.Segmenter at once. V8's segment iterator costs more per segment
 * the longer its input (100,000 characters of Chinese or emoji took minutes whole; in windows of
 * this size, a fraction of a second), so longer texts are segmented window by window.
 */
export const SEGMENT_WINDOW_CHARS = 2048;

/**
 * Whether Latin text (LATIN_TEXT's characters: no mark or other character that attaches) may hold
 * a stretch of more than a window between two cuts: such a stretch is a run of non-white space and
 * the white space after it, so one of the two is more than half a window. One search, no false
 * "no" (a "yes" only sends the text to ICU, as before).
 */
function mayHoldLongUncut(latin: string): boolean {
  return latin.length > SEGMENT_WINDOW_CHARS && LONG_LATIN_RUN.test(latin);
}

/** A run of half a window of ASCII white space, or of anything else (LATIN_TEXT's characters are one UTF-16 unit each). */
const LONG_LATIN_RUN = new RegExp(`[\\t-\\r ]{${SEGMENT_WINDOW_CHARS / 2}}|[^\\t-\\r ]{${SEGMENT_WINDOW_CHARS / 2}}`);

/** White space (Unicode's White_Space: U+FEFF is a format character, which joins what surrounds it). */
const WHITE_SPACE = /\p{White_Space}/u;
/** Characters that attach to the one before: a mark, a format character such as ZWJ, an emoji modifier (sticky: tested at one position). */
const ATTACHING = /[\p{M}\p{Cf}\p{Emoji_Modifier}]/uy;

/** Whether the character at `at` attaches to the one before it (or is the second half of a surrogate pair). */
function attaches(text: string, at: number): boolean {
  const unit = text.charCodeAt(at);
  if (unit >= 0xdc00 && unit <= 0xdfff) return true;
  ATTACHING.lastIndex = at;
  return ATTACHING.test(text);
}

/** Whether a word boundary falls at `at` whatever surrounds the text there: after white space, before a character that is neither white space nor attaches to what precedes it. */
function isCut(text: string, at: number): boolean {
  return WHITE_SPACE.test(text[at - 1] ?? '') && !WHITE_SPACE.test(text[at]!) && !attaches(text, at);
}

/** Runs of white space, searched from a position (a cut can only follow one). */
const WHITE_SPACE_RUNS = /\p{White_Space}+/gu;

/** The first cut (`isCut`) at or after `from`, or the text's length: found from run to run of white space, not character by character. */
function nextCut(text: string, from: number): number {
  WHITE_SPACE_RUNS.lastIndex = Math.max(from - 1, 0);
  for (let run = WHITE_SPACE_RUNS.exec(text); run; run = WHITE_SPACE_RUNS.exec(text)) {
    const at = run.index + run[0].length;
    if (at >= from && at < text.length && isCut(text, at)) return at;
  }
  return text.length;
}

/**
 * Where `text` is cut into windows of at most `SEGMENT_WINDOW_CHARS` (their ends, the last being
 * its length), searched backwards from each window's limit so that the search costs the window.
 * A cut after white space, before a character that is neither white space nor attaches to what
 * precedes it, is a word boundary under every rule of UAX #29 (white space joins only white
 * space and the attaching characters), and ICU's dictionaries segment runs that white space ends:
 * there the windows' words are exactly the whole text's. Only a run of more than
 * `SEGMENT_WINDOW_CHARS` characters without white space (unspaced Chinese, base64, a minified
 * file) is cut elsewhere, before a character that does not attach; a word across that cut comes
 * out as two.
 */
export function segmentWindows(text: string): number[] {
  const ends: number[] = [];
  let start = 0;
  while (text.length - start > SEGMENT_WINDOW_CHARS) {
    const limit = start + SEGMENT_WINDOW_CHARS;
    let end = limit;
    while (end > start && !isCut(text, end)) end--;
    if (end === start) {
      end = limit;
      while (end > start + 1 && attaches(text, end)) end--;
      if (end === start + 1) end = limit; // nothing but attaching characters: cut anyway
    }
    ends.push(end);
    start = end;
  }
  ends.push(text.length);
  return ends;
}

/**
 * A character that may belong to a word by ICU's rules: anything but pictographs (emoji), their
 * modifiers, joiners, the variation selector and white space, or any letter, digit or alphabetic
 * symbol among them. ICU calls no segment of the other characters word-like (a test checks every
 * one), and cutting 100,000 characters of emoji into segments only to drop them all cost more than
 * the rest of a message's indexing.
 */
const MAY_BE_WORD = /[\p{L}\p{N}\p{Alphabetic}]|[^\p{Extended_Pictographic}\p{Emoji_Modifier}\u200d\ufe0f\s]/u;

/** Whether `text` holds none of the characters a word-like segment can have (MAY_BE_WORD: one scan, no backtracking). */
export function holdsNoWords(text: string): boolean {
  return !MAY_BE_WORD.test(text);
}

/** Word-like segments by Intl.Segmenter (ICU's dictionary for CJK): any text, window by window (segmentWindows). */
export function icuWords(normalized: string): string[] {
  const out: string[] = [];
  const segmenter = (wordSegmenter ??= new Intl.Segmenter('und', { granularity: 'word' }));
  let start = 0;
  for (const end of segmentWindows(normalized)) {
    const window = start === 0 && end === normalized.length ? normalized : normalized.slice(start, end);
    start = end;
    if (holdsNoWords(window)) continue;
    for (const segment of segmenter.segment(window)) if (segment.isWordLike) out.push(segment.segment);
  }
  return out;
}

/** Overlapping character bigrams of each CJK run: robust to segmentation differences. */
export function cjkBigrams(text: string): string[] {
  const out: string[] = [];
  const runs =
    normalizeText(text).match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu) ?? [];
  for (const run of runs) {
    const chars = Array.from(run);
    if (chars.length === 1) out.push(run);
    for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
  }
  return out;
}

const STOPWORDS = new Set(
  (
    'a an the and or but if then of to in on at by for with from as is are was were be been being ' +
    'i you he she it we they me him her us them my your his its our their this that these those ' +
    'do does did have has had can could will would shall should may might must not no yes so ' +
    'what which who whom when where why how there here about into over also just very too ' +
    '的 了 是 我 你 他 她 它 们 吗 呢 吧 啊 和 与 在 有 也 就 都 而 及 一个 这 那 个 要 会 能 不 请 把 被'
  ).split(' '),
);

/**
 * The first UTF-16 unit of each stop word, flagged: a word starting with any other unit is none,
 * found without hashing it. jieba hands over about one term per character of unspaced Chinese, and
 * the set's lookup of those strings was most of the time spent filtering them.
 */
const STOPWORD_FIRST_UNITS = new Uint8Array(0x10000);
for (const word of STOPWORDS) STOPWORD_FIRST_UNITS[word.charCodeAt(0)] = 1;

/** Whether `word` is one of the stop words (English and Chinese) that `isContentWord` drops. */
export function isStopWord(word: string): boolean {
  return STOPWORD_FIRST_UNITS[word.charCodeAt(0)] === 1 && STOPWORDS.has(word);
}

/** False for stop words and single Latin letters or digits: words that say nothing on their own. */
export function isContentWord(word: string): boolean {
  return !STOPWORDS.has(word) && !(word.length === 1 && /[a-z0-9]/u.test(word));
}

/** Words that carry content (stop words and single Latin letters dropped): used for overlap scores. */
export function contentWords(text: string): string[] {
  return words(text).filter(isContentWord);
}

/**
 * Terms used for matching and hashing: content words plus CJK bigrams. Segmenting is the costly
 * part of the offline model and embedder, and the same messages are scored again on every probe,
 * so results are memoised (a bounded cache: it is cleared when full).
 */
export const matchTerms: (text: string) => readonly string[] = boundedMemo(MEMO_CHARS.messages, (text) => [
  ...contentWords(text),
  ...cjkBigrams(text),
]);

/** Splits text into sentences (Latin and CJK punctuation, and line breaks). */
export function sentences(text: string): string[] {
  return text
    .split(/(?<=[.!?。！？；;])\s*|\n+/u)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

let graphemeSegmenter: Intl.Segmenter | undefined;
const codePoints = (text: string): number => Array.from(text).length;

/** The text's user-perceived characters (an emoji of several code points, a letter and its accents: one each), where text may be cut. */
export function* graphemes(text: string): Generator<string> {
  graphemeSegmenter ??= new Intl.Segmenter('und', { granularity: 'grapheme' });
  for (const { segment } of graphemeSegmenter.segment(text)) yield segment;
}

/** A question without a leading bracketed note such as "[Current date: 2023/05/30 (Tue) 23:40]": the date is for the model, not what the question is about. */
export function withoutLeadingNote(text: string): string {
  return text.replace(/^\[[^\]]*\]\s*/u, '');
}

/**
 * Shortens text to `max` characters at a word (or, for CJK, character) boundary, marking the cut
 * with "…". `size` measures a text: characters by default; a layout that gives a CJK character two
 * columns passes its display width (reports/layout.ts's `displayWidth`), so hanzi are cut at half
 * as many as letters.
 */
export function shortenText(text: string, max: number, size: (text: string) => number = codePoints): string {
  if (size(text) <= max) return text;
  let out = '';
  let used = 0;
  for (const segment of graphemes(text)) {
    used += size(segment);
    if (used > max - 1) break;
    out += segment;
  }
  const space = out.lastIndexOf(' ');
  if (space > out.length * 0.6) out = out.slice(0, space);
  return `${out.trimEnd()}…`;
}

/** A file-name-like slug of free text (letters and digits of any script joined by "-", at most 60 characters); '' when none is left. */
export function slugify(text: string): string {
  return Array.from(
    normalizeText(text)
      .replace(/[^\p{L}\p{M}\p{N}]+/gu, '-')
      .replace(/^[^\p{L}\p{N}]+|-+$/gu, ''),
  )
    .slice(0, 60)
    .join('')
    .replace(/-+$/u, '');
}

/** `matchTerms` of a text as a set (memoised like it): whole-word membership for per-message checks. */
export const termSet: (text: string) => ReadonlySet<string> = boundedMemo(
  MEMO_CHARS.messages,
  (text) => new Set(matchTerms(text)),
);

/** Whether a text is its own normal form (most are: a normalised context message; not always, e.g. İ before a combining mark). */
const isOwnNormalForm = boundedMemo(MEMO_CHARS.messages, (text: string) => normalizeText(text) === text);

/**
 * Whether `term` may be in `termSet(text)`: every term of it is a piece of the text's normal form,
 * so one that is not there as text is not, and the text need not be segmented to say so (segmenting
 * a Chinese context message costs ICU's dictionary walk over all of it).
 */
export function mayHoldTerm(text: string, term: string): boolean {
  return text.includes(term) || (!isOwnNormalForm(text) && normalizeText(text).includes(term));
}

/**
 * Whether a normalised message holds `term` (the recall metrics' rule): as one of its terms
 * (`termSet`), or as text when the term is CJK, which the segmenter may have cut otherwise. The
 * message is segmented only where that can change the answer (mayHoldTerm).
 */
export function holdsTerm(text: string, term: string): boolean {
  if (hasCjk(term) && text.includes(term)) return true;
  return mayHoldTerm(text, term) && termSet(text).has(term);
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/**
 * Whether normalised `text` holds `term`: a CJK term anywhere (CJK has no word boundaries, and a
 * segmenter may cut the same phrase differently in a longer text), a Latin term only as a whole
 * word ("pot" is not in "potato"). Scans instead of segmenting, so it is cheap on long texts.
 */
export function containsTerm(text: string, term: string): boolean {
  if (hasCjk(term)) return text.includes(term);
  for (let at = text.indexOf(term); at >= 0; at = text.indexOf(term, at + 1)) {
    const before = at > 0 ? text[at - 1]! : ' ';
    const after = text[at + term.length] ?? ' ';
    if (!WORD_CHAR.test(before) && !WORD_CHAR.test(after)) return true;
  }
  return false;
}

/** The English month names, January first: one list for the dates membench writes and reads. */
export const MONTH_NAMES: readonly string[] = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/**
 * A dated message as agents show one: `[8 May 2023, 13:56] text` (the date alone when the step
 * gives no time). Replayed datasets date their sessions, and temporal questions need the date in
 * the context, so it goes into the saved message itself: every strategy keeps it with the text.
 */
export function datedText(text: string, at: string | undefined): string {
  if (at === undefined) return text;
  const note = dateNote(at);
  return note === '' ? text : note + text;
}

/** `[8 May 2023, 13:56] ` for `at`, or '' when it is no date; kept for the last instant (a session's messages share one: a replayed dataset dates ~250 a question, in every cell). */
const dateNote = memoLast((at: string): string => {
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return '';
  const day = `${date.getUTCDate()} ${MONTH_NAMES[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
  const time = /T\d{2}:\d{2}/u.test(at)
    ? `, ${String(date.getUTCHours()).padStart(2, '0')}:${String(date.getUTCMinutes()).padStart(2, '0')}`
    : '';
  return `[${day}${time}] `;
});

/** The text `datedText(text, at)` was made from: its exact date note removed (nothing else, and nothing when `at` gives none). */
export function undatedText(dated: string, at: string | undefined): string {
  const note = at === undefined ? '' : dateNote(at);
  return note !== '' && dated.startsWith(note) ? dated.slice(note.length) : dated;
}
