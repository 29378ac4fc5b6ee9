/**
 * Builds the agent processes' startup snapshot: `scripts/bundle-agent.mjs` compiles this file with
 * esbuild (a snapshot builder script has no `exports`, which tsc's CommonJS output writes to) and runs
 * `node --snapshot-blob agent-entry.snapshot.blob --build-snapshot agent-snapshot.cjs`, which
 * evaluates the one-file agent bundle here, once, and saves the heap. A process started with
 * `--snapshot-blob` then begins with every module evaluated (about 25 ms of CPU less than running
 * the bundle from V8's code cache) and runs the bundle's start function. While a snapshot is built
 * only Node's built-in modules can be required, so the bundle's `require` goes through `load`,
 * which a process started from the snapshot points at the bundle's own place before it starts
 * (better-sqlite3 and the other packages are required on first use, never while building).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { startupSnapshot } from 'node:v8';

const bundle = path.join(__dirname, 'agent-entry.bundle.cjs');
let load: (id: string) => unknown = require;
startupSnapshot.addDeserializeCallback(() => {
  load = createRequire(bundle);
});
const run = new Function('exports', 'require', 'module', '__filename', '__dirname', readFileSync(bundle, 'utf8')) as (
  exports: object,
  require: (id: string) => unknown,
  module: { exports: object },
  filename: string,
  dirname: string,
) => void;
const module_ = { exports: {} };
run(module_.exports, (id) => load(id), module_, bundle, path.dirname(bundle));
