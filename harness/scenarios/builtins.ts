/** Built-in scenarios live as data files in `scenarios/`; a name on the CLI resolves here, a path is read as given. */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { MembenchError } from '../core/errors.js';
import { checkScenarioFile, formatProblem, type CheckOptions } from './load.js';
import { BUILTIN_SCENARIO_DIR } from '../core/package-info.js';
import type { Scenario } from './format.js';

const SCENARIO_FILE = /\.(ya?ml|json)$/iu;

/** Names of the built-in scenarios (file names without extension), sorted. */
export function builtinScenarioNames(): string[] {
  if (!existsSync(BUILTIN_SCENARIO_DIR)) return [];
  return readdirSync(BUILTIN_SCENARIO_DIR)
    .filter((file) => SCENARIO_FILE.test(file))
    .map((file) => file.replace(SCENARIO_FILE, ''))
    .sort();
}

function looksLikePath(spec: string): boolean {
  return spec.includes('/') || spec.includes(path.sep) || SCENARIO_FILE.test(spec);
}

/** A built-in name or a file path to the file to read. */
export function resolveScenarioFile(spec: string): string {
  if (looksLikePath(spec) || existsSync(spec)) return spec;
  const file = readdirSync(BUILTIN_SCENARIO_DIR).find((name) => name.replace(SCENARIO_FILE, '') === spec);
  if (!file) {
    throw new MembenchError('UNKNOWN_SCENARIO', `unknown scenario "${spec}": built-ins are ${builtinScenarioNames().join(', ')}; or give a path to a .yaml/.json file`);
  }
  return path.join(BUILTIN_SCENARIO_DIR, file);
}

/**
 * Loads every selected scenario, checking all of them before any runs: one error lists the
 * problems of every invalid file. Warnings (unknown keys) come back formatted.
 */
export async function loadScenarios(specs: readonly string[], options: CheckOptions = {}): Promise<{ scenarios: Scenario[]; warnings: string[] }> {
  const files = specs.map(resolveScenarioFile);
  const checks = await Promise.all(files.map((file) => checkScenarioFile(file, options)));
  const invalid = checks.filter((check) => !check.scenario);
  if (invalid.length > 0) {
    const errors = invalid.flatMap((check) => check.problems.filter((problem) => problem.severity === 'error'));
    const what = invalid.length === 1 ? `${errors[0]!.file}: invalid scenario` : `${invalid.length} invalid scenario files`;
    throw new MembenchError('INVALID_SCENARIO', `${what} (${errors.length} problem${errors.length === 1 ? '' : 's'})`, errors.map(formatProblem));
  }
  const warnings = checks.flatMap((check) => check.problems.filter((problem) => problem.severity === 'warning').map(formatProblem));
  const scenarios = checks.map((check, index) => {
    const scenario = check.scenario!;
    return { ...scenario, source: files[index]!.startsWith(BUILTIN_SCENARIO_DIR) ? `builtin:${scenario.name}` : files[index]! };
  });
  return { scenarios, warnings };
}
