/**
 * GET /openapi.json and GET /docs through the local stack, as a partner without a key sees them:
 * the committed document byte for byte, the self-contained page with its Content-Security-Policy,
 * the anonymous rate limit headers, and a refusal for a bad x-request-id (every answer checked
 * against the document by the contract helper in `call`).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

const ROOT = path.resolve(__dirname, '..', '..');
const committed = readFileSync(path.join(ROOT, 'docs', 'openapi.json'), 'utf8');

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
}, 60_000);
afterAll(async () => stack?.close());

describe('GET /openapi.json', () => {
  it('answers the committed docs/openapi.json byte for byte, without a key, counted against the anonymous limit', async () => {
    const res = await call(stack, 'GET', '/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(createHash('sha256').update(res.text).digest('hex')).toBe(createHash('sha256').update(committed).digest('hex'));
    expect(res.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const document = res.json<{ openapi: string; paths: Record<string, Record<string, { operationId: string }>> }>();
    expect(document.openapi).toBe('3.1.0');
    expect(document.paths['/openapi.json']?.get?.operationId).toBe('serveOpenApiDocument');
    expect(document.paths['/docs']?.get?.operationId).toBe('serveApiReference');
  });

  it('a valid key of any partner gets the same document (the key grants nothing more here)', async () => {
    const res = await call(stack, 'GET', '/openapi.json', { headers: { 'x-api-key': 'demo-lab-key' } });
    expect(res.status).toBe(200);
    expect(res.text).toBe(committed);
  });

  it('a malformed x-request-id is a 400 problem', async () => {
    const res = await call(stack, 'GET', '/openapi.json', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });

  it('POST is a 405 naming GET', async () => {
    const res = await call(stack, 'POST', '/openapi.json', { body: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
  });
});

describe('GET /docs', () => {
  it('is one self-contained page: the Redoc bundle and the document inline, no src or href to anywhere, a CSP by hash', async () => {
    const res = await call(stack, 'GET', '/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.text).not.toMatch(/<script[^>]*\ssrc=/i);
    expect(res.text).not.toMatch(/<link[^>]*\shref=/i);
    // every operation title of the document is in the inline spec
    const document = JSON.parse(committed) as { paths: Record<string, Record<string, { summary: string }>> };
    for (const item of Object.values(document.paths))
      for (const op of Object.values(item)) expect(res.text).toContain(JSON.stringify(op.summary).replace(/</g, '\\u003c'));
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    const scripts = [...res.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(scripts).toHaveLength(2);
    for (const script of scripts) expect(csp).toContain(`'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`);
    expect(res.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  });

  it('a malformed x-request-id is a 400 problem', async () => {
    const res = await call(stack, 'GET', '/docs', { headers: { 'x-request-id': 'x'.repeat(200) } });
    expect(res.status).toBe(400);
  });
});
