// Bundles the CLI (dist/harness/cli/main.js), the pool worker's entry (dist/harness/run/pool-entry.js)
// and the chart worker thread's (dist/reports/chart-worker.js) into dist/cli/: one ES module graph with shared chunks, so `membench run` and each pool worker resolve
// and evaluate a few files instead of ~900 modules (the CLI's start fell from ~1.0 s to ~0.5 s of CPU).
// What only some commands need stays behind a dynamic import() and becomes a chunk of its own, loaded
// when asked for (the OpenAI client, the peer adapters, LangChain's classic memories). Native addons
// and packages that locate files of their own (better-sqlite3, hnswlib-node, tiktoken, the canvas,
// jieba, playwright, tsx) are not bundled: they load from node_modules as before.
//
// Every bundled file keeps its own `import.meta.url` (rewritten to the URL of the file it came from),
// so paths found from it (the agent's entry, the pool's, package.json, fonts, tiktoken's ranks) are
// the ones the unbundled build finds. bin/membench.js runs dist/cli/main.mjs when it is there.
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';
import { MESSAGES_INDEX, messagesIndexWithoutTransformers } from './langchain-messages.mjs';

const outdir = path.resolve('dist/cli');
const ownImportMetaUrl = {
  name: 'own-import-meta-url',
  setup(builder) {
    builder.onLoad({ filter: /\.[cm]?js$/ }, async (args) => {
      const source = await readFile(args.path, 'utf8');
      if (!source.includes('import.meta.url')) return undefined;
      const relative = path.relative(outdir, args.path).split(path.sep).join('/');
      return {
        contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(relative)}, import.meta.url).href`),
        loader: 'js',
        resolveDir: path.dirname(args.path),
      };
    });
  },
};

// The messages index without its transformers (scripts/langchain-messages.mjs) for every module but
// the LangGraph adapter, the one that calls trimMessages: it gets the whole index, as a module of its
// own (the `?with-transformers` suffix), loaded only with the adapter's chunk; the message classes
// both re-export are one module each, shared. Any other module importing a transformer would fail
// the build (no such export).
const FULL_INDEX = '?with-transformers';
const messagesWithoutTransformers = {
  name: 'messages-without-transformers',
  setup(builder) {
    builder.onResolve({ filter: /^@langchain\/core\/messages$/ }, async (args) => {
      if (args.pluginData === FULL_INDEX || !/[\\/]strategies[\\/]adapters[\\/]langgraph\.js$/u.test(args.importer))
        return undefined;
      const resolved = await builder.resolve(args.path, {
        importer: args.importer,
        resolveDir: args.resolveDir,
        kind: args.kind,
        pluginData: FULL_INDEX,
      });
      return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: resolved.path, suffix: FULL_INDEX };
    });
    builder.onLoad({ filter: MESSAGES_INDEX }, (args) =>
      args.suffix === FULL_INDEX ? undefined : messagesIndexWithoutTransformers(args.path),
    );
  },
};

rmSync(outdir, { recursive: true, force: true });
await build({
  entryPoints: {
    main: 'dist/harness/cli/main.js',
    'pool-entry': 'dist/harness/run/pool-entry.js',
    'chart-worker': 'dist/reports/chart-worker.js',
  },
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  outdir,
  outExtension: { '.js': '.mjs' },
  external: [
    'better-sqlite3',
    'hnswlib-node',
    'tiktoken',
    '@napi-rs/canvas',
    '@node-rs/jieba',
    'playwright',
    'playwright-core',
    'tsx',
    'tsx/*',
    'esbuild',
  ],
  // The CommonJS packages bundled here call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __membenchCreateRequire } from 'node:module'; const require = __membenchCreateRequire(import.meta.url);",
  },
  plugins: [messagesWithoutTransformers, ownImportMetaUrl],
  logLevel: 'warning',
});
