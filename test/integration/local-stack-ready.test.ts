/**
 * The local API answers nothing until the whole local stack is up (issue 30): a request that reaches
 * it while the staff sign-in provider is still starting waits, and then gets the page, never the
 * 503 "staff sign-in is not configured" a half-started stack would give.
 */
import { Env } from '../../lib/config/service';
import { startApiServer } from '../../lib/local/api-gateway';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

const STAFF_ENV = [Env.staffClientId, Env.staffAuthorizeUrl, Env.staffTokenUrl] as const;
let stack: LocalStack;

beforeAll(async () => {
  // the tables, queues and keys the API needs, without the staff provider: /inbox is unconfigured
  stack = await startTestStack({ staffSignIn: false });
});
afterAll(async () => {
  for (const name of STAFF_ENV) delete process.env[name];
  await stack?.close();
});

describe('the local API before the stack is ready', () => {
  it('a half-started stack would answer GET /inbox 503', async () => {
    const res = await call(stack, 'GET', '/inbox');
    expect(res.status).toBe(503);
  });

  it('holds a request that arrives before the stack is ready, then answers it from the ready stack', async () => {
    let markReady!: () => void;
    const ready = new Promise<void>((resolve) => (markReady = resolve));
    let arrived!: () => void;
    const held = new Promise<void>((resolve) => (arrived = resolve));
    const api = await startApiServer({ host: '127.0.0.1', port: 0, ready, onHeld: arrived });
    try {
      const response = fetch(`${api.url}/inbox`);
      await held; // the request reached the API while the stack was still starting
      // the rest of the stack comes up: here, the staff sign-in configuration the page needs
      process.env[Env.staffClientId] = 'interop-inbox';
      process.env[Env.staffAuthorizeUrl] = 'http://127.0.0.1:9/auth';
      process.env[Env.staffTokenUrl] = 'http://127.0.0.1:9/token';
      markReady();
      const res = await response;
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      await res.text();
    } finally {
      await api.close();
    }
  });

  it('answers at once when the stack is ready', async () => {
    const api = await startApiServer({ host: '127.0.0.1', port: 0, onHeld: () => fail('held after ready') });
    try {
      const res = await fetch(`${api.url}/inbox`);
      expect(res.status).toBe(200);
      await res.text();
    } finally {
      await api.close();
    }
  });
});
