/**
 * The worker thread of `membench serve` (it exports nothing): answers the large requests the
 * server hands it (server.ts), over the offline model and the embedder it names, so that the
 * server's own thread answers small requests meanwhile.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { TokenCounter } from '../core/tokens.js';
import { createAnswerer, parseBody, refusal } from './answers.js';
import { createEmbedder, OfflineModel } from './index.js';
import type { WorkerReply, WorkerRequest } from './server.js';

const { embedder } = workerData as { embedder: string };
const answerer = createAnswerer({
  model: new OfflineModel(),
  embedder: createEmbedder(embedder),
  tokens: new TokenCounter('offline'),
  idPrefix: 'chatcmpl-membench-large-',
});

parentPort!.on('message', async (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    const answer = await answerer.answer(request.route, parseBody(request.body));
    reply = { id: request.id, status: 200, kind: answer.kind, text: JSON.stringify(answer.body) };
  } catch (error) {
    const refused = refusal(error);
    reply = { id: request.id, status: refused.status, kind: 'error', text: JSON.stringify(refused.body) };
  }
  parentPort!.postMessage(reply);
});
