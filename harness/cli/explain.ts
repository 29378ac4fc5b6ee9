/** `membench explain [RUN]`: the interview questions answered from a run's own figures, in English and Chinese. */
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Argv } from 'yargs';
import type { Language } from '../../reports/explain.js';
import { MembenchError } from '../core/errors.js';
import { shortenText } from '../core/text.js';
import { handled } from './errors.js';

export const command = 'explain [run]';
export const describe =
  'Answer the classic memory questions (choosing K, what summaries lose, vector vs RAG, files vs a database, sync vs async) from a run, citing its figures';

export function builder(yargs: Argv) {
  return yargs
    .positional('run', {
      type: 'string',
      describe: 'a run dir or results.json (default: the newest run under .membench/)',
    })
    .option('lang', {
      choices: ['both', 'en', 'zh'] as const,
      default: 'both' as const,
      describe: 'language of the answers',
    })
    .example('$0 explain', 'answers from the newest run in .membench/')
    .example('$0 explain baselines/offline.json --lang zh', '中文回答');
}

type ExplainArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

/** The newest `.membench/run-*` dir that holds a results.json. */
async function newestRun(base = '.membench'): Promise<string> {
  const names = (await readdir(base).catch(() => [] as string[]))
    .filter((name) => name.startsWith('run-'))
    .sort()
    .reverse();
  for (const name of names) {
    const entries = await readdir(path.join(base, name)).catch(() => [] as string[]);
    if (entries.includes('results.json')) return path.join(base, name);
  }
  throw new MembenchError(
    'INVALID_ARGUMENT',
    `no run found under ${base}/: run \`membench run\` first, or name a run dir or results.json`,
  );
}

export const handler = handled(async (argv: ExplainArgs) => {
  const [{ renderExplainMarkdown }, { assertReportable, readResults }] = await Promise.all([
    import('../../reports/explain.js'),
    import('../results/read.js'),
  ]);
  const { result, file } = await readResults(argv.run ?? (await newestRun()));
  assertReportable(result, file);
  // Every answer would say "no cells of that kind", sending the user to run what did run, and fail.
  const failed = result.cells.filter((cell) => cell.status === 'error');
  if (failed.length === result.cells.length) {
    const first = failed[0]!;
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `${file}: every cell of the run failed (${failed.length} in error; ${first.id}: ${shortenText(first.status === 'error' ? first.error : '', 200)}): nothing to explain; rerun them with membench run --resume ${path.dirname(file)}`,
    );
  }
  const languages: Language[] = argv.lang === 'both' ? ['en', 'zh'] : [argv.lang];
  process.stdout.write(
    `# membench explain — ${path.relative(process.cwd(), file) || file}\n\n${renderExplainMarkdown(result, languages)}`,
  );
  return 0;
});
