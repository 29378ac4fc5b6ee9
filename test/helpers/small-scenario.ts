/**
 * A scenario file of two exchanges and one probe, for CLI tests whose check needs a run, not a long
 * conversation: a cell of it replays in milliseconds, where a built-in one (recipes-en: 16 exchanges,
 * 7 probes) takes a good part of a second, and a live one sends a handful of requests, not dozens.
 * Two exchanges, so `summary` folds (one model request per exchange) before the probe is answered.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** The scenario's text: `name`, the pork belly in the freezer and the rice on `shelf`, then where the pork belly is. */
export function smallScenarioText(name: string, shelf = 'top shelf'): string {
  return [
    `name: ${name}`,
    'steps:',
    '  - user: The pork belly is in the freezer.',
    '    assistant: Noted.',
    `  - user: The rice is on the ${shelf}.`,
    '    assistant: Noted.',
    '  - probe: Where is the pork belly?',
    '    expect: ["freezer"]',
    '',
  ].join('\n');
}

/** Writes the scenario `name` to DIR/NAME.yaml and returns its path (what `-c` takes). */
export function writeSmallScenario(dir: string, name: string, shelf?: string): string {
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, smallScenarioText(name, shelf));
  return file;
}
