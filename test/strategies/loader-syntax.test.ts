/**
 * A syntax error in a JavaScript strategy module is said with its file, line and column, as a
 * TypeScript module's is: Node's error for an ES module carries none, so the loader asks Node's own
 * check of the file (`node --check`, a child process). The loader is the built one (DIST_TESTS in
 * vitest.config.ts): its modules are imported by Node itself, as a user's are, not transformed by vitest.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type * as Errors from '../../harness/core/errors.js';
import type * as Loader from '../../strategies/loader.js';
import { builtModule } from '../helpers/built.js';
import { tempDir } from '../helpers/temp-dir.js';

const { MembenchError } = await builtModule<typeof Errors>('harness/core/errors.js');
const { loadStrategyDefinition } = await builtModule<typeof Loader>('strategies/loader.js');

const dir = await tempDir('membench-loader-syntax-');

/** The loader's message for a module `name` holding `source`. */
async function loadMessage(name: string, source: string): Promise<string> {
  await writeFile(path.join(dir, name), source);
  const error = await loadStrategyDefinition(`./${name}`, { cwd: dir }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(MembenchError);
  return (error as Errors.MembenchError).message;
}

describe('a syntax error in a JavaScript strategy module', () => {
  it('in an ES module (.mjs, and .js) names the file, line and column', async () => {
    const file = path.join(dir, 'syntax.mjs');
    expect(await loadMessage('syntax.mjs', 'export default {\n  create( => 1,\n};\n')).toBe(
      `strategy module ./syntax.mjs (${file}) could not be loaded: syntax error at ${file}:2:11: Unexpected token '=>'`,
    );
    await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
    expect(await loadMessage('syntax.js', 'const a = 1;\nexport default {\n  name: "x",\n  a: 1 2\n};\n')).toMatch(
      /syntax\.js\) could not be loaded: syntax error at .*syntax\.js:4:8: Unexpected number$/u,
    );
  });

  it('in a CommonJS module (.cjs) names them from the error itself', async () => {
    expect(await loadMessage('syntax.cjs', 'module.exports = {\n  a: 1 2\n};\n')).toMatch(
      /syntax\.cjs\) could not be loaded: syntax error at .*syntax\.cjs:2:8: Unexpected number$/u,
    );
  });

  it('thrown by the module as it runs (JSON.parse) is said without a place: the module itself parses', async () => {
    expect(await loadMessage('parses.mjs', 'JSON.parse("{oops");\nexport default {};\n')).toMatch(
      /parses\.mjs\) could not be loaded: syntax error: .*JSON/u,
    );
  });
});
