// Bundles the agent entry (dist/harness/process/agent-entry.js) into one CommonJS file, which
// agent-boot.js runs with V8's code cache: a process started for every crash resolves no modules.
// One substitution keeps the bundle to what an agent runs: @langchain/core's messages index is read
// without its message transformers (scripts/langchain-messages.mjs): about 1 MB evaluated at every
// start and never used here. And the LangChain adapter (`langchain:NAME`, about
// 1.2 MB with LangChain's models and tracers) stays out, as do the peer adapters (strategies/adapters/:
// mem0, LangGraph, and the packages they import): bundled processes run built-in strategies only,
// and the loader imports an adapter lazily from dist when asked.
//
// Then it builds the agent's startup snapshot (dist/harness/process/agent-snapshot.cjs evaluates the
// bundle, Node saves the heap): agent processes start from it, with no module to evaluate, when it
// was built by the Node that runs them (agent-entry.snapshot.json says which, and for which bundle),
// under the V8 flags they start with (SNAPSHOT_V8_FLAGS, harness/process/protocol.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { MESSAGES_INDEX, messagesIndexWithoutTransformers } from './langchain-messages.mjs';
import { SNAPSHOT_V8_FLAGS } from '../dist/harness/process/protocol.js';

const withoutTransformers = {
  name: 'messages-without-transformers',
  setup(builder) {
    builder.onResolve({ filter: /^\.\/(?:langchain|adapters\/[a-z0-9-]+)\.js$/ }, (args) =>
      args.importer.endsWith(path.join('strategies', 'loader.js'))
        ? { path: `../../strategies/${args.path.slice(2)}`, external: true }
        : undefined,
    );
    builder.onLoad({ filter: MESSAGES_INDEX }, (args) => messagesIndexWithoutTransformers(args.path));
  },
};

// memory-format.js loads yaml lazily (a process run from source loads it only for file-index);
// in the bundle it is imported statically, so the startup snapshot holds it evaluated.
const MEMORY_FORMAT = /[\\/]strategies[\\/]stores[\\/]memory-format\.js$/;
const LAZY_YAML = "createRequire(import.meta.url)('yaml')";
const staticYaml = {
  name: 'yaml-in-snapshot',
  setup(builder) {
    builder.onLoad({ filter: MEMORY_FORMAT }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes(LAZY_YAML))
        throw new Error(`${args.path}: its lazy yaml require was not found (has memory-format.ts changed?)`);
      return {
        contents: `import * as __bundledYaml from 'yaml';\n${source.replace(LAZY_YAML, '__bundledYaml')}`,
        loader: 'js',
        resolveDir: path.dirname(args.path),
      };
    });
  },
};

// better-sqlite3's JavaScript is bundled (and so evaluated into the snapshot); its addon is loaded
// at the first `new Database()`, from the package's build/Release (or build/Debug), in place of the `bindings`
// package (which finds the addon from its caller's file: the bundle, outside the package).
const sqliteAddon = {
  name: 'better-sqlite3-addon',
  setup(builder) {
    builder.onResolve({ filter: /^bindings$/ }, (args) =>
      /[\\/]better-sqlite3[\\/]/u.test(args.importer) ? { path: 'bindings', namespace: 'sqlite-addon' } : undefined,
    );
    builder.onLoad({ filter: /.*/, namespace: 'sqlite-addon' }, () => ({
      contents: [
        "const path = require('node:path');",
        'module.exports = (name) => {',
        "  const resolve = require('node:module').createRequire(__import_meta_url);",
        "  const root = path.dirname(resolve.resolve('better-sqlite3/package.json'));",
        "  const tried = ['Release', 'Debug'].map((build) => path.join(root, 'build', build, name));",
        "  const found = tried.find((file) => require('node:fs').existsSync(file));",
        "  if (!found) throw new Error(`better-sqlite3's addon is not built: none of ${tried.join(', ')} (run npm rebuild better-sqlite3)`);",
        '  return resolve(found);',
        '};',
      ].join('\n'),
      loader: 'js',
    }));
  },
};

