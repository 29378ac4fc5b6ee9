/**
 * A reader that stops early (`membench ... | head -1`) closes the pipe on stdout: the command must
 * neither print a stack trace nor change its exit code for it.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';
import { BIN, ROOT } from './helpers.js';

/** Runs the CLI with its stdout's reading end closed before anything is written; its exit code and stderr. */
function withClosedStdout(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

describe('stdout closed by its reader', () => {
  it('lists the strategies and exits 0 without an error of its own', async () => {
    const { code, stderr } = await withClosedStdout(['list', 'strategies']);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /u);
    expect(code).toBe(0);
  });

  it('keeps validate exit code 2 for an invalid file', async () => {
    const file = path.join(await tempDir('membench-closed-stdout-'), 'bad.yaml');
    writeFileSync(file, 'name: bad\nsteps: 5\n');
    const { code, stderr } = await withClosedStdout(['validate', file]);
    expect(stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /u);
    expect(code).toBe(2);
  });

  it('keeps exit code 2 with stderr closed too (2>&1 | head -1): the rest of its error written into a closed pipe', async () => {
    const dir = await tempDir('membench-closed-stderr-');
    const spec = path.join(dir, 'many.yaml');
    writeFileSync(spec, 'name: g1\nfacts: {fact: 100000}\n'); // three problems, one line each
    const code = await new Promise<number | null>((resolve) => {
      const script = `"$0" "$1" generate "$2" -o "$3" 2>&1 | head -1 >/dev/null; exit \${PIPESTATUS[0]}`;
      const child = spawn('bash', ['-c', script, process.execPath, BIN, spec, path.join(dir, 'out')], {
        cwd: ROOT,
        stdio: 'ignore',
      });
      child.on('close', resolve);
    });
    expect(code).toBe(2);
  });
});
