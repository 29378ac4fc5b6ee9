/** `membench generate SPEC --out DIR`: the scenario files of a generated workload (a spec file, or a built-in suite by name). */
import type { Argv } from 'yargs';
import { builtinSuiteNames } from '../scenarios/builtin-names.js';
import type { GeneratedScenario } from '../scenarios/generator.js';
import { handled } from './errors.js';

export const command = 'generate <spec>';
export const describe =
  'Write the scenario files of a generated workload: planted facts probed 1 to 256 exchanges later';

export function builder(yargs: Argv) {
  return yargs
    .positional('spec', {
      type: 'string',
      demandOption: true,
      describe: `a generator spec (.yaml/.json) or a built-in suite: ${builtinSuiteNames().join(', ')}`,
    })
    .option('out', {
      alias: 'o',
      type: 'string',
      describe: 'dir for the scenario files (default: .membench/generate/NAME)',
    })
    .option('seed', { type: 'string', describe: "replaces the spec's seed (same spec and seed: byte-identical files)" })
    .option('overwrite', {
      type: 'boolean',
      default: false,
      describe: 'replace scenario files left in --out by an earlier generate or import',
    })
    .example(
      '$0 generate generated -o my-suite',
      'the built-in suite as my-suite/generated-en.yaml and generated-zh.yaml',
    )
    .example(
      '$0 generate my-spec.yaml -o scenarios/mine --seed 7',
      'your own knobs (see docs/scenarios.md, "Generated workloads"), another seed',
    )
    .example(
      '$0 run -c my-suite/generated-en.yaml',
      'run a generated file like any scenario (membench run -c generated runs the built-in suite without files)',
    );
}

type GenerateArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

/** One line per generated file: exchanges, sessions, probes by label and the distances covered. */
function summary(generated: GeneratedScenario): string {
  const labels = new Map<string, number>();
  for (const probe of generated.probes) labels.set(probe.label, (labels.get(probe.label) ?? 0) + 1);
  const distances = generated.probes.flatMap((probe) => (probe.distance === null ? [] : [probe.distance]));
  const byLabel = [...labels]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([label, n]) => `${label} ${n}`)
    .join(', ');
  return `${generated.document.name}.yaml: ${generated.exchanges} exchanges in ${generated.sessions} sessions, ${generated.probes.length} probes${distances.length > 0 ? ` at distances ${Math.min(...distances)}–${Math.max(...distances)}` : ''} (${byLabel})`;
}

export const handler = handled(async (argv: GenerateArgs) => {
  const [{ generateToDir }, { parseNumberFlag, SEED_RANGE }] = await Promise.all([
    import('../commands/scenario-files.js'),
    import('../core/numbers.js'),
  ]);
  const { out, generated } = await generateToDir({
    spec: argv.spec,
    out: argv.out,
    seed: parseNumberFlag('--seed', argv.seed, SEED_RANGE),
    overwrite: argv.overwrite,
    onWarning: (warning) => process.stderr.write(`${warning}\n`),
  });
  const probes = generated.reduce((total, scenario) => total + scenario.probes.length, 0);
  process.stdout.write(
    `${generated.map(summary).join('\n')}\nwrote ${generated.length} scenario file${generated.length === 1 ? '' : 's'} (${probes} probes) to ${out}\n`,
  );
  return 0;
});
