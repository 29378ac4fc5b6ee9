/** `--strategy` values beyond the built-ins: user modules (JavaScript imported by Node, TypeScript via tsx) and `langchain:NAME`. */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MembenchError } from '../../harness/core/errors.js';
import { definitionProblems, isModuleSource, loadStrategyDefinition } from '../../strategies/loader.js';
import { buffer } from '../../strategies/buffer.js';
import { describeConformance, exchange, makeHarness } from './conformance.js';

const fixtures = fileURLToPath(new URL('../../fixtures/strategies/', import.meta.url));
const example = path.join(fixtures, 'my-memory.ts');

/** Expects a MembenchError with this code whose message matches. */
async function rejection(promise: Promise<unknown>): Promise<MembenchError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MembenchError);
  return error as MembenchError;
}

describe('the example user strategy', () => {
  it('loads from a relative .ts path against cwd and runs: open, save, load, close, reopen', async () => {
    const definition = await loadStrategyDefinition('./my-memory.ts', { cwd: fixtures });
    expect(definition.name).toBe('my-memory');
    expect(definition.options.parse({})).toEqual({ k: 3 });
    const harness = await makeHarness(definition, { k: 1 });
    try {
      let strategy = harness.create();
      await strategy.open();
      await exchange(strategy, 1, 'Lin lives in Hangzhou.', 'Got it.');
      await strategy.save({ message: new HumanMessage('Order tea.'), turn: 2 });
      await strategy.save({
        message: new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'order', args: {}, type: 'tool_call' }] }),
        turn: 2,
      });
      await strategy.save({
        message: new ToolMessage({ content: 'ordered', tool_call_id: 'c1', name: 'order' }),
        turn: 2,
      });
      const { messages } = await strategy.load({ query: 'x', turn: 3 });
      expect(messages.map((message) => message.getType())).toEqual(['human', 'ai', 'tool']);
      await strategy.close();
      strategy = harness.create();
      await strategy.open();
      expect((await strategy.load({ query: 'x', turn: 3 })).messages.map((message) => message.content)).toEqual([
        'Order tea.',
        '',
        'ordered',
      ]);
      await strategy.close();
    } finally {
      await rm(harness.dir, { recursive: true, force: true });
    }
  });

  it('loads from an absolute path and from a file: URL', async () => {
    expect((await loadStrategyDefinition(example)).name).toBe('my-memory');
    expect((await loadStrategyDefinition(pathToFileURL(example).href)).name).toBe('my-memory');
  });
});

