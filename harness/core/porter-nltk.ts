/**
 * The Porter stemmer as NLTK's `PorterStemmer()` runs it by default (its NLTK_EXTENSIONS mode),
 * which LoCoMo's answer F1 stems with. It departs from Porter's 1980 algorithm (the npm `stemmer`
 * package) in a few places, each of which changes common words:
 * - a pool of irregular forms is looked up first (skies → sky, dying → die, news → news, …);
 * - words of one or two letters are left as they are;
 * - "ies" and "ied" on a four-letter word leave "ie" (dies → die, tied → tie), otherwise "i";
 * - a final "y" becomes "i" only after a consonant that is not the word's first letter
 *   (happy → happi, try → tri, but day, they, may stay);
 * - the "consonant-vowel-consonant" test also holds for a two-letter stem that is a vowel then a
 *   consonant, so one, use, ore keep their final "e";
 * - step 2 turns "alli" into "al" and runs again, adds "fulli" → "ful", and reads "logi" → "log"
 *   with the "l" counted in the stem; "bli" → "ble" stands for the published "abli" → "able".
 * Only lower-case ASCII letters are stemmed as words; the caller lower-cases.
 */

/** NLTK's irregular forms: looked up before any rule, the result is final. */
const IRREGULAR: ReadonlyMap<string, string> = new Map([
  ['sky', 'sky'],
  ['skies', 'sky'],
  ['dying', 'die'],
  ['lying', 'lie'],
  ['tying', 'tie'],
  ['news', 'news'],
  ['innings', 'inning'],
  ['inning', 'inning'],
  ['outings', 'outing'],
  ['outing', 'outing'],
  ['cannings', 'canning'],
  ['canning', 'canning'],
  ['howe', 'howe'],
  ['proceed', 'proceed'],
  ['exceed', 'exceed'],
  ['succeed', 'succeed'],
]);

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u']);

/** Letter i of the word is a consonant: not a vowel, and a "y" only at the start or after a vowel. */
function isConsonant(word: string, i: number): boolean {
  const letter = word[i]!;
  if (VOWELS.has(letter)) return false;
  if (letter === 'y') return i === 0 || !isConsonant(word, i - 1);
  return true;
}

/** Porter's m: how many vowel-then-consonant runs the stem holds ([C](VC)^m[V]). */
function measure(stem: string): number {
  let runs = 0;
  for (let i = 1; i < stem.length; i++) if (isConsonant(stem, i) && !isConsonant(stem, i - 1)) runs++;
  return runs;
}

const positive = (stem: string): boolean => measure(stem) > 0;
const aboveOne = (stem: string): boolean => measure(stem) > 1;

function hasVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word[n - 1] === word[n - 2] && isConsonant(word, n - 1);
}

/** Porter's *o (consonant, vowel, consonant other than w, x, y), or NLTK's two-letter vowel-consonant stem. */
function endsCvc(word: string): boolean {
  const n = word.length;
  if (n === 2) return !isConsonant(word, 0) && isConsonant(word, 1);
  return (
    n >= 3 &&
    isConsonant(word, n - 3) &&
    !isConsonant(word, n - 2) &&
    isConsonant(word, n - 1) &&
    !'wxy'.includes(word[n - 1]!)
  );
}

/** A suffix rule: the suffix, what replaces it, and the condition on what precedes it (none: always). */
type Rule = readonly [suffix: string, replacement: string, condition?: (stem: string) => boolean];

/**
 * The first rule whose suffix ends the word decides: its condition holds and the suffix is
 * replaced, or it does not and the word stays as it is (later rules are not tried).
 */
function firstRule(word: string, rules: readonly Rule[]): string {
  for (const [suffix, replacement, condition] of rules) {
    if (!word.endsWith(suffix)) continue;
    const stem = word.slice(0, word.length - suffix.length);
    return condition === undefined || condition(stem) ? stem + replacement : word;
  }
  return word;
}

function step1a(word: string): string {
  if (word.endsWith('ies') && word.length === 4) return `${word.slice(0, -3)}ie`;
  return firstRule(word, [
    ['sses', 'ss'],
    ['ies', 'i'],
    ['ss', 'ss'],
    ['s', ''],
  ]);
}

