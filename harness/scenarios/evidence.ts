/**
 * Evidence scoring, in one module (docs/design.md §5): the messages each probe's `evidence` cites
 * and the rarity of their terms (`evidenceTable`, `probeEvidence`), evidence recall
 * (`evidenceRecall`: a cited message held verbatim, or covered by its rare terms for a strategy
 * that transforms what it keeps), and the secondary coverage figure: for a probe citing
 * `evidence: [step ids]`, how much of each cited step's content made it into the context the
 * strategy assembled, averaged over the steps.
 *
 * For coverage, a step's terms are its distinct content words (`contentWords`) plus, for Chinese and other
 * CJK text, its character bigrams (`cjkBigrams`). Latin terms count as present when the context
 * holds them as whole words ("pot" is not found in "potato"); CJK terms when the context holds
 * them as a substring, since CJK has no word boundaries and the segmenter may cut the same
 * phrase differently in a longer context. Everything is compared in `normalizeText` form.
 */
import {
  cjkBigrams,
  containsTerm,
  contentWords,
  hasCjk,
  holdsTerm,
  normalizeText,
  sentences,
  termSet,
} from '../core/text.js';
import type { Step } from './format.js';
import { boundedMemo, MEMO_CHARS } from '../core/memo.js';

/** The messages a step puts into the conversation (its user message and scripted reply, a tool call and result...). */
export function stepMessages(step: Step): string[] {
  switch (step.kind) {
    case 'user':
      return step.assistant === undefined ? [step.user] : [step.user, step.assistant];
    case 'assistant':
      return [step.assistant];
    case 'tool': {
      const result =
        step.result === undefined ? '' : typeof step.result === 'string' ? step.result : JSON.stringify(step.result);
      return [[step.tool, JSON.stringify(step.args)].join('\n'), ...(result ? [result] : [])];
    }
    case 'remember':
      return [step.remember];
    case 'forget':
      return [step.forget];
    default:
      return [];
  }
}

/** The text a step puts into the conversation, as one string: what its content words are taken from. */
export function stepContent(step: Step): string {
  return stepMessages(step).join('\n');
}

/**
 * Id → the messages it cites, built once per scenario so probes never walk the steps again: a
 * step id cites the step's messages, except on a user step whose reply has its own `replyId`,
 * where the id cites the user message and the `replyId` the reply (one message each, the
 * datasets' evidence unit).
 */
export function evidenceIndex(steps: readonly Step[]): Map<string, string[]> {
  const index = new Map<string, string[]>();
  const visit = (list: readonly Step[]): void => {
    for (const step of list) {
      if (step.kind === 'user' && step.replyId !== undefined && step.assistant !== undefined) {
        if (step.id !== undefined && !index.has(step.id)) index.set(step.id, [step.user]);
        if (!index.has(step.replyId)) index.set(step.replyId, [step.assistant]);
      } else if (step.id !== undefined && !index.has(step.id)) index.set(step.id, stepMessages(step));
      // A derived document (an observation, a session summary) holds what it cites: any document citing an id counts.
      if (step.kind === 'user') for (const id of step.cites ?? []) index.set(id, [...(index.get(id) ?? []), step.user]);
      if (step.kind === 'concurrent') for (const session of step.concurrent) visit(session);
    }
  };
  visit(steps);
  return index;
}

/**
 * What the harness prepares once per scenario to judge evidence: the messages each id names, and
 * in how many of the scenario's messages each term occurs (for the rarity weights of
 * transforming strategies' coverage).
 */
export interface EvidenceTable {
  index: ReadonlyMap<string, readonly string[]>;
  documentFrequency: ReadonlyMap<string, number>;
  /** Messages of the scenario (the documents of the frequencies). */
  messages: number;
  /** Whether the frequencies were counted (probes get rarity weights); false leaves them empty. */
  weighs: boolean;
}

