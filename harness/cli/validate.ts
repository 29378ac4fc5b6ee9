/** `membench validate FILE...`: every problem located as file:line:col: path: message; exit 2 if any file is invalid. */
import type { Argv } from 'yargs';
import type { ScenarioCheck } from '../scenarios/load.js';
import { handled } from './errors.js';

export const command = 'validate <files..>';
export const describe = 'Check scenario files without running them';

/** The scenario loader (YAML, the schema) loads once `validate` is named: `--version` and `--help` never load it. */
export async function builder(yargs: Argv) {
  const { MAX_SCENARIO_BYTES } = await import('../scenarios/load.js');
  return yargs
    .positional('files', {
      type: 'string',
      array: true,
      demandOption: true,
      describe: 'scenario files (.yaml, .yml or .json)',
    })
    .option('max-bytes', { type: 'string', default: MAX_SCENARIO_BYTES, describe: 'refuse files larger than this' });
}

type ValidateArgs = Awaited<ReturnType<typeof builder>> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: ValidateArgs) => {
  const [{ checkScenarioFile, formatProblem, MAX_SCENARIO_BYTES, sameNameProblems }, { parseNumberFlag }] =
    await Promise.all([import('../scenarios/load.js'), import('../core/numbers.js')]);
  let invalid = 0;
  const maxBytes =
    parseNumberFlag('--max-bytes', argv['max-bytes'], { whole: true, min: 1, max: Number.MAX_SAFE_INTEGER }) ??
    MAX_SCENARIO_BYTES;
  const checks: ScenarioCheck[] = [];
  for (const file of argv.files) {
    const check = await checkScenarioFile(file, { maxBytes });
    checks.push(check);
    for (const problem of check.problems) process.stdout.write(`${formatProblem(problem)}\n`);
    if (!check.scenario) invalid++;
  }
  // What only a run of these files together refuses: two of them under one name.
  for (const problem of sameNameProblems(checks)) {
    process.stdout.write(`${formatProblem(problem)}\n`);
    invalid++;
  }
  const total = argv.files.length;
  process.stdout.write(
    `${total} file${total === 1 ? '' : 's'} checked: ${total - invalid} valid, ${invalid} invalid\n`,
  );
  return invalid > 0 ? 2 : 0;
});
