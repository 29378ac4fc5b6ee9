/**
 * Code membench runs but did not write (a user's strategy module, the libraries it calls) may print
 * with console.log. Its lines go to stderr, each led by `[label]` (the cell, or the module being
 * loaded), so that stdout carries membench's own output only: the tables a user reads or pipes.
 */

type Write = typeof process.stdout.write;

/** The labels of the diversions in force, the latest last: while there is one, stdout writes go to stderr. */
const labels: (() => string)[] = [];
/** process.stdout.write as it was before the first diversion. */
let original: Write | undefined;
/** Whether the last diverted write ended its line: the next one starts with a label. */
let atLineStart = true;

function diverted(this: NodeJS.WriteStream, chunk: string | Uint8Array, ...rest: unknown[]): boolean {
  const label = labels.at(-1);
  if (label === undefined) return (original as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  let lines = '';
  for (const part of text.split(/(?<=\n)/u)) {
    if (part === '') continue;
    lines += atLineStart ? `[${label()}] ${part}` : part;
    atLineStart = part.endsWith('\n');
  }
  const done = rest.find((arg) => typeof arg === 'function') as ((error?: Error | null) => void) | undefined;
  return process.stderr.write(lines, done);
}

function divert(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  if (stream.write !== diverted) {
    original = stream.write;
    stream.write = diverted as Write;
  }
  return stream;
}

/**
 * Diverts this process's stdout to stderr for good (a pool worker, an agent process: none of their
 * stdout is membench's). The stream is diverted when first asked for: a process that prints nothing
 * never opens it (1-2 ms of CPU, which every agent process would pay).
 */
export function stdoutToStderr(label: () => string): void {
  labels.push(label);
  const stdout = Object.getOwnPropertyDescriptor(process, 'stdout');
  const get = stdout?.get;
  if (!get || !stdout.configurable) return void divert(process.stdout);
  Object.defineProperty(process, 'stdout', { ...stdout, get: () => divert(get.call(process)) });
}

/** Runs `work` with this process's stdout diverted to stderr, lines led by `[label]` (a strategy module's top-level code as it loads). */
export async function withStdoutOnStderr<T>(label: string, work: () => Promise<T>): Promise<T> {
  const entry = () => label;
  labels.push(entry);
  divert(process.stdout);
  try {
    return await work();
  } finally {
    labels.splice(labels.indexOf(entry), 1);
    if (labels.length === 0 && process.stdout.write === diverted && original) process.stdout.write = original;
  }
}
