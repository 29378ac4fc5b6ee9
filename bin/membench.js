#!/usr/bin/env node
// Entry point: runs the compiled CLI (built by `npm ci` / `npm install` through the prepare script).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The bundle (scripts/bundle-cli.mjs) loads a few files instead of hundreds of modules; the compiled
// modules run when it was not built.
const bundled = new URL('../dist/cli/main.mjs', import.meta.url);
const cli = existsSync(fileURLToPath(bundled)) ? bundled : new URL('../dist/harness/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write('membench: not built yet: run "npm run build" (npm ci and npm install do it for you)\n');
  process.exit(2);
}
await import(cli.href);
