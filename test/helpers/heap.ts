/**
 * The heap in use after a full collection, for tests that measure what a process keeps alive: the
 * collector as `node --expose-gc` gives it, reached from a test process started without the flag.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/** Bytes of heap in use once everything unreachable is collected. */
export function heapAfterGc(): number {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  gc();
  return process.memoryUsage().heapUsed;
}
