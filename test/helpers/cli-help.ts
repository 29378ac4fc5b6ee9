/**
 * A command's `--help` as docs/cli.md holds it (the block scripts/cli-reference.mjs generates from the
 * built CLI): test/docs/docs.test.ts holds that block to what the CLI prints, so a test that reads a
 * help text needs no CLI process of its own.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

const CLI_DOC = path.resolve(import.meta.dirname, '../../docs/cli.md');

/** The text of `membench COMMAND --help` (`membench --help` without a command). */
export function commandHelp(command?: string): string {
  const title = `## \`membench ${command === undefined ? '' : `${command} `}--help\``;
  const doc = readFileSync(CLI_DOC, 'utf8');
  const start = doc.indexOf(`${title}\n`);
  if (start < 0) throw new Error(`docs/cli.md: no section ${title}`);
  const fence = doc.indexOf('```\n', start) + 4;
  return doc.slice(fence, doc.indexOf('\n```', fence));
}
