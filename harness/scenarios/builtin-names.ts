/**
 * Where the built-in scenario and suite files are and what they are called: read from `scenarios/`
 * without loading a scenario, so the CLI's flag descriptions can list them (scenarios/builtins.ts
 * reads the files).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { BUILTIN_SCENARIO_DIR } from '../core/package-info.js';

export const SCENARIO_FILE = /\.(ya?ml|json)$/iu;
export const SUITE_DIR = path.join(BUILTIN_SCENARIO_DIR, 'suites');

/** Data files of a dir by name (file name without extension), sorted. */
export function dataFiles(dir: string): Map<string, string> {
  if (!existsSync(dir)) return new Map();
  const files = readdirSync(dir)
    .filter((file) => SCENARIO_FILE.test(file))
    .sort();
  return new Map(files.map((file) => [file.replace(SCENARIO_FILE, ''), path.join(dir, file)]));
}

/** Names of the built-in generated suites (`scenarios/suites/NAME.yaml`), sorted. */
export function builtinSuiteNames(): string[] {
  return [...dataFiles(SUITE_DIR).keys()];
}

/** Names of the built-in scenarios (file names without extension, sorted), then of the built-in suites: what a run without `-c` runs. */
export function builtinScenarioNames(): string[] {
  return [...dataFiles(BUILTIN_SCENARIO_DIR).keys(), ...builtinSuiteNames()];
}
