/** The `membench` command line: one module per command, each a thin layer over the library. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { MEMBENCH_VERSION } from '../core/package-info.js';
import * as importDataset from './import.js';
import * as bench from './bench.js';
import * as compare from './compare.js';
import * as explain from './explain.js';
import * as generate from './generate.js';
import * as list from './list.js';
import * as merge from './merge.js';
import * as report from './report.js';
import * as run from './run.js';
import * as serve from './serve.js';
import * as tune from './tune.js';
import * as validate from './validate.js';

export async function main(argv: string[]): Promise<void> {
  await yargs(argv)
    .scriptName('membench')
    .usage('$0 <command> [options]\n\nBenchmark LLM memory strategies: tokens, latency, recall, durability.')
    .command(run)
    .command(validate)
    .command(list)
    .command(compare)
    .command(report)
    .command(merge)
    .command(tune)
    .command(explain)
    .command(importDataset)
    .command(generate)
    .command(bench)
    .command(serve)
    .demandCommand(1, 'name a command: run, validate or list (see --help)')
    .strict()
    .version(MEMBENCH_VERSION)
    .help()
    .alias('h', 'help')
    .wrap(Math.min(110, process.stdout.columns || 100))
    .fail((message, error) => {
      if (error) throw error;
      process.stderr.write(`membench: ${message}\nRun "membench --help" for usage.\n`);
      process.exit(2);
    })
    .parseAsync();
}

await main(hideBin(process.argv));
