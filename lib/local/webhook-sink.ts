/**
 * LOCAL ONLY: a webhook receiver for testers and the README walkthrough. Listens on 127.0.0.1,
 * verifies each request with the subscription's secret using `standardwebhooks` (signature and
 * timestamp tolerance), answers 204 (or the next status of `responses` for that delivery: each
 * webhook-id walks the sequence on its own), 401 when the signature does not verify. Reports every request through `onRequest`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface SinkRequest {
  verified: boolean;
  webhookId?: string;
  /** the verified event (absent when the signature did not verify) */
  event?: { type: string; timestamp: string; data: Record<string, unknown> };
  /** the raw body as received (verified or not) */
  body: string;
  headers: Record<string, string>;
  answeredStatus: number;
}

export interface WebhookSinkOptions {
  port: number;
  secret: string;
  /**
   * statuses to answer a delivery's verified requests with, in order; the last one repeats (default
   * [204]). Per delivery (webhook-id): its retries walk the sequence, another delivery starts over.
   */
  responses?: number[];
  onRequest?: (request: SinkRequest) => void;
}

export interface WebhookSink {
  url: string;
  requests: SinkRequest[];
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1024 * 1024;

export async function startWebhookSink(options: WebhookSinkOptions): Promise<WebhookSink> {
  const verifier = new Webhook(options.secret);
  const responses = options.responses && options.responses.length > 0 ? options.responses : [204];
  const requests: SinkRequest[] = [];
  /** verified requests answered so far, per webhook-id */
  const answered = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]));
      let event: SinkRequest['event'];
      try {
        event = verifier.verify(body, headers) as SinkRequest['event'];
      } catch {
        event = undefined;
      }
      let status = 401;
      if (event) {
        const delivery = headers['webhook-id'] ?? '';
        const seen = answered.get(delivery) ?? 0;
        answered.set(delivery, seen + 1);
        status = responses[Math.min(seen, responses.length - 1)]!;
      }
      const request: SinkRequest = { verified: event !== undefined, webhookId: headers['webhook-id'], event, body, headers, answeredStatus: status };
      requests.push(request);
      options.onRequest?.(request);
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 401 ? 'signature does not verify\n' : '');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
