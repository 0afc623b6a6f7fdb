/**
 * `npm run webhook-sink -- --port 4700 --secret whsec_...`: a webhook receiver on 127.0.0.1 that
 * verifies each request's Standard Webhooks signature with the subscription's secret and prints
 * one line per event (type, event id, webhook-id, the ids in the event). The secret may also come
 * from WEBHOOK_SECRET. `--respond 500,500,200` answers each delivery's verified requests with those
 * statuses in order (the last repeats; every delivery starts the sequence over), to watch the retries.
 */
import { UsageError, wholeNumber, type CommandSpec } from '../lib/admin/cli-options';
import { AdminError } from '../lib/admin/key-admin';
import { readSingleCommand, runCli, runMain, type CliIo } from '../lib/admin/cli-runner';
import { startWebhookSink, type WebhookSink } from '../lib/local/webhook-sink';

const SINK_COMMAND: CommandSpec = {
  name: '',
  summary:
    'A webhook receiver on 127.0.0.1: verifies every request with the subscription secret (or WEBHOOK_SECRET) and prints one line per event. Runs until Ctrl-C.',
  options: {
    port: { type: 'string', value: 'PORT', description: 'the port to listen on, 0-65535 (default 4700; 0: any free port)' },
    secret: { type: 'string', value: 'whsec_...', description: 'the subscription signing secret (default: WEBHOOK_SECRET)' },
    respond: {
      type: 'string',
      value: 'STATUSES',
      description: "statuses (200-599) to answer each delivery's verified requests with, in order; the last repeats (default 204)",
    },
  },
  examples: ['npm run webhook-sink -- --port 4700 --secret whsec_...', 'WEBHOOK_SECRET=whsec_... npm run webhook-sink -- --respond 500,500,200'],
};

export interface SinkRunOptions {
  env?: NodeJS.ProcessEnv;
  /** called once listening; resolves the returned promise (exit 0) when `stop` is called (default: on SIGINT/SIGTERM) */
  onListening?: (sink: WebhookSink, stop: () => void) => void;
}

export function main(argv: string[], io: CliIo, options: SinkRunOptions = {}): Promise<number> {
  return runCli('webhook-sink', io, async () => {
    const read = readSingleCommand('webhook-sink', SINK_COMMAND, argv, io);
    if ('exitCode' in read) return read.exitCode;
    if (read.positionals.length > 0) throw new UsageError(`unexpected argument "${read.positionals[0]}"`);
    const secret = (read.values.secret as string | undefined) ?? (options.env ?? process.env).WEBHOOK_SECRET;
    if (!secret) throw new UsageError('--secret whsec_... (or WEBHOOK_SECRET) is required');
    if (!secret.startsWith('whsec_')) throw new UsageError('--secret must be a subscription signing secret (whsec_...)');
    const port = wholeNumber('port', (read.values.port as string | undefined) ?? '4700', 0, 65535);
    const responses =
      read.values.respond === undefined ? undefined : (read.values.respond as string).split(',').map((s) => wholeNumber('respond', s.trim(), 200, 599));
    let sink: WebhookSink;
    try {
      sink = await startWebhookSink({
        port,
        secret,
        responses,
        onRequest: (r) => {
          const at = new Date().toISOString();
          if (!r.verified) io.out(`${at} REJECTED webhook-id=${r.webhookId ?? '-'}: signature does not verify (answered 401)\n`);
          else io.out(`${at} ${r.event?.type} webhook-id=${r.webhookId} ${JSON.stringify(r.event?.data)} (answered ${r.answeredStatus})\n`);
        },
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new AdminError(`port ${port} is in use: pass another --port`);
      if (code === 'EACCES') throw new AdminError(`port ${port} is not allowed for this user: pass another --port`);
      throw error;
    }
    io.out(`webhook sink listening on ${sink.url} (Ctrl-C to stop)\n`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      if (options.onListening) options.onListening(sink, stop);
      else {
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      }
    });
    await sink.close();
    return 0;
  });
}

if (require.main === module) runMain('webhook-sink', main);
