/**
 * Built-in scenarios live as data files in `scenarios/`, built-in generated suites as generator
 * specs in `scenarios/suites/` (expanded into their scenarios, in memory, when named: the suite's
 * name for all of them, a scenario's own name, `generated-en`, for that one); a name on the CLI
 * resolves here, a path is read as given.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { MembenchError } from '../core/errors.js';
import { didYouMean } from '../core/user-input.js';
import { checkScenarioFile, formatProblem, type CheckOptions, type ScenarioCheck } from './load.js';
import { generatedScenarioName, generateWorkload } from './generator.js';
import { checkSpecFile, checkSpecText } from './generator-spec.js';
import { BUILTIN_SCENARIO_DIR } from '../core/package-info.js';
import { builtinScenarioNames, builtinSuiteNames, dataFiles, SCENARIO_FILE, SUITE_DIR } from './builtin-names.js';
import type { Scenario } from './format.js';

export { builtinScenarioNames, builtinSuiteNames };

/** The nameOrPath file of a built-in suite name; undefined for a path or a scenario name. */
export function builtinSuiteFile(nameOrPath: string): string | undefined {
  if (looksLikePath(nameOrPath) || existsSync(nameOrPath) || dataFiles(BUILTIN_SCENARIO_DIR).has(nameOrPath))
    return undefined;
  return dataFiles(SUITE_DIR).get(nameOrPath);
}

function looksLikePath(nameOrPath: string): boolean {
  return nameOrPath.includes('/') || nameOrPath.includes(path.sep) || SCENARIO_FILE.test(nameOrPath);
}

let members: Map<string, string> | undefined;

/**
 * The scenarios the built-in suites generate, by name (`generated-en`), each with its suite's name:
 * read from the package's spec files once a process (they do not change while it runs).
 */
function suiteMembers(): Map<string, string> {
  if (members) return members;
  members = new Map();
  for (const [suite, file] of dataFiles(SUITE_DIR)) {
    const { spec } = checkSpecText(readFileSync(file, 'utf8'), file);
    for (const language of spec?.languages ?? []) members.set(generatedScenarioName(spec!.name, language), suite);
  }
  return members;
}

/**
 * The built-in suite that generates the scenario a name names (`generated-en`, as reports and
 * `membench list scenarios` name it), or undefined for a path, a scenario file's name or a suite's.
 */
export function builtinSuiteOf(nameOrPath: string): string | undefined {
  if (looksLikePath(nameOrPath) || existsSync(nameOrPath) || dataFiles(BUILTIN_SCENARIO_DIR).has(nameOrPath))
    return undefined;
  return suiteMembers().get(nameOrPath);
}

/** A built-in name or a file path to the file to read. */
export function resolveScenarioFile(nameOrPath: string): string {
  if (looksLikePath(nameOrPath) || existsSync(nameOrPath)) return nameOrPath;
  const file = dataFiles(BUILTIN_SCENARIO_DIR).get(nameOrPath);
  if (!file) {
    const named = suiteMembers();
    const suites = builtinSuiteNames().map((suite) => {
      const own = [...named].filter(([, of]) => of === suite).map(([member]) => member);
      return own.length > 0 ? `${suite} (all of ${own.join(', ')})` : suite;
    });
    throw new MembenchError(
      'UNKNOWN_SCENARIO',
      `unknown scenario "${nameOrPath}"${didYouMean(nameOrPath, [...builtinScenarioNames(), ...named.keys()])}: built-ins are ${[...dataFiles(BUILTIN_SCENARIO_DIR).keys()].join(', ')}, ${[...named.keys()].join(', ')}; generated suites: ${suites.join(', ')}; or give a path to a .yaml/.json file`,
    );
  }
  return file;
}

/**
 * Loads every selected scenario — a suite name stands for all its generated scenarios — checking
 * all of them before any runs: one error lists the problems of every invalid file. Warnings
 * (unknown keys) come back formatted. The files are read one at a time and each valid scenario is
 * kept as `keep` makes it as it comes (a run shelves a large one on disk: five
 * hundred files of LongMemEval_M's size are never all in memory, nor their parsed YAML).
 */
export async function loadScenarios<Kept = Scenario>(
  namesOrPaths: readonly string[],
  options: CheckOptions & { keep?: (scenario: Scenario) => Kept } = {},
): Promise<{ scenarios: Kept[]; warnings: string[] }> {
  const keep = options.keep ?? ((scenario: Scenario) => scenario as Kept);
  const checks: { valid: boolean; problems: ScenarioCheck['problems'] }[] = [];
  const kept: Kept[] = [];
  for (const name of namesOrPaths)
    for (const check of await checkNamed(name, options)) {
      // Only the problems stay here: the scenario is kept as `keep` made it.
      if (check.scenario) kept.push(keep(check.scenario));
      checks.push({ valid: check.scenario !== undefined, problems: check.problems });
    }
  const invalid = checks.filter((check) => !check.valid);
  if (invalid.length > 0) {
    const errors = invalid.flatMap((check) => check.problems.filter((problem) => problem.severity === 'error'));
    const what =
      invalid.length === 1
        ? `${errors[0]!.file}: invalid ${errors[0]!.file.startsWith(SUITE_DIR) ? 'generator spec' : 'scenario'}`
        : `${invalid.length} invalid scenario files`;
    throw new MembenchError(
      'INVALID_SCENARIO',
      `${what} (${errors.length} problem${errors.length === 1 ? '' : 's'})`,
      errors.map(formatProblem),
    );
  }
  const warnings = checks.flatMap((check) =>
    check.problems.filter((problem) => problem.severity === 'warning').map(formatProblem),
  );
  return { scenarios: kept, warnings };
}

/** The scenario a name or path stands for, or a built-in suite's generated scenarios (deterministic, in memory). */
async function checkNamed(nameOrPath: string, options: CheckOptions): Promise<ScenarioCheck[]> {
  // A suite's scenario named alone is generated as the whole suite generates it (the same source and cells), then picked.
  const of = builtinSuiteOf(nameOrPath);
  const suiteName = of ?? nameOrPath;
  const suite = of === undefined ? builtinSuiteFile(nameOrPath) : dataFiles(SUITE_DIR).get(of);
  if (suite) {
    const { spec: generator, problems } = await checkSpecFile(suite);
    if (!generator) return [{ problems }];
    return generateWorkload(generator, `builtin:${suiteName}`)
      .filter((generated) => of === undefined || generated.scenario.name === nameOrPath)
      .map((generated) => ({ scenario: generated.scenario, problems: [] }));
  }
  const file = resolveScenarioFile(nameOrPath);
  const check = await checkScenarioFile(file, options);
  return [
    check.scenario
      ? {
          ...check,
          scenario: {
            ...check.scenario,
            source: file.startsWith(BUILTIN_SCENARIO_DIR) ? `builtin:${check.scenario.name}` : file,
          },
        }
      : check,
  ];
}
