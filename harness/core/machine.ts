/**
 * Which machine a run was timed on, as a short digest (never the host name itself: results files
 * get committed). `compare` checks latency only between runs of the same machine by default.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';

let cached: string | undefined;

/** A digest of host name, CPU model and count, memory size and platform: equal for runs on one machine. */
export function machineId(): string {
  cached ??= createHash('sha256')
    .update(
      JSON.stringify([
        os.hostname(),
        os.cpus()[0]?.model ?? '',
        os.availableParallelism(),
        os.totalmem(),
        process.platform,
        process.arch,
      ]),
    )
    .digest('hex')
    .slice(0, 12);
  return cached;
}