/**
 * The evidence table of a scenario's steps (concurrent sessions included). `rarity: false` skips
 * the term frequencies, which only a strategy that transforms what it keeps is judged with
 * (metrics.ts `evidenceRecall`): segmenting every message costs ~0.3 s on a 500-message haystack.
 */
export function evidenceTable(steps: readonly Step[], options: { rarity?: boolean } = {}): EvidenceTable {
  const weighs = options.rarity !== false;
  const documentFrequency = new Map<string, number>();
  let messages = 0;
  const visit = (list: readonly Step[]): void => {
    for (const step of list) {
      for (const text of stepMessages(step)) {
        messages++;
        if (weighs)
          for (const term of termSet(normalizeText(text)))
            documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
      }
      if (step.kind === 'concurrent') for (const session of step.concurrent) visit(session);
    }
  };
  visit(steps);
  return { index: evidenceIndex(steps), documentFrequency, messages, weighs };
}

/**
 * A term's rarity among N messages, df of which hold it: the IDF of Robertson and Spärck Jones
 * (the one BM25 uses), ln((N − df + 0.5) / (df + 0.5)), floored at 0, so a term in half the
 * messages or more weighs nothing and one in a single message of 500 weighs about 6.
 */
export function rarityWeight(documentFrequency: number, messages: number): number {
  return Math.max(0, Math.log((messages - documentFrequency + 0.5) / (documentFrequency + 0.5)));
}

/** A probe's evidence as the agent loop judges it: the cited messages and their terms' rarity; undefined for other steps. */
export function probeEvidence(step: Step, table: EvidenceTable): ProbeEvidence | undefined {
  if (step.kind !== 'probe') return undefined;
  // A message a dataset lists twice (LoCoMo's ["D4:5", "D4:5", "D5:5"]) is one message of evidence here.
  const cited = [...new Set(step.evidence)].map((id) => [...(table.index.get(id) ?? [])]);
  const rarity: Record<string, number> = {};
  if (!table.weighs) return { cited, rarity };
  for (const text of cited.flat().map(normalizeText)) {
    // A sentence may segment apart from its message (CJK): its terms are weighed too (unseen ones as a single message's).
    for (const part of [text, ...sentences(text)])
      for (const term of termSet(part))
        rarity[term] ??= rarityWeight(table.documentFrequency.get(term) ?? 1, table.messages);
  }
  return { cited, rarity };
}

/**
 * Distinct terms of one evidence text: content words, plus CJK bigrams when it has CJK. Memoised:
 * every cell of a scenario scores the same evidence texts at each of its probes.
 */
export const evidenceTerms: (text: string) => readonly string[] = boundedMemo(MEMO_CHARS.messages, (text) => {
  const terms = new Set(contentWords(text));
  if (hasCjk(text)) for (const bigram of cjkBigrams(text)) terms.add(bigram);
  return [...terms];
});

/** Coverage of one probe: the mean over its evidence steps, with each step's own share. */
export interface EvidenceCoverage {
  /** Mean of `perStep` over the steps that have terms; null when none has any. */
  value: number | null;
  /** Share of each evidence text's terms found in the context (null: the text has no terms). */
  perStep: (number | null)[];
}

/**
 * Coverage of `evidenceTexts` (the cited steps' contents) by a context already in
 * `normalizeText` form (what `contextText` returns).
 */
export function evidenceCoverage(evidenceTexts: readonly string[], normalizedContext: string): EvidenceCoverage {
  const perStep = evidenceTexts.map((text) => {
    const terms = evidenceTerms(text);
    if (terms.length === 0) return null;
    return terms.filter((term) => containsTerm(normalizedContext, term)).length / terms.length;
  });
  const scored = perStep.filter((share): share is number => share !== null);
  return { value: scored.length === 0 ? null : scored.reduce((sum, share) => sum + share, 0) / scored.length, perStep };
}