function step1b(word: string): string {
  if (word.endsWith('ied')) return `${word.slice(0, -3)}${word.length === 4 ? 'ie' : 'i'}`;
  if (word.endsWith('eed')) {
    const stem = word.slice(0, -3);
    return positive(stem) ? `${stem}ee` : word;
  }
  const suffix = ['ed', 'ing'].find((ending) => word.endsWith(ending) && hasVowel(word.slice(0, -ending.length)));
  if (suffix === undefined) return word;
  const stem = word.slice(0, -suffix.length);
  if (stem.endsWith('at') || stem.endsWith('bl') || stem.endsWith('iz')) return `${stem}e`;
  if (endsDoubleConsonant(stem)) return 'lsz'.includes(stem.at(-1)!) ? stem : stem.slice(0, -1);
  return measure(stem) === 1 && endsCvc(stem) ? `${stem}e` : stem;
}

function step1c(word: string): string {
  return firstRule(word, [['y', 'i', (stem) => stem.length > 1 && isConsonant(stem, stem.length - 1)]]);
}

const STEP2: readonly Rule[] = [
  ['ational', 'ate', positive],
  ['tional', 'tion', positive],
  ['enci', 'ence', positive],
  ['anci', 'ance', positive],
  ['izer', 'ize', positive],
  ['bli', 'ble', positive],
  ['alli', 'al', positive],
  ['entli', 'ent', positive],
  ['eli', 'e', positive],
  ['ousli', 'ous', positive],
  ['ization', 'ize', positive],
  ['ation', 'ate', positive],
  ['ator', 'ate', positive],
  ['alism', 'al', positive],
  ['iveness', 'ive', positive],
  ['fulness', 'ful', positive],
  ['ousness', 'ous', positive],
  ['aliti', 'al', positive],
  ['iviti', 'ive', positive],
  ['biliti', 'ble', positive],
  ['fulli', 'ful', positive],
  // The "l" stays with the stem when the measure is taken (geologi → geolog).
  ['logi', 'log', (stem) => positive(`${stem}l`)],
];

function step2(word: string): string {
  if (word.endsWith('alli') && positive(word.slice(0, -4))) return step2(`${word.slice(0, -4)}al`);
  return firstRule(word, STEP2);
}

const STEP3: readonly Rule[] = [
  ['icate', 'ic', positive],
  ['ative', '', positive],
  ['alize', 'al', positive],
  ['iciti', 'ic', positive],
  ['ical', 'ic', positive],
  ['ful', '', positive],
  ['ness', '', positive],
];

const STEP4: readonly Rule[] = [
  ['al', '', aboveOne],
  ['ance', '', aboveOne],
  ['ence', '', aboveOne],
  ['er', '', aboveOne],
  ['ic', '', aboveOne],
  ['able', '', aboveOne],
  ['ible', '', aboveOne],
  ['ant', '', aboveOne],
  ['ement', '', aboveOne],
  ['ment', '', aboveOne],
  ['ent', '', aboveOne],
  ['ion', '', (stem) => aboveOne(stem) && (stem.endsWith('s') || stem.endsWith('t'))],
  ['ou', '', aboveOne],
  ['ism', '', aboveOne],
  ['ate', '', aboveOne],
  ['iti', '', aboveOne],
  ['ous', '', aboveOne],
  ['ive', '', aboveOne],
  ['ize', '', aboveOne],
];

function step5(word: string): string {
  let out = word;
  if (out.endsWith('e')) {
    const stem = out.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) out = stem;
  }
  if (out.endsWith('ll') && aboveOne(out.slice(0, -1))) out = out.slice(0, -1);
  return out;
}

/** NLTK's `PorterStemmer().stem(word)` (default mode) for a lower-case word. */
export function nltkPorterStem(word: string): string {
  const irregular = IRREGULAR.get(word);
  if (irregular !== undefined) return irregular;
  if (word.length <= 2) return word;
  const steps2and3 = firstRule(step2(step1c(step1b(step1a(word)))), STEP3);
  return step5(firstRule(steps2and3, STEP4));
}
