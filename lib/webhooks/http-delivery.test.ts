import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postWebhook, RESPONSE_BODY_MAX_BYTES } from './http-delivery';

let server: http.Server;
let base: string;
let handler: http.RequestListener = (_req, res) => res.end();

beforeAll(async () => {
  server = http.createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = (path: string, stage = 'local', timeoutMs = 1000) =>
  postWebhook({ url: new URL(base + path), headers: { 'content-type': 'application/json' }, body: '{}', timeoutMs, stage });

describe('postWebhook', () => {
  it('does not follow redirects', async () => {
    let followed = false;
    handler = (req, res) => {
      if (req.url === '/elsewhere') followed = true;
      res.writeHead(302, { location: '/elsewhere' }).end();
    };
    expect(await post('/')).toMatchObject({ httpStatus: 302 });
    expect(followed).toBe(false);
  });

  it('reads at most 64 KB of the response', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      let sent = 0;
      const write = () => {
        while (sent < 10 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', write);
        }
        res.end();
      };
      write();
    };
    const outcome = await post('/');
    expect(outcome.httpStatus).toBe(200);
    expect(outcome.bodyBytesRead).toBeLessThanOrEqual(RESPONSE_BODY_MAX_BYTES);
  });

  it('gives up at the timeout', async () => {
    handler = () => undefined;
    const outcome = await post('/', 'local', 300);
    expect(outcome).toMatchObject({ errorName: 'timeout' });
    expect(outcome.httpStatus).toBeUndefined();
  });

  it('refuses loopback outside the local stage, and names resolving to private addresses', async () => {
    handler = (_req, res) => res.end();
    expect(await post('/', 'prod')).toMatchObject({ errorName: 'blocked-address' });
    const viaName = await postWebhook({ url: new URL(base.replace('127.0.0.1', 'localhost') + '/'), headers: {}, body: '{}', timeoutMs: 1000, stage: 'prod' });
    expect(viaName).toMatchObject({ errorName: 'blocked-address' });
  });
});
