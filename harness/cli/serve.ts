/** `membench serve`: the offline reference model and the hashed embedder as a local OpenAI-compatible endpoint. */
import type { Argv } from 'yargs';
import { MembenchError } from '../core/errors.js';
import { handled } from './errors.js';

export const command = 'serve';
export const describe =
  'Serve the offline model and the hashed embedder as an OpenAI-compatible endpoint on 127.0.0.1 (chat completions, embeddings) until Ctrl-C';

export function builder(yargs: Argv) {
  return yargs
    .option('port', { type: 'string', default: 8808, describe: 'port on 127.0.0.1 (0: a free one)' })
    .option('embedder', { type: 'string', default: 'hashed', describe: 'hashed or hashed:DIM' })
    .example('$0 serve --port 8808', 'then point a client at OPENAI_BASE_URL=http://127.0.0.1:8808/v1');
}

type ServeArgs = ReturnType<typeof builder> extends Argv<infer T> ? T : never;

export const handler = handled(async (argv: ServeArgs) => {
  const [{ createEmbedder, OfflineModel }, { startModelServer }, { interruptOnSignals }, { parseNumberFlag }] =
    await Promise.all([
      import('../models/index.js'),
      import('../models/server.js'),
      import('./common.js'),
      import('../core/numbers.js'),
    ]);
  const port = parseNumberFlag('--port', argv.port, { whole: true, min: 0, max: 65_535 }) ?? 0;
  if (!/^hashed(?::\d+)?$/u.test(argv.embedder))
    throw new MembenchError(
      'INVALID_ARGUMENT',
      `--embedder ${argv.embedder}: serve offers the hashed embedder only (hashed or hashed:DIM)`,
    );
  const embedder = createEmbedder(argv.embedder);
  const server = await startModelServer({
    model: new OfflineModel(),
    embedder,
    port,
    offload: { embedder: argv.embedder },
  }).catch((error: unknown) => {
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'EADDRINUSE')
      throw new MembenchError(
        'INVALID_ARGUMENT',
        `--port ${port}: the port is in use on 127.0.0.1 (pick another, or 0 for a free one)`,
      );
    throw error;
  });
  process.stdout.write(`membench serve: offline model and ${embedder.id} at ${server.baseUrl} (Ctrl-C stops)\n`);
  const interrupt = interruptOnSignals();
  await new Promise<void>((resolve) => interrupt.signal.addEventListener('abort', () => resolve(), { once: true }));
  interrupt.dispose();
  await server.close();
  return 0;
});
