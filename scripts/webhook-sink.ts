/**
 * `npm run webhook-sink -- --port 4700 --secret whsec_...`: a webhook receiver on 127.0.0.1 that
 * verifies each request's Standard Webhooks signature with the subscription's secret and prints
 * one line per event (type, event id, webhook-id, the ids in the event). The secret may also come
 * from WEBHOOK_SECRET. `--respond 500,500,200` answers verified requests with those statuses in
 * order (the last repeats), to watch the retries.
 */
import { parseArgs } from 'node:util';
import { startWebhookSink } from '../lib/local/webhook-sink';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { port: { type: 'string' }, secret: { type: 'string' }, respond: { type: 'string' } } });
  const secret = values.secret ?? process.env.WEBHOOK_SECRET;
  const port = Number(values.port ?? '4700');
  if (!secret || !secret.startsWith('whsec_') || !Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write('usage: npm run webhook-sink -- --port 4700 --secret whsec_... [--respond 500,500,200]  (or WEBHOOK_SECRET=whsec_...)\n');
    process.exit(2);
  }
  const responses = values.respond
    ? values.respond
        .split(',')
        .map(Number)
        .filter((n) => Number.isInteger(n) && n >= 200 && n <= 599)
    : undefined;
  const sink = await startWebhookSink({
    port,
    secret,
    responses,
    onRequest: (r) => {
      const at = new Date().toISOString();
      if (!r.verified) process.stdout.write(`${at} REJECTED webhook-id=${r.webhookId ?? '-'}: signature does not verify (answered 401)\n`);
      else process.stdout.write(`${at} ${r.event?.type} webhook-id=${r.webhookId} ${JSON.stringify(r.event?.data)} (answered ${r.answeredStatus})\n`);
    },
  });
  process.stdout.write(`webhook sink listening on ${sink.url} (Ctrl-C to stop)\n`);
  const stop = () => void sink.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
