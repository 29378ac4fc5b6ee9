// Preloaded (NODE_OPTIONS=--import) into the processes of a test: appends "pid url-or-request" for
// every ES module loaded and every CommonJS module required to the file in MEMBENCH_MODULE_LOG,
// so a test can count what an agent process loads without a clock. A worker thread (which runs the
// preload too) writes "pid:threadId url-or-request".
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';
import { threadId } from 'node:worker_threads';

const log = process.env.MEMBENCH_MODULE_LOG;
const who = threadId === 0 ? String(process.pid) : `${process.pid}:${threadId}`;
if (log) {
  register(
    `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, ${JSON.stringify(who)} + ' ' + url + '\\n');
  return next(url, context);
}`)}`,
  );
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    const loaded = load.call(this, request, parent, isMain);
    appendFileSync(log, `${who} ${Module._resolveFilename(request, parent, isMain)}\n`);
    return loaded;
  };
}