// zod's locales: every language's error messages, re-exported as `z.locales` and `z.core.locales`.
// An agent process never switches language (zod registers English itself), yet each one would
// deserialize all of them from its snapshot: the bundle's locales index exports English only.
const ZOD_LOCALES = /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/;
const englishZod = {
  name: 'zod-english-only',
  setup(builder) {
    builder.onLoad({ filter: ZOD_LOCALES }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!/^export \{ default as en \} from "\.\/en\.js";$/mu.test(source))
        throw new Error(`${args.path}: its English locale was not found (has zod changed its locales?)`);
      return {
        contents: 'export { default as en } from "./en.js";\n',
        loader: 'js',
        resolveDir: path.dirname(args.path),
      };
    });
  },
};

/**
 * The bundle's text with every character outside ASCII written as a \u escape. esbuild escapes
 * string literals but leaves comments and regular expressions as they are, and one character past
 * Latin-1 (a Chinese pattern, a dash in a comment) makes V8 hold the whole source as a two-byte
 * string, which the startup snapshot keeps (functions compile lazily from it) and every agent
 * process deserializes: 1.5 MB more at each start. In a regular expression, with or without the
 * `u` flag, \uXXXX (a surrogate pair of them outside the BMP) means the character itself; a
 * backslash before such a character (an identity escape) would not survive, so it is refused.
 */
function asciiOnly(source) {
  if (/\\[^\x00-\x7f]/u.test(source))
    throw new Error('bundle-agent: a backslash before a non-ASCII character: it cannot be escaped as \\uXXXX');
  return source.replace(/[^\x00-\x7f]/gu, (char) =>
    Array.from({ length: char.length }, (_, i) => `\\u${char.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}

const dir = 'dist/harness/process';
const bundle = path.join(dir, 'agent-entry.bundle.cjs');

await build({
  entryPoints: ['dist/harness/process/agent-entry.js'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  external: ['hnswlib-node', 'tiktoken', 'openai', 'tsx', '@langchain/classic'],
  define: { 'import.meta.url': '__import_meta_url' },
  banner: { js: "const __import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
  outfile: bundle,
  logLevel: 'warning',
  plugins: [withoutTransformers, sqliteAddon, staticYaml, englishZod],
  metafile: true,
}).then((result) => {
  writeFileSync(bundle, asciiOnly(readFileSync(bundle, 'utf8')));
  if (process.env.MEMBENCH_BUNDLE_META)
    return import('node:fs').then((fs) =>
      fs.writeFileSync(process.env.MEMBENCH_BUNDLE_META, JSON.stringify(result.metafile)),
    );
});

// The snapshot's builder script, as CommonJS without an `exports` marker (which tsc's output writes to).
await build({
  entryPoints: ['harness/process/agent-snapshot.cts'],
  platform: 'node',
  format: 'cjs',
  outfile: path.join(dir, 'agent-snapshot.cjs'),
  logLevel: 'warning',
});
rmSync(path.join(dir, 'agent-snapshot.cjs.map'), { force: true }); // tsc's, of the file just replaced

const blob = path.join(dir, 'agent-entry.snapshot.blob');
const sidecar = path.join(dir, 'agent-entry.snapshot.json');
rmSync(sidecar, { force: true });
try {
  execFileSync(
    process.execPath,
    [
      '--no-warnings',
      ...SNAPSHOT_V8_FLAGS,
      '--snapshot-blob',
      `${blob}.tmp`,
      '--build-snapshot',
      path.join(dir, 'agent-snapshot.cjs'),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  renameSync(`${blob}.tmp`, blob);
  const { size, mtimeMs } = statSync(bundle);
  writeFileSync(
    sidecar,
    `${JSON.stringify({ node: process.version, arch: process.arch, nodeOptions: process.env.NODE_OPTIONS ?? '', bundle: path.resolve(bundle), bundleBytes: size, bundleMtimeMs: mtimeMs, v8Flags: SNAPSHOT_V8_FLAGS }, null, 2)}\n`,
  );
} catch (error) {
  // Agent processes still start, from the bundle and V8's code cache, only slower.
  rmSync(`${blob}.tmp`, { force: true });
  console.warn(
    `bundle-agent: no startup snapshot for agent processes (${String(error.stderr ?? error.message)
      .trim()
      .split('\n')
      .slice(0, 3)
      .join(' ')})`,
  );
}
