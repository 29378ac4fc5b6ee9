/** `membench merge DIR...`: joins the shards of a run (`run --shard i/n`) and renders every report of the whole run. */
import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { Argv } from 'yargs';
import { MembenchError } from '../core/errors.js';
import { handled } from './errors.js';

export const command = 'merge <shards..>';
export const describe = 'Join the shards of one run (membench run --shard i/n) into one run dir with every report';

export function builder(yargs: Argv) {
  return yargs
    .positional('shards', {
      type: 'string',
      array: true,
      demandOption: true,
      describe: 'the run dirs (or results.json files) of the shards',
    })
    .option('out', { alias: 'o', type: 'string', describe: 'output dir (default: a fresh .membench/run-<timestamp>)' })
    .option('overwrite', { type: 'boolean', default: false, describe: 'replace the files of an earlier run in --out' })
    .option('recall-threshold', {
      type: 'string',
      describe: 'junit.xml fails cells whose context recall is below this share (0..1)',
    })
    .example('$0 merge shard-1 shard-2 shard-3 --out merged', 'the three shards of a CI matrix as one run');
}

type MergeArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: MergeArgs) => {
  const [
    reports,
    { mergeShards },
    { readResults },
    { warnOverwriteWithoutManifest },
    { withOutDirLock },
    numbers,
    limits,
    { writtenFiles },
  ] = await Promise.all([
    import('../../reports/index.js'),
    import('../../reports/merge.js'),
    import('../results/read.js'),
    import('../core/manifest.js'),
    import('../run/out-lock.js'),
    import('../core/numbers.js'),
    import('../run/limits.js'),
    import('./common.js'),
  ]);
  const {
    assertWritableOutDir,
    defaultOutDir,
    renderConsoleSummary,
    tableWidth,
    REPORT_FILES_WITHOUT_MANIFEST,
    writeRunOutput,
  } = reports;
  const { parseNumberFlag } = numbers;
  const { RUN_LIMITS } = limits;
  const threshold = parseNumberFlag('--recall-threshold', argv['recall-threshold'], RUN_LIMITS.recallThreshold);
  const out = argv.out ?? defaultOutDir(new Date());
  const inputs = [];
  for (const target of argv.shards) inputs.push(await readResults(target));
  // --overwrite there would replace a shard by the merged run: a merge to redo (a shard rerun) would find it gone.
  const outDir = await realpath(out).catch(() => path.resolve(out));
  for (const { file } of inputs)
    if (path.dirname(await realpath(file)) === outDir)
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--out ${out}: it holds ${file}, one of the shards being merged: choose another --out`,
      );
  assertWritableOutDir(out, argv.overwrite);
  await warnOverwriteWithoutManifest(out, argv.overwrite, REPORT_FILES_WITHOUT_MANIFEST, (warning) =>
    process.stderr.write(`${warning}\n`),
  );
  const result = mergeShards(inputs);
  const files = await withOutDirLock(out, 'membench merge', () =>
    writeRunOutput(result, out, {
      overwrite: argv.overwrite,
      command: 'membench merge',
      ...(threshold !== undefined ? { recallThreshold: threshold } : {}),
    }),
  );
  process.stdout.write(
    `${renderConsoleSummary(result, { color: Boolean(process.stdout.isTTY), width: tableWidth(process.stdout) })}\n`,
  );
  process.stdout.write(
    `merged ${inputs.length} shard${inputs.length === 1 ? '' : 's'} (${result.cells.length} cells) into ${writtenFiles(out, files)}\n`,
  );
  return 0;
});
