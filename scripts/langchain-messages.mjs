// @langchain/core's messages index re-exports its message transformers (trimMessages and co.), which
// import LangChain's runnables and through them langsmith and zod 3: about 1 MB evaluated by every
// process that imports a message class, and used only by the LangGraph adapter. The bundles
// (bundle-agent.mjs, bundle-cli.mjs) read the index without them.
import { readFile } from 'node:fs/promises';
import path from 'node:path';

export const MESSAGES_INDEX = /[\\/]@langchain[\\/]core[\\/]dist[\\/]messages[\\/]index\.js$/; // esbuild takes Go regexps: no flags
const TRANSFORMERS = ['defaultTextSplitter', 'filterMessages', 'mergeMessageRuns', 'trimMessages'];

/** esbuild's onLoad result for the messages index at `file`, its transformers left out; throws when they cannot be. */
export async function messagesIndexWithoutTransformers(file) {
  let source = await readFile(file, 'utf8');
  source = source.replace(/^import \{[^}]*\} from "\.\/transformers\.js";\n/mu, '');
  for (const name of TRANSFORMERS)
    source = source
      .replace(new RegExp(`\\b${name}: \\(\\) => ${name},?\\s*`, 'gu'), '')
      .replace(new RegExp(`\\b${name}, `, 'gu'), '')
      .replace(new RegExp(`, ${name}\\b`, 'gu'), '');
  if (/transformers\.js/u.test(source) || TRANSFORMERS.some((name) => new RegExp(`\\b${name}\\b`, 'u').test(source)))
    throw new Error(`${file}: its transformers could not be left out (has @langchain/core changed its index?)`);
  return { contents: source, loader: 'js', resolveDir: path.dirname(file) };
}
