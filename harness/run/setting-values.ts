/** How the settings whose flag is more than a number or a string read their value (harness/run/settings.ts). */
import os from 'node:os';
import { MembenchError } from '../core/errors.js';
import { decimalNumber } from '../core/numbers.js';
import { DEFAULT_RETRIEVAL_K } from '../results/retrieval.js';
import { PROTOCOLS, type Protocol } from '../results/schema.js';
import { DURABILITY_MODES, type DurabilityMode } from '../../strategies/types.js';

/**
 * One worker more than the cores: a cell in mode sync spends much of its time waiting on fsync
 * (one per acknowledged message), and the extra worker keeps the cores busy meanwhile
 * (docs/default-run.md has the measurement). A run whose cells all rank only (`rankingOnly`: a
 * retrieval protocol's in-memory cells, which wait on nothing) gets as many workers as cores: an
 * extra one would only make two cells share a core and stretch each one's wall time.
 */
export function defaultWorkers(rankingOnly = false): number {
  return os.availableParallelism() + (rankingOnly ? 0 : 1);
}

/** `sync,exit` → ['sync', 'exit'], refusing unknown modes. */
export function parseDurabilities(value: string | undefined): DurabilityMode[] | undefined {
  if (value === undefined) return undefined;
  const modes = value.split(',').map((mode) => mode.trim());
  const bad = modes.find((mode) => !DURABILITY_MODES.includes(mode as DurabilityMode));
  if (bad !== undefined)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--durability ${value}: "${bad}" is not one of ${DURABILITY_MODES.join(', ')}`,
    );
  return modes as DurabilityMode[];
}

/** The retrieval k, checked, distinct and ascending (default 1, 5, 10). */
export function retrievalKs(ks: readonly number[] | undefined, given = ks?.join(',')): number[] {
  if (ks === undefined) return [...DEFAULT_RETRIEVAL_K];
  const bad = ks.find((k) => !Number.isInteger(k) || k < 1);
  if (bad !== undefined || ks.length === 0)
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--retrieval-k ${given}: expected whole numbers >= 1 separated by commas, e.g. 1,5,10`,
    );
  return [...new Set(ks)].sort((a, b) => a - b);
}

/** `1,5,10` → [1, 5, 10], refusing anything but whole numbers >= 1. */
export function parseRetrievalK(value: string | undefined): number[] | undefined {
  if (value === undefined) return undefined;
  // In decimal, as every number flag is read: 0x10 is no k.
  return retrievalKs(value.split(',').map(decimalNumber), value);
}

/** `--protocol` given once: yargs hands a repeated flag over as a list, refused here with its values. */
export function oneProtocol(value: unknown): Protocol | undefined {
  checkProtocolOption(value);
  return value;
}

/**
 * `--cache FILE` as given, or false for `--no-cache`; an empty path (`--cache "$UNSET"`) is refused
 * here, naming the flag, instead of failing in the store's first write (ENOENT, link '.N.new' -> '').
 */
export function cacheFlag(raw: string | false, flag: string): string | false {
  if (raw !== false && raw.trim() === '')
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${flag} is empty (an unset variable?): give the cache file, or --no-cache for no cache`,
    );
  return raw;
}

/** `--judge` as given: a flag with no value (`--judge` last, or before another flag) is refused, never read as "no judge". */
export function judgeFlag(values: readonly string[] | undefined): string[] | undefined {
  if (values === undefined) return undefined;
  if (values.length === 0 || values.some((value) => value.trim() === ''))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      '--judge needs a value: offline (deterministic rules) or openai:NAME (an LLM judge)',
    );
  return [...values];
}

/** A protocol the library was handed (one of PROTOCOLS, one value), or a refusal naming what was given. */
export function checkProtocolOption(protocol: unknown): asserts protocol is Protocol | undefined {
  if (protocol === undefined) return;
  if (Array.isArray(protocol))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--protocol is given ${protocol.length} times (${protocol.join(', ')}): give one; each paper's protocol scores its own dataset, so run once per protocol`,
    );
  if (!(PROTOCOLS as readonly unknown[]).includes(protocol))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--protocol ${String(protocol)}: expected one of ${PROTOCOLS.join(', ')}`,
    );
}
