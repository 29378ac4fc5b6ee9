import { afterEach, beforeEach, expect, it } from 'vitest';
import { withStdoutOnStderr } from '../../../harness/core/stdout-to-stderr.js';

let stdout = '';
let stderr = '';
const writes = { out: process.stdout.write, err: process.stderr.write };
beforeEach(() => {
  stdout = '';
  stderr = '';
  process.stdout.write = ((chunk: string | Uint8Array) => (
    (stdout += String(chunk)), true
  )) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string | Uint8Array) => (
    (stderr += String(chunk)), true
  )) as typeof process.stderr.write;
});
afterEach(() => {
  process.stdout.write = writes.out;
  process.stderr.write = writes.err;
});

it('sends stdout to stderr while the work runs, each line led by the label once, then gives stdout back', async () => {
  await withStdoutOnStderr('strategy ./x.mjs', async () => {
    process.stdout.write('half a ');
    process.stdout.write(Buffer.from('line\nand 二 more\n'));
    process.stdout.write('\n');
  });
  process.stdout.write('membench\n');
  expect(stderr).toBe('[strategy ./x.mjs] half a line\n[strategy ./x.mjs] and 二 more\n[strategy ./x.mjs] \n');
  expect(stdout).toBe('membench\n');
});

it('gives stdout back once every diversion is over, whichever ends first', async () => {
  let endFirst!: () => void;
  const first = withStdoutOnStderr('a', () => new Promise<void>((resolve) => (endFirst = resolve)));
  await withStdoutOnStderr('b', async () => {
    endFirst();
    await first;
    process.stdout.write('from b\n');
  });
  process.stdout.write('membench\n');
  expect([stdout, stderr]).toEqual(['membench\n', '[b] from b\n']);
});