describe('loadStrategyDefinition', () => {
  let dir: string;
  const write = async (name: string, source: string): Promise<string> => {
    await writeFile(path.join(dir, name), source);
    return `./${name}`;
  };
  const load = (source: string) => loadStrategyDefinition(source, { cwd: dir });
  const valid = (name: string) =>
    `export default { name: ${JSON.stringify(name)}, description: 'x', defaultDurability: 'none', options: { parse: (v) => v, safeParse: (v) => ({ success: true, data: v }) }, create: () => ({}) };\n`;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'membench-loader-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('resolves built-in names and langchain:NAME too', async () => {
    expect(await loadStrategyDefinition('buffer')).toBe(buffer);
    expect((await loadStrategyDefinition('langchain:buffer-window')).name).toBe('langchain:buffer-window');
  });

  it('accepts a named `strategy` export, and .mjs / CommonJS-style .ts modules', async () => {
    expect(
      (await load(await write('named.mjs', valid('named').replace('export default', 'export const strategy =')))).name,
    ).toBe('named');
    expect((await load(await write('plain.ts', valid('plain-ts')))).name).toBe('plain-ts'); // no package.json here: tsx compiles it as CommonJS
  });

  it("loads a CommonJS-compiled .ts that imports membench's own runtime, as docs/own-strategy.md's example does", async () => {
    // A project without "type": "module": tsx compiles the file as CommonJS, so `membench` is required, not imported.
    await mkdir(path.join(dir, 'node_modules'), { recursive: true });
    await symlink(path.resolve(fixtures, '../..'), path.join(dir, 'node_modules', 'membench'), 'dir');
    const source = valid('uses-membench')
      .replace('export default {', 'export default defineStrategy({')
      .replace(/;\n$/u, ');\n');
    const spec = await write('uses-membench.ts', `import { defineStrategy } from 'membench';\n${source}`);
    expect((await load(spec)).name).toBe('uses-membench');
  });

  it('imports JavaScript through Node itself and TypeScript through tsx', async () => {
    // tsx marks the URL of each module it loads with its namespace; Node's own import does not.
    const reportsUrl = (name: string) =>
      valid(name).replace("description: 'x'", 'description: import.meta.url ?? String(module.id)');
    for (const file of ['esm.mjs', 'esm.js']) {
      const definition = await load(await write(file, reportsUrl(file.replace('.', '-'))));
      expect(definition.description).toMatch(/\?load=\d+$/u); // Node's URL, no tsx namespace
      expect(definition.description.split('?')[0]).toBe(pathToFileURL(path.join(dir, file)).href);
    }
    const commonJs = await load(
      await write('common.cjs', valid('common-cjs').replace('export default', 'module.exports =')),
    );
    expect(commonJs.name).toBe('common-cjs');
    expect((await load(await write('typed.ts', reportsUrl('typed-ts')))).description).toMatch(/\?tsx-namespace=/u);
  });

  it.each([
    ['counts-loads.mjs', (name: string) => valid(name)],
    ['counts-loads.cjs', (name: string) => valid(name).replace('export default', 'module.exports =')],
  ])(
    'evaluates %s again at each load, as tsx does: module-level state is not shared by two loads',
    async (file, source) => {
      const spec = await write(
        file,
        `globalThis.membenchTestLoads = (globalThis.membenchTestLoads ?? 0) + 1;\n${source('counts-loads')}`,
      );
      const loads = globalThis as { membenchTestLoads?: number };
      try {
        expect((await load(spec)).name).toBe('counts-loads');
        await load(spec);
        expect(loads.membenchTestLoads).toBe(2);
      } finally {
        delete loads.membenchTestLoads;
      }
    },
  );

  it('imports a JavaScript module whose imports only tsx resolves (an extensionless .ts) through tsx', async () => {
    await write('helper.ts', 'export const helperName: string = "helped";\n');
    const spec = await write(
      'uses-helper.mjs',
      `import { helperName } from './helper';\n${valid('x').replace('"x"', 'helperName')}`,
    );
    expect((await load(spec)).name).toBe('helped');
  });

  it('names the file when it does not exist', async () => {
    const error = await rejection(load('./nope.ts'));
    expect(error.code).toBe('UNKNOWN_STRATEGY');
    expect(error.message).toBe(`strategy module ./nope.ts (${path.join(dir, 'nope.ts')}) not found`);
  });

  it('lists the choices for a bare name that is neither built-in nor a path', async () => {
    const error = await rejection(load('nope'));
    expect(error.code).toBe('UNKNOWN_STRATEGY');
    expect(error.message).toMatch(
      /^unknown strategy "nope": built-ins are buffer, window.*; LangChain memories are langchain:buffer, .*; or give the path of a module/u,
    );
  });

  it('points at the built-in a typo away from an unknown name, and at none when no name is close', async () => {
    expect((await rejection(load('bufer'))).message).toMatch(
      /^unknown strategy "bufer" \(did you mean buffer\?\): built-ins are /u,
    );
    expect((await rejection(load('sumary-bufer'))).message).toMatch(
      /^unknown strategy "sumary-bufer" \(did you mean summary-buffer\?\): /u,
    );
    expect((await rejection(load('nope'))).message).not.toMatch(/did you mean/u);
  });

  it('refuses a file that is not a module by its extension, and points a scenario file at -c', async () => {
    const scenario = await write('small.yaml', 'name: small\nsteps:\n  - user: hi\n    assistant: hello\n');
    const error = await rejection(load(scenario));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe(
      `strategy module ./small.yaml (${path.join(dir, 'small.yaml')}) is a .yaml file: a strategy module is a .js, .mjs, .cjs or .ts file (or .mts, .cts, .jsx, .tsx); it looks like a scenario file: give it with -c (--scenario)`,
    );
    const notes = await write('notes.txt', 'hello\n');
    expect((await rejection(load(notes))).message).toBe(
      `strategy module ./notes.txt (${path.join(dir, 'notes.txt')}) is a .txt file: a strategy module is a .js, .mjs, .cjs or .ts file (or .mts, .cts, .jsx, .tsx)`,
    );
    // YAML that is no scenario gets no hint.
    const other = await write('other.yml', 'seed: 1\n');
    expect((await rejection(load(other))).message).toMatch(/is a \.yml file: a strategy module is .*\.tsx\)$/u);
  });

  it('reports a syntax error with its line and column, without a stack', async () => {
    const spec = await write('syntax.ts', 'export default {\n  name: "x",\n  create( => 1,\n};\n');
    const error = await rejection(load(spec));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toBe(
      `strategy module ./syntax.ts (${path.join(dir, 'syntax.ts')}) could not be loaded: syntax error at ${path.join(dir, 'syntax.ts')}:3:10: Expected identifier but found "=>"`,
    );
  });

  it('reports a module that throws while loading', async () => {
    const error = await rejection(
      load(await write('throws.ts', 'throw new Error("no API key configured");\nexport default {};\n')),
    );
    expect(error.message).toMatch(/throws\.ts\) could not be loaded: it threw Error: no API key configured$/u);
    expect(error.message).not.toMatch(/\n|at /u);
  });

  it('reports a missing dependency of the module', async () => {
    const error = await rejection(
      load(await write('dependency.ts', 'import "no-such-package-xyz";\nexport default {};\n')),
    );
    expect(error.message).toMatch(/dependency\.ts\) could not be loaded: Cannot find module 'no-such-package-xyz'$/u);
    const fromJs = await rejection(
      load(await write('dependency.mjs', 'import "no-such-package-xyz";\nexport default {};\n')),
    );
    expect(fromJs.message).toMatch(
      /dependency\.mjs\) could not be loaded: Cannot find package 'no-such-package-xyz' imported from /u,
    );
  });

  it('reports a module without a strategy export, listing what it exports', async () => {
    const error = await rejection(load(await write('empty.mjs', 'export const helper = 1;\n')));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(
      /empty\.mjs\) exports no strategy: expected `export default \{ name, .*\(it exports: helper\)$/u,
    );
  });

  it('says an export of null is null (it read as no export, "it exports: default")', async () => {
    for (const [name, text] of [
      ['null-default.mjs', 'export default null;\n'],
      ['null-strategy.mjs', 'export const strategy = null;\n'],
    ]) {
      const error = await rejection(load(await write(name!, text!)));
      expect(error.message).toMatch(/does not export a valid strategy definition:$/u);
      expect(error.details).toEqual(['  - the export is null, not an object']);
    }
  });

  it('reports every missing or invalid field of the definition', async () => {
    const error = await rejection(
      load(
        await write('partial.mjs', 'export default { name: "has space", defaultDurability: "always", options: {} };\n'),
      ),
    );
    expect(error.message).toMatch(/partial\.mjs\) does not export a valid strategy definition:$/u);
    expect(error.details).toEqual([
      '  - invalid "name" (a string of letters, digits, "-", "_" or ":"; it names the strategy in reports and in --param NAME.KEY=V)',
      '  - missing "description" (a string)',
      '  - invalid "options" (a zod schema of the knobs, e.g. z.object({}))',
      '  - invalid "defaultDurability" (one of sync, async, exit, none)',
      '  - missing "create" (a function (context, options) returning the strategy)',
    ]);
  });

  it('refuses a name that collides with a built-in, or takes the langchain: prefix', async () => {
    const collision = await rejection(load(await write('collide.mjs', valid('window'))));
    expect(collision.message).toMatch(
      /collide\.mjs\) is named "window", which is a built-in strategy: give it another name$/u,
    );
    const reserved = await rejection(load(await write('reserved.mjs', valid('langchain:mine'))));
    expect(reserved.message).toMatch(/reserved\.mjs\) is named "langchain:mine": the prefix "langchain:" is reserved/u);
  });

  it('refuses a directory', async () => {
    expect((await rejection(load('.'))).message).toMatch(/ is not a file$/u);
  });
});

describe('isModuleSource / definitionProblems', () => {
  it('tells paths from names', () => {
    for (const source of ['./a.ts', '../a.js', '/abs/a.mjs', 'a.ts', 'dir/a', 'file:///a.ts'])
      expect(isModuleSource(source)).toBe(true);
    for (const source of ['buffer', 'summary-buffer', 'langchain:buffer']) expect(isModuleSource(source)).toBe(false);
  });

  it('accepts every built-in definition', () => {
    expect(definitionProblems(buffer)).toEqual([]);
  });

  it('rejects a non-object export', () => {
    expect(definitionProblems(() => undefined)).toEqual(['the export is function, not an object']);
  });
});

// A user strategy is a peer of the built-ins: the same conformance suite runs on it.
describeConformance(await loadStrategyDefinition(example));
