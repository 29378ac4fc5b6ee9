/** Small crash scenarios written as YAML files, for the tests that count agent processes and the modules they load. */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { tempDir } from './temp-dir.js';

async function scenarioFile(name: string, steps: string[]): Promise<string> {
  const file = path.join(await tempDir('membench-spares-'), `${name}.yaml`);
  await writeFile(file, [`name: ${name}`, 'steps:', ...steps.map((line) => `  ${line}`)].join('\n'));
  return file;
}

/** One remembered fact, a kill right after its acknowledgement, a session boundary, a probe: three processes. */
export function smallCrashScenario(): Promise<string> {
  return scenarioFile('small-crash', [
    '- user: Hi, I plan dinners.',
    '  assistant: Happy to help.',
    '- crash: after_ack',
    '- remember: My son is allergic to peanuts.',
    '- session: new',
    '- probe: Who is allergic to what?',
    '  expect: [peanut]',
  ]);
}

/**
 * An English memory and a kill right after its acknowledgement, then one Chinese memory and a kill
 * in the middle of writing it, and a Chinese probe: three processes, the first of which never meets
 * Chinese text (remember-then-crash's first two kills, without the rest).
 */
export function oneChineseMemory(): Promise<string> {
  return scenarioFile('one-chinese-memory', [
    '- user: Hi, I plan dinners.',
    '  assistant: Happy to help.',
    '- crash: after_ack',
    '- remember: My son is allergic to peanuts.',
    '- crash: mid_memory_write',
    '- remember: 我家只有一口铸铁锅。',
    '- probe: 我家有什么锅？',
    '  expect: [铸铁锅]',
  ]);
}

/** Three sessions writing side by side (a concurrent step), then a probe: five processes opened, three of them the sessions'. */
export function smallConcurrentScenario(): Promise<string> {
  return scenarioFile('small-concurrent', [
    '- user: We share this assistant.',
    '  assistant: Noted.',
    '- concurrent:',
    '    - - remember: Anna prefers oat milk.',
    '    - - remember: Ben plays football on Thursdays.',
    '    - - remember: Grandma lives in Hangzhou.',
    '- probe: Where does Grandma live?',
    '  expect: [Hangzhou]',
  ]);
}
