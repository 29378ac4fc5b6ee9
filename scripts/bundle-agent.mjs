// Bundles the agent entry (dist/harness/process/agent-entry.js) into one CommonJS file, which
// agent-boot.js runs with V8's code cache: a process started for every crash resolves no modules.
// One substitution keeps the bundle to what an agent runs: @langchain/core's messages index also
// re-exports its message transformers (trimMessages and co.), which import LangChain's runnables
// and through them langsmith and zod 3, about 1 MB evaluated at every start and never used here;
// the bundle reads the same index without them. And the LangChain adapter (`langchain:NAME`, about
// 1.2 MB with LangChain's models and tracers) stays out: bundled processes run built-in strategies
// only, and the loader imports the adapter lazily from dist when asked.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { build } from 'esbuild';

const MESSAGES_INDEX = /[\\/]@langchain[\\/]core[\\/]dist[\\/]messages[\\/]index\.js$/; // esbuild takes Go regexps: no flags
const TRANSFORMERS = ['defaultTextSplitter', 'filterMessages', 'mergeMessageRuns', 'trimMessages'];

const withoutTransformers = {
  name: 'messages-without-transformers',
  setup(builder) {
    builder.onResolve({ filter: /^\.\/langchain\.js$/ }, (args) => (args.importer.endsWith(path.join('strategies', 'loader.js')) ? { path: '../../strategies/langchain.js', external: true } : undefined));
    builder.onLoad({ filter: MESSAGES_INDEX }, async (args) => {
      let source = await readFile(args.path, 'utf8');
      source = source.replace(/^import \{[^}]*\} from "\.\/transformers\.js";\n/mu, '');
      for (const name of TRANSFORMERS) source = source.replace(new RegExp(`\\b${name}: \\(\\) => ${name},?\\s*`, 'gu'), '').replace(new RegExp(`\\b${name}, `, 'gu'), '').replace(new RegExp(`, ${name}\\b`, 'gu'), '');
      if (/transformers\.js/u.test(source) || TRANSFORMERS.some((name) => new RegExp(`\\b${name}\\b`, 'u').test(source))) throw new Error(`${args.path}: its transformers could not be left out (has @langchain/core changed its index?)`);
      return { contents: source, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

await build({
  entryPoints: ['dist/harness/process/agent-entry.js'],
  bundle: true,
  platform: 'node',
  format: 'cjs',
  external: ['better-sqlite3', 'hnswlib-node', 'tiktoken', 'openai', 'yaml', 'tsx', '@langchain/classic'],
  define: { 'import.meta.url': '__import_meta_url' },
  banner: { js: "const __import_meta_url = require('node:url').pathToFileURL(__filename).href;" },
  outfile: 'dist/harness/process/agent-entry.bundle.cjs',
  logLevel: 'warning',
  plugins: [withoutTransformers],
  metafile: true,
}).then((result) => {
  if (process.env.MEMBENCH_BUNDLE_META) return import('node:fs').then((fs) => fs.writeFileSync(process.env.MEMBENCH_BUNDLE_META, JSON.stringify(result.metafile)));
});