/** Coverage of a probe's evidence ids, looked up in an `evidenceIndex` (unknown ids count as no terms). */
export function probeEvidenceCoverage(
  evidence: readonly string[],
  index: ReadonlyMap<string, readonly string[]>,
  normalizedContext: string,
): EvidenceCoverage | null {
  if (evidence.length === 0) return null;
  return evidenceCoverage(
    evidence.map((id) => (index.get(id) ?? []).join('\n')),
    normalizedContext,
  );
}

/**
 * A strategy that transforms what it keeps (a summary, entity notes, memory files) holds an
 * evidence message it does not quote when one context message or memory carries at least this
 * share of the message's rarity-weighted terms, or of one sentence of it that has at least
 * EVIDENCE_MIN_TERMS terms (a summary keeps the fact, not the whole message).
 */
export const EVIDENCE_COVERAGE_THRESHOLD = 0.5;
export const EVIDENCE_MIN_TERMS = 4;

/** How an evidence message was found in the context: quoted by a message, covered by one (transforming strategies only), or not there. */
export type EvidenceFinding = 'verbatim' | 'covered' | 'missing';

/** What a probe's evidence is judged with, prepared by the harness from the scenario (never shown to the strategy or the model). */
export interface ProbeEvidence {
  /** Per cited id, the messages it names: one for a message-level citation, a step's messages for a step id (any of them counts). */
  cited: string[][];
  /**
   * Weight of each term of the cited messages: its rarity among the scenario's own messages
   * (`termRarity`, an IDF); a term in half the messages or more weighs 0.
   */
  rarity: Record<string, number>;
}

/** Share of `terms`' rarity weight one normalised context message holds (0 when the terms weigh nothing). */
function rareShare(terms: readonly string[], rarity: Readonly<Record<string, number>>, message: string): number {
  let total = 0;
  let found = 0;
  for (const term of terms) {
    const weight = rarity[term] ?? 0;
    total += weight;
    if (weight > 0 && holdsTerm(message, term)) found += weight;
  }
  return total === 0 ? 0 : found / total;
}

/**
 * Evidence recall (DESIGN §5): the share of the cited messages the context holds. A message is
 * held when a context message quotes it (its whole normalised text is inside one). That is the
 * only rule for a strategy that keeps messages verbatim (`transforms` false): nothing else it
 * could show stands for the message. For a strategy that transforms what it keeps, a message is
 * also held when one context message or memory covers at least EVIDENCE_COVERAGE_THRESHOLD of
 * the rarity weight of the message's terms, or of one of its sentences of EVIDENCE_MIN_TERMS
 * terms or more: words common in the scenario weigh (almost) nothing, so chat and boilerplate
 * shared by many messages cannot make a message held. Terms scattered across unrelated messages
 * do not count, so a context without the evidence scores 0.
 */
export function evidenceRecall(
  evidence: ProbeEvidence,
  normalizedMessages: readonly string[],
  transforms: boolean,
): { value: number | null; findings: EvidenceFinding[] } {
  const findings = evidence.cited.map((messages): EvidenceFinding => {
    const wanted = messages.map(normalizeText).filter((text) => text.length > 0);
    if (wanted.some((text) => normalizedMessages.some((message) => message.includes(text)))) return 'verbatim';
    if (!transforms) return 'missing';
    const candidates = wanted.flatMap((text) => [
      [...termSet(text)],
      ...sentences(text)
        .map((sentence) => [...termSet(sentence)])
        .filter((terms) => terms.length >= EVIDENCE_MIN_TERMS),
    ]);
    for (const terms of candidates) {
      for (const message of normalizedMessages)
        if (rareShare(terms, evidence.rarity, message) >= EVIDENCE_COVERAGE_THRESHOLD) return 'covered';
    }
    return 'missing';
  });
  return {
    value: findings.length === 0 ? null : findings.filter((finding) => finding !== 'missing').length / findings.length,
    findings,
  };
}
