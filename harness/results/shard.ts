/** `--shard i/n`: a deterministic split of a run's planned cells, so a CI matrix can spread one run over machines. */
import { MembenchError } from '../core/errors.js';
import type { RunHeader } from './schema.js';

/** Shard `index` (1-based) of `count`: the cells whose plan position is `index - 1` modulo `count`. */
export interface Shard {
  index: number;
  count: number;
}

export type { ShardHeader } from './schema.js';

/** A run header that may carry its shard (absent: the run covers the whole plan); the same type as RunHeader. */
export type ShardedRunHeader = RunHeader;

/** Parses `2/3` into { index: 2, count: 3 }. */
export function parseShard(text: string): Shard {
  const match = /^\s*(\d+)\s*\/\s*(\d+)\s*$/u.exec(text);
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  // A count past 2^53 - 1 is read rounded: refused here in --shard's words, not by the options check's.
  if (!match || !Number.isSafeInteger(count) || count < 1 || index < 1 || index > count) {
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--shard ${text}: expected I/N with 1 <= I <= N (e.g. 2/3 runs the second of three shards)`,
    );
  }
  return { index, count };
}

/** Whether the cell at `position` of the plan belongs to the shard (every cell does without one). */
export function inShard(position: number, shard: Shard | undefined): boolean {
  return !shard || position % shard.count === shard.index - 1;
}

/** How many of `planned` cells shard `index` of `count` holds. */
export function shardSize(planned: number, shard: Shard): number {
  return Math.max(0, Math.ceil((planned - (shard.index - 1)) / shard.count));
}

/**
 * What an empty shard is, in words (its warning, the gate it fails, a report refusing it): a CI
 * matrix with a fixed number of shards runs shards past the plan's size, which hold no cell.
 */
export function emptyShardWords(shard: Shard, planned: number): string {
  const holding = Math.min(planned, shard.count);
  const which = holding === 1 ? 'only shard 1 holds one' : `only shards 1 to ${holding} hold any`;
  return `shard ${shard.index}/${shard.count} holds none of the plan's ${planned} cell${planned === 1 ? '' : 's'} (${which})`;
}
