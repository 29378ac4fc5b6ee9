#!/usr/bin/env node
/**
 * Checks that two results.json files hold the same results once timing is set aside: what a
 * speed change may alter (timings, peak memory, where the time went) and, where its method
 * changed, the context tokens per turn (measured on a seeded sample of scripted turns in newer
 * versions). Everything else (recall, evidence, retrieval, answers, maintenance tokens, turns and probes
 * step by step) must be equal. A cell that ran concurrent sessions (`interleaved`) is compared on its
 * status and error only: its figures depend on how the scheduler interleaved its sessions, so two
 * runs of the same code differ there (as `membench compare` gates only its errors, invariants and
 * losses). Prints the first differences and how far context tokens moved; exits 1 when anything
 * else differs.
 *
 *   node scripts/same-results.mjs OLD/results.json NEW/results.json
 */
import { readFileSync } from 'node:fs';

/** Keys that hold timings, memory peaks or provenance: never compared. */
const TIMING = new Set([
  'durationMs',
  'cpuMs',
  'latency',
  'loadMs',
  'saveMs',
  'phases',
  'peakRssMb',
  'startedAt',
  'gitCommit',
  'machine',
  'modelMs',
  'recoveryMs',
]);
/** Context-token keys: compared apart, as a relative change. */
const CONTEXT = new Set(['contextTotal', 'contextMeanPerTurn', 'contextMax', 'contextSample', 'contextSkipped']);

function strip(value, context) {
  if (Array.isArray(value)) return value.map((item) => strip(item, context));
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [key, item] of Object.entries(value)) {
    if (TIMING.has(key)) continue;
    if (CONTEXT.has(key) || (key === 'contextTokens' && context.inTurns)) continue;
    out[key] = strip(item, { inTurns: key === 'turns' || context.inTurns });
  }
  return out;
}

function differences(a, b, where, found) {
  if (found.length >= 20) return;
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || (a === null) !== (b === null)) {
    found.push(`${where}: ${JSON.stringify(a)?.slice(0, 120)} vs ${JSON.stringify(b)?.slice(0, 120)}`);
    return;
  }
  if (a === null || typeof a !== 'object') {
    if (a !== b) found.push(`${where}: ${JSON.stringify(a)?.slice(0, 120)} vs ${JSON.stringify(b)?.slice(0, 120)}`);
    return;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) differences(a[key], b[key], `${where}.${key}`, found);
}

const [oldFile, newFile] = process.argv.slice(2);
if (!oldFile || !newFile) {
  process.stderr.write('usage: node scripts/same-results.mjs OLD/results.json NEW/results.json\n');
  process.exit(2);
}
const [before, after] = [oldFile, newFile].map((file) => JSON.parse(readFileSync(file, 'utf8')));
const found = [];
const byId = (result) => new Map(result.cells.map((cell) => [cell.id, cell]));
const [oldCells, newCells] = [byId(before), byId(after)];
/** What is compared of a cell whose figures depend on how its concurrent sessions interleaved. */
const outcome = ({ id, status, error }) => ({ id, status, error });
let interleaved = 0;
for (const id of new Set([...oldCells.keys(), ...newCells.keys()])) {
  const [a, b] = [oldCells.get(id), newCells.get(id)];
  if (a?.interleaved && b?.interleaved) {
    interleaved++;
    differences(outcome(a), outcome(b), id, found);
  } else differences(strip(a, {}), strip(b, {}), id, found);
}
differences(strip(before.durabilityMatrix, {}), strip(after.durabilityMatrix, {}), 'durabilityMatrix', found);

const moved = [];
for (const [id, cell] of oldCells) {
  const other = newCells.get(id);
  if (!other || cell.interleaved || !cell.tokens || cell.tokens.contextMeanPerTurn === 0) continue;
  moved.push({
    id,
    ratio: other.tokens.contextMeanPerTurn / cell.tokens.contextMeanPerTurn,
    total: other.tokens.contextTotal / Math.max(1, cell.tokens.contextTotal),
    sample: other.tokens.contextSample,
  });
}
process.stdout.write(
  `${oldCells.size} cells compared: ${found.length === 0 ? 'identical apart from timings and context tokens' : `${found.length}${found.length >= 20 ? '+' : ''} differences`}${interleaved > 0 ? ` (${interleaved} with concurrent sessions on their status and error only)` : ''}\n`,
);
for (const line of found) process.stdout.write(`  ${line}\n`);
for (const { id, ratio, total, sample } of moved) {
  process.stdout.write(
    `  ${id}: context tokens per turn ${((ratio - 1) * 100).toFixed(1)} %, total ${((total - 1) * 100).toFixed(1)} %${sample ? ` (measured ${sample.measured} of ${sample.turns} turns)` : ''}\n`,
  );
}
process.exit(found.length === 0 ? 0 : 1);
