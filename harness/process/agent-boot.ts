/**
 * The start of a bundled agent process (it exports nothing): runs `agent-entry.bundle.cjs` — the
 * agent entry and its dependencies in one CommonJS file, built by `npm run build` — with V8's code
 * cache, so a process that is started for every crash does not compile 2 MB of JavaScript again.
 * The first process that finds no usable cache (none yet, or another Node version) writes one
 * beside the bundle, atomically; where it cannot (a read-only install), processes compile as usual.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

const dir = path.dirname(fileURLToPath(import.meta.url));
const bundle = path.join(dir, 'agent-entry.bundle.cjs');
const cacheFile = `${bundle}.v8cache`;

let cachedData: Buffer | undefined;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
const script = new Script(Module.wrap(readFileSync(bundle, 'utf8')), {
  filename: bundle,
  ...(cachedData ? { cachedData } : {}),
});
const module = new Module(bundle);
module.filename = bundle;
const run = script.runInThisContext() as (
  exports: unknown,
  require: NodeJS.Require,
  module: Module,
  filename: string,
  dirname: string,
) => void;
// The entry runs to its `ready` message here (modules evaluated, tokenizer warm), synchronously.
run.call(module.exports, module.exports, createRequire(bundle), module, bundle, dir);

if (!cachedData || script.cachedDataRejected) {
  try {
    const temp = `${cacheFile}.${process.pid}.tmp`;
    writeFileSync(temp, script.createCachedData());
    renameSync(temp, cacheFile);
  } catch {
    // Not writable: the next process compiles too.
  }
}
