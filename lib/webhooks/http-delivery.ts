/**
 * One webhook POST: no redirects followed (node:http never follows them; a 3xx is just a failed
 * attempt), a hard deadline over connect + response, the response body read to at most 64 KB and
 * discarded, and the connect-time address check of target-url.ts (on the address actually dialled,
 * so DNS rebinding cannot slip a private address in after the URL check).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressAllowed } from './target-url';

export const RESPONSE_BODY_MAX_BYTES = 64 * 1024;
export const DEFAULT_TIMEOUT_MS = 5000;

export interface PostOutcome {
  /** the HTTP status, when an answer came */
  httpStatus?: number;
  latencyMs: number;
  /** why there was no answer: `timeout`, `blocked-address`, or the socket error code */
  errorName?: string;
  /** response body bytes read (at most RESPONSE_BODY_MAX_BYTES; the rest is never read) */
  bodyBytesRead: number;
}

export interface PostRequest {
  url: URL;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  stage: string;
}

class BlockedAddressError extends Error {
  readonly code = 'blocked-address';
  constructor() {
    super('the target resolved to an address webhooks may not reach');
    this.name = 'BlockedAddressError';
  }
}

/** A dns.lookup that refuses addresses the policy does not allow. */
function guardedLookup(url: URL, stage: string): LookupFunction {
  return (
    hostname: string,
    options: LookupOptions,
    callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, options, (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => {
      if (error) return callback(error, address, family);
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      if (addresses.length === 0 || addresses.some((a) => !addressAllowed(a, url, stage))) return callback(new BlockedAddressError(), address, family);
      callback(null, address, family);
    });
  };
}

export function postWebhook(request: PostRequest): Promise<PostOutcome> {
  const started = Date.now();
  const { url } = request;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 && !addressAllowed(host, url, request.stage)) {
    return Promise.resolve({ latencyMs: 0, errorName: 'blocked-address', bodyBytesRead: 0 });
  }
  return new Promise<PostOutcome>((resolve) => {
    let settled = false;
    let bodyBytesRead = 0;
    const finish = (outcome: Omit<PostOutcome, 'latencyMs' | 'bodyBytesRead'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, latencyMs: Date.now() - started, bodyBytesRead });
    };
    const transport = url.protocol === 'https:' ? https : http;
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
        lookup: guardedLookup(url, request.stage),
        agent: false,
      },
      (res) => {
        const httpStatus = res.statusCode ?? 0;
        res.on('data', (chunk: Buffer) => {
          bodyBytesRead += chunk.length;
          if (bodyBytesRead >= RESPONSE_BODY_MAX_BYTES) {
            bodyBytesRead = Math.min(bodyBytesRead, RESPONSE_BODY_MAX_BYTES);
            finish({ httpStatus });
            res.destroy();
            req.destroy();
          }
        });
        res.on('end', () => finish({ httpStatus }));
        res.on('error', () => finish({ httpStatus }));
        res.on('close', () => finish({ httpStatus }));
      },
    );
    const timer = setTimeout(() => {
      finish({ errorName: 'timeout' });
      req.destroy();
    }, request.timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) =>
      finish({ errorName: error instanceof BlockedAddressError ? 'blocked-address' : (error.code ?? error.name ?? 'network-error').slice(0, 40) }),
    );
    req.end(request.body);
  });
}
