import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findConfigFile, loadConfig, MAX_CONFIG_BYTES } from '../../../harness/run/config.js';
import { MembenchError } from '../../../harness/core/errors.js';
import { expandStrategies } from '../../../harness/run/params.js';
import { builtinStrategies } from '../../../strategies/index.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function configFile(name: string, text: string): Promise<string> {
  const dir = await tempDir('membench-config-');
  const file = path.join(dir, name);
  await writeFile(file, text);
  return file;
}

async function problems(file: string): Promise<string[]> {
  const error = await loadConfig(file).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MembenchError);
  expect((error as MembenchError).exitCode).toBe(2);
  return [...(error as MembenchError).details];
}

describe('membench.config.yaml', () => {
  it('reads the matrix, turns a params mapping into --param strings and resolves paths against its own dir', async () => {
    const file = await configFile(
      'membench.config.yaml',
      'strategies: [buffer, window, ./my-memory.ts]\nscenarios: [recipes-en, cases/own.yaml]\nparams:\n  window.k: [2, 4]\n  buffer.durability: none\nseed: 7\ndurability: sync,exit\nworkers: 2\nout: runs/latest\ndatasets: [locomo:data/locomo.json]\n',
    );
    const dir = path.dirname(file);
    // The dataset, module and scenario files are checked to be there (a missing one is located in the config file).
    await mkdir(path.join(dir, 'data'));
    await writeFile(path.join(dir, 'data/locomo.json'), '[]');
    await writeFile(path.join(dir, 'my-memory.ts'), 'export default {};\n');
    await mkdir(path.join(dir, 'cases'));
    await writeFile(path.join(dir, 'cases/own.yaml'), 'steps: []\n');
    expect(await loadConfig(file)).toEqual({
      strategies: ['buffer', 'window', path.join(dir, 'my-memory.ts')],
      scenarios: ['recipes-en', path.join(dir, 'cases/own.yaml')],
      params: ['window.k=2,4', 'buffer.durability=none'],
      seed: 7,
      durability: ['sync', 'exit'],
      workers: 2,
      out: path.join(dir, 'runs/latest'),
      datasets: [`locomo:${path.join(dir, 'data/locomo.json')}`],
    });
  });

  it('reads JSON too, and a single string where a list is expected', async () => {
    const file = await configFile(
      'membench.config.json',
      '{ "strategies": "window", "params": ["window.k=2,4"], "isolate": true }',
    );
    expect(await loadConfig(file)).toEqual({ strategies: ['window'], params: ['window.k=2,4'], isolate: true });
  });

  it('locates every problem as file:line:col: path: message', async () => {
    const file = await configFile(
      'membench.config.yaml',
      'strategies: [buffer]\nseed: seven\ntrials: 0\nstrategys: [x]\napiKey: sk-123\ndurability: [sync, later]\n',
    );
    const shown = file; // under TMPDIR, outside the working dir: named by its own path
    expect(await problems(file)).toEqual([
      `${shown}:2:7: seed: expected a whole number from 0 to 4294967295, got "seven"`,
      `${shown}:3:9: trials: expected a whole number from 1 to 1000, got 0`,
      expect.stringMatching(
        new RegExp(
          `^${shown.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&')}:4:1: strategys: unknown setting "strategys" \\(did you mean strategies\\?\\) \\(known: strategies, params, scenarios, `,
          'u',
        ),
      ),
      `${shown}:5:1: apiKey: API keys do not belong in a config file (it gets committed): set $OPENAI_API_KEY`,
      `${shown}:6:20: durability[1]: expected one of sync, async, exit, none; got "later"`,
    ]);
  });

  it('reads a plain-string params as the -p flag reads its value: the same settings, located when bad', async () => {
    const settings = (params: readonly string[]): string[] =>
      expandStrategies(builtinStrategies, params).map((spec) => spec.setting);
    const one = await loadConfig(await configFile('membench.config.yaml', 'params: window.k=3\n'));
    expect(one.params).toEqual(['window.k=3']);
    expect(settings(one.params ?? [])).toEqual(settings(['window.k=3']));
    expect(settings(one.params ?? [])).toContain('window(k=3)');
    const two = await loadConfig(await configFile('membench.config.yaml', 'params: "window.k=2,4"\n'));
    expect(settings(two.params ?? []).filter((setting) => setting.startsWith('window'))).toEqual([
      'window(k=2)',
      'window(k=4)',
    ]);
    const bad = await configFile('membench.config.yaml', 'params: window.q=3\n');
    expect(
      (await problems(bad)).map((line) => line.replace(/^.*membench\.config\.yaml/u, 'membench.config.yaml')),
    ).toEqual([
      'membench.config.yaml:1:9: params: window.q=3: strategy "window" has no knob "q" (knobs: k, maxTokens, durability)',
    ]);
  });

  it('locates what the run would refuse: an unknown strategy, bad params entries, a baseUrl with credentials', async () => {
    const located = async (file: string): Promise<string[]> =>
      (await problems(file)).map((line) => line.replace(/^.*membench\.config\.yaml/u, 'membench.config.yaml'));
    const strategy = await configFile('membench.config.yaml', 'strategies: [buffer, nosuch]\n');
    expect(await located(strategy)).toEqual([
      expect.stringMatching(
        /^membench\.config\.yaml:1:22: strategies\[1\]: unknown strategy "nosuch": built-ins are buffer, /u,
      ),
    ]);
    const knob = await configFile('membench.config.yaml', 'params:\n  - window.k=2\n  - window.q=3\n');
    expect(await located(knob)).toEqual([
      'membench.config.yaml:3:5: params[1]: window.q=3: strategy "window" has no knob "q" (knobs: k, maxTokens, durability)',
    ]);
    const value = await configFile('membench.config.yaml', 'params:\n  window.k: [0, 2]\n');
    expect(await located(value)).toEqual([
      'membench.config.yaml:2:13: params.window.k: window.k=0: Too small: expected number to be >=1',
    ]);
    const unselected = await configFile('membench.config.yaml', 'strategies: buffer\nparams:\n  - window.k=1\n');
    expect(await located(unselected)).toEqual([
      'membench.config.yaml:3:5: params[0]: window.k=1: strategy "window" is not selected (selected: buffer)',
    ]);
    const twice = await configFile('membench.config.yaml', 'params:\n  - window.k=2\n  - window.k=2\n');
    expect(await located(twice)).toEqual([
      'membench.config.yaml:2:3: params: window.k=2 window.k=2: window(k=2) is listed twice (a value repeated?): give each setting once',
    ]);
    const protocol = await configFile(
      'membench.config.yaml',
      'strategies: [bm25]\nprotocol: locomo\nparams:\n  bm25.unit: session\n',
    );
    expect(await located(protocol)).toEqual([
      "membench.config.yaml:4:14: params.bm25.unit: bm25.unit=session: --protocol locomo sets unit=message (LoCoMo's dialog recall ranks one utterance per document); unit=session would be scored and labelled as LoCoMo's figures: drop the --param, or drop --protocol to measure unit=session",
    ]);
    const credentials = await configFile(
      'membench.config.yaml',
      'model: openai:x\nbaseUrl: "http://user:sk-123@localhost/v1"\n',
    );
    const [line] = await located(credentials);
    expect(line).toBe(
      'membench.config.yaml:2:10: baseUrl: base URL http://localhost/v1 must not carry credentials, a query or a fragment; pass the key as the API key (OPENAI_API_KEY)',
    );
  });

  it('locates a model or embedder no provider answers to, as the run would refuse it', async () => {
    const file = await configFile(
      'membench.config.yaml',
      'strategies: [buffer]\nmodel: gpt-4o\nembedder: "hashed:0"\n',
    );
    expect(
      (await problems(file)).map((line) => line.replace(/^.*membench\.config\.yaml/u, 'membench.config.yaml')),
    ).toEqual([
      'membench.config.yaml:2:8: model: unknown model "gpt-4o": expected "offline" or "openai:NAME"',
      'membench.config.yaml:3:11: embedder: embedder "hashed:0": the dimension 0: expected a whole number from 1 to 65536',
    ]);
    const fine = await configFile(
      'membench.config.yaml',
      'model: openai:gpt-4o-mini\nembedder: "openai:nomic-embed-text:latest"\n',
    );
    expect(await loadConfig(fine)).toMatchObject({
      model: 'openai:gpt-4o-mini',
      embedder: 'openai:nomic-embed-text:latest',
    });
  });

  it('locates bad datasets and errata entries (an unknown dataset, a missing file, a broken errata file) and refuses a file past its size bound', async () => {
    const file = await configFile(
      'membench.config.yaml',
      'strategies: [buffer]\ndatasets:\n  - locomo:nope.json\n  - foo:bar.json\nerrata: errata.json\n',
    );
    const dir = path.dirname(file);
    await writeFile(path.join(dir, 'errata.json'), '{ "source": 5, "errata": {} }');
    const shown = file; // under TMPDIR, outside the working dir: named by its own path
    expect(await problems(file)).toEqual([
      `${shown}:3:5: datasets[0]: locomo:nope.json: no such file (${path.join(dir, 'nope.json')}; relative paths are read from the config file's dir)`,
      `${shown}:4:5: datasets[1]: foo:bar.json: expected DATASET:FILE with DATASET one of locomo, longmemeval (e.g. locomo:data/locomo10.json)`,
      `${shown}:5:9: errata: ${path.join(dir, 'errata.json')}: not a valid errata file; ${path.join(dir, 'errata.json')}:1:13: source: expected string, got 5`,
    ]);
    const missing = await configFile('membench.config.yaml', 'errata: gone.json\n');
    expect(await problems(missing)).toEqual([
      expect.stringMatching(/membench\.config\.yaml:1:1: errata: applies to dataset imports only: /u),
      expect.stringMatching(
        /membench\.config\.yaml:1:9: errata: .*gone\.json:1:1: \(document\): cannot read: no such file$/u,
      ),
    ]);
    const big = await configFile('membench.config.yaml', `# ${'x'.repeat(MAX_CONFIG_BYTES)}\nstrategies: [buffer]\n`);
    await expect(loadConfig(big)).rejects.toThrow(`over the ${MAX_CONFIG_BYTES}-byte limit for a config file`);
    const latin1 = await configFile('membench.config.yaml', '');
    await writeFile(latin1, Buffer.from('strategies: [buffer] # caf\xe9\n', 'latin1'));
    await expect(loadConfig(latin1)).rejects.toThrow('not UTF-8 text');
  });

  it('locates a strategy module or a scenario that is not there, without importing the module', async () => {
    const file = await configFile(
      'membench.config.yaml',
      'strategies: [buffer, ./nope.mjs, ./mods, ./notes.yaml]\nscenarios:\n  - recipes-en\n  - generated\n  - recipes-fr\n  - cases/gone.yaml\n',
    );
    const dir = path.dirname(file);
    await mkdir(path.join(dir, 'mods'));
    await writeFile(path.join(dir, 'notes.yaml'), 'a: 1\n');
    expect(await problems(file)).toEqual([
      `${file}:1:22: strategies[1]: strategy module ./nope.mjs (${path.join(dir, 'nope.mjs')}) not found (relative paths are read from the config file's dir)`,
      `${file}:1:34: strategies[2]: strategy module ./mods (${path.join(dir, 'mods')}) is not a file`,
      `${file}:1:42: strategies[3]: strategy module ./notes.yaml (${path.join(dir, 'notes.yaml')}) is a .yaml file: a strategy module is a .js, .mjs, .cjs or .ts file (or .mts, .cts, .jsx, .tsx)`,
      expect.stringMatching(
        new RegExp(
          `^${file}:5:5: scenarios\\[2\\]: unknown scenario "recipes-fr" \\(did you mean recipes-en\\?\\): `,
          'u',
        ),
      ),
      `${file}:6:5: scenarios[3]: cases/gone.yaml: no such file (${path.join(dir, 'cases/gone.yaml')}; relative paths are read from the config file's dir)`,
    ]);
    // A module that is there is not imported by the check: its top-level code runs once, in the run.
    const loud = await configFile('membench.config.yaml', 'strategies: [./throws.mjs]\n');
    await writeFile(path.join(path.dirname(loud), 'throws.mjs'), 'throw new Error("imported");\n');
    expect((await loadConfig(loud)).strategies).toEqual([path.join(path.dirname(loud), 'throws.mjs')]);
  });

  it('holds numbers to the bounds the flags have', async () => {
    const file = await configFile(
      'membench.config.yaml',
      'stretch: 1e12\ncrashFuzz: -1\nrecallThreshold: -1\nseed: 1.5\nlimit: 0\ncellTimeout: 0\nworkers: .inf\n',
    );
    const shown = file; // under TMPDIR, outside the working dir: named by its own path
    expect(await problems(file)).toEqual([
      `${shown}:1:10: stretch: expected a whole number from 1 to 100000, got 1000000000000`,
      `${shown}:2:12: crashFuzz: expected a whole number from 0 to 10000, got -1`,
      `${shown}:3:18: recallThreshold: expected a share between 0 and 1, got -1`,
      `${shown}:4:7: seed: expected a whole number from 0 to 4294967295, got 1.5`,
      `${shown}:5:8: limit: expected a whole number >= 1, got 0`,
      `${shown}:6:14: cellTimeout: expected a number from 1 to 604800, got 0`,
      `${shown}:7:10: workers: expected a whole number from 1 to 1024, got Infinity`,
    ]);
  });

  it('reports broken YAML and JSON at the place the parser stopped', async () => {
    expect(await problems(await configFile('c.yaml', 'seed: [1\n'))).toEqual([
      // The parser stops at the end of the file, where the ] is still missing (the scenario loader says the same).
      expect.stringMatching(/c\.yaml:2:1: \(document\): invalid YAML: Flow sequence/u),
    ]);
    expect(await problems(await configFile('c.json', '{\n  "seed": 1,\n  "model" 3\n}'))).toEqual([
      expect.stringMatching(/c\.json:3:\d+: \(document\): invalid JSON: /u),
    ]);
    expect(await problems(await configFile('c.yaml', '- a list\n'))).toEqual([
      expect.stringMatching(/c\.yaml:1:1: \(document\): expected a mapping of settings/u),
    ]);
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x]',
      ...'bcdefg'
        .split('')
        .map((name, index) => `${name}: &${name} [${Array(9).fill(`*${'abcdefg'[index]}`).join(', ')}]`),
    ].join('\n');
    expect(await problems(await configFile('c.yaml', `${bomb}\nseed: 1\n`))).toEqual([
      expect.stringMatching(
        /c\.yaml:\d+:\d+: \(document\): invalid YAML: alias \*[a-g] expands the document past 16777216 characters, the size limit of a file \(a YAML alias bomb\?\)$/u,
      ),
    ]);
  });

  it('says what a setting of the wrong shape should be, not "Invalid input"', async () => {
    const located = async (text: string): Promise<string[]> =>
      (await problems(await configFile('membench.config.yaml', text))).map((line) =>
        line.replace(/^.*membench\.config\.yaml/u, 'membench.config.yaml'),
      );
    expect(await located('params: 5\n')).toEqual([
      'membench.config.yaml:1:9: params: expected a mapping of STRATEGY.KNOB to values, like window.k: [2, 4], or a list of -p values; got 5',
    ]);
    expect(await located('params:\n  window: {k: 2}\n')).toEqual([
      'membench.config.yaml:2:3: params: expected a mapping of STRATEGY.KNOB to values, like window.k: [2, 4], or a list of -p values; "window" holds a mapping: write its knobs as window.k: 2',
    ]);
    expect(await located('strategies: 5\n')).toEqual([
      'membench.config.yaml:1:13: strategies: expected a name or a list of names, like [buffer, window]; got 5',
    ]);
    expect(await located('scenarios: [recipes-en, {a: 1}]\n')).toEqual([
      'membench.config.yaml:1:12: scenarios: expected a name or a list of names, like [recipes-en, ./my-scenario.yaml]; got a mapping in the list',
    ]);
    // An empty list would mean the default, every scenario or strategy: refused where it is written.
    expect(await located('strategies: [buffer]\nscenarios: []\n')).toEqual([
      'membench.config.yaml:2:12: scenarios: expected at least one name, like [recipes-en, ./my-scenario.yaml] (leave the key out for the default)',
    ]);
    expect(await located('strategies: []\nquestions: []\n')).toEqual([
      'membench.config.yaml:1:13: strategies: expected at least one name, like [buffer, window] (leave the key out for the default)',
      'membench.config.yaml:2:12: questions: expected at least one id (leave the key out for every question)',
    ]);
    // One that turns something off may be empty.
    const off = await loadConfig(
      await configFile('membench.config.yaml', 'strategies: [buffer]\npriceDurability: []\n'),
    );
    expect(off.priceDurability).toEqual([]);
    // `none`, as the flag takes it and as the refusal of a scenario not in the run says.
    const none = await loadConfig(
      await configFile('membench.config.yaml', 'strategies: [buffer]\npriceDurability: none\n'),
    );
    expect(none.priceDurability).toEqual([]);
    // An empty out would write into the working dir: refused where it is written, not as the flag.
    expect(await located('strategies: [buffer]\nout: ""\n')).toEqual([
      'membench.config.yaml:2:6: out: is empty: give the output dir, or remove `out` for the default',
    ]);
  });

  it('locates limit and questions given without datasets (errata and questionPrompts too), unless --dataset names some', async () => {
    const text = 'strategies: [buffer]\nlimit: 3\nquestions: [conv-26]\n';
    const file = await configFile('membench.config.yaml', text);
    const needs =
      'applies to dataset imports only: it needs `datasets:` (e.g. `datasets: [locomo:data/locomo10.json]`) or --dataset; else drop it';
    expect(await problems(file)).toEqual([`${file}:2:1: limit: ${needs}`, `${file}:3:1: questions: ${needs}`]);
    // The run's --dataset is what they act on: the file sets them for it.
    expect(await loadConfig(file, { datasets: ['locomo:data/locomo10.json'] })).toMatchObject({
      limit: 3,
      questions: ['conv-26'],
    });
  });

  it('counts the YAML documents of a file holding several, at the --- that starts the second', async () => {
    expect(await problems(await configFile('c.yaml', 'strategies: [buffer]\n---\nseed: 1\n'))).toEqual([
      expect.stringMatching(
        /c\.yaml:2:1: \(document\): invalid YAML: the file holds 2 YAML documents \(a line with --- starts one\): a config file is one YAML document$/u,
      ),
    ]);
  });

  it('locates a questionPrompts file that is missing or invalid, as it does an errata file', async () => {
    const missing = await configFile('membench.config.yaml', 'strategies: [buffer]\nquestionPrompts: gone.yaml\n');
    expect(await problems(missing)).toEqual([
      expect.stringMatching(/membench\.config\.yaml:2:1: questionPrompts: applies to dataset imports only: /u),
      expect.stringMatching(
        /membench\.config\.yaml:2:18: questionPrompts: .*gone\.yaml:1:1: \(document\): cannot read: no such file$/u,
      ),
    ]);
    const invalid = await configFile('membench.config.yaml', 'questionPrompts: prompts.yaml\n');
    await writeFile(path.join(path.dirname(invalid), 'prompts.yaml'), 'temporal: 5\n');
    expect(await problems(invalid)).toEqual([
      expect.stringMatching(/membench\.config\.yaml:1:1: questionPrompts: applies to dataset imports only: /u),
      expect.stringMatching(
        /membench\.config\.yaml:1:18: questionPrompts: .*prompts\.yaml: not a valid question prompts file; .*prompts\.yaml:1:11: temporal: /u,
      ),
    ]);
  });

  it('refuses an empty cache path (it failed in the store), and takes false for no cache', async () => {
    const empty = await configFile('c.yaml', 'cache: ""\n');
    expect(await problems(empty)).toEqual([
      expect.stringMatching(
        /c\.yaml:1:8: cache: is empty: give the cache file, or false \(--no-cache\) for no cache$/u,
      ),
    ]);
    expect(await loadConfig(await configFile('c.yaml', 'cache: false\n'))).toEqual({ cache: false });
  });

  it('names a key given twice and the line it was first given on, in YAML and in JSON, each called by its own name', async () => {
    const yaml = await configFile('c.yaml', 'strategies: [buffer]\nseed: 1\nworkers: 2\nseed: 2\n');
    expect(await problems(yaml)).toEqual([
      expect.stringMatching(
        /c\.yaml:4:1: \(document\): invalid YAML: the key "seed" is given twice in one mapping \(first on line 2\): keep one$/u,
      ),
    ]);
    const json = await configFile('c.json', '{\n  "seed": 1,\n  "trials": 2,\n  "seed": 2\n}\n');
    expect(await problems(json)).toEqual([
      expect.stringMatching(
        /c\.json:4:3: \(document\): invalid JSON: the key "seed" is given twice in one mapping \(first on line 2\)/u,
      ),
    ]);
    // What the node checks refuse is said in the file's language too.
    const proto = await configFile('c.json', '{\n  "seed": 1,\n  "__proto__": {"seed": 2}\n}\n');
    expect(await problems(proto)).toEqual([
      expect.stringMatching(/c\.json:3:3: \(document\): invalid JSON: a key "__proto__" is not read here /u),
    ]);
  });

  it('reads a lone CR (classic Mac line ends) as a line break: problems on their own lines', async () => {
    const file = await configFile('c.yaml', 'strategies: [buffer]\rseed: seven\rworkers: 2\r');
    expect(await problems(file)).toEqual([expect.stringMatching(/c\.yaml:2:7: seed: expected a whole number/u)]);
  });

  it('is found in the working dir; two at once is an error', async () => {
    const dir = await tempDir('membench-config-');
    expect(findConfigFile(undefined, dir)).toBeUndefined();
    await writeFile(path.join(dir, 'membench.config.yaml'), 'seed: 1\n');
    expect(findConfigFile(undefined, dir)).toBe(path.join(dir, 'membench.config.yaml'));
    expect(findConfigFile('other.json', dir)).toBe(path.join(dir, 'other.json'));
    // `--config "$UNSET"`: not the working dir read as a file ("DIR:1:1: (document): not a file").
    for (const empty of ['', ' '])
      expect(() => findConfigFile(empty, dir)).toThrow(
        /^--config is empty \(an unset variable\?\): give the config file/u,
      );
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'membench.config.json'), '{}');
    expect(() => findConfigFile(undefined, dir)).toThrow(
      /holds membench\.config\.yaml and membench\.config\.json: keep one config file/u,
    );
  });
});
