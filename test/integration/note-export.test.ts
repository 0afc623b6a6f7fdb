import type { LocalStack } from '../../lib/local/stack';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { AuditTrailReader } from '../../lib/audit/audit-trail-reader';
import { call, startTestStack } from '../support/local-stack';

const notePath = (patientId: string, noteId: string) => `/exportHl7Note?patientId=${encodeURIComponent(patientId)}&noteId=${encodeURIComponent(noteId)}`;
const demoNote = notePath('demo-patient-1', 'demo-note-1');

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

function expectCommonHeaders(headers: Headers) {
  expect(headers.get('x-request-id')).toBeTruthy();
  expect(Number(headers.get('x-ratelimit-limit'))).toBeGreaterThan(0);
  expect(headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
  expect(Number(headers.get('x-ratelimit-reset'))).toBeGreaterThan(Date.now() / 1000 - 1);
}

describe('GET /exportHl7Note', () => {
  it('returns the MDM^T02 message for the demo ids', async () => {
    const res = await call(stack, 'GET', demoNote, { headers: { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/hl7-v2; charset=utf-8');
    expectCommonHeaders(res.headers);
    const segments = res.text.split('\r').filter(Boolean);
    expect(segments.map((s) => s.slice(0, 3))).toEqual(['MSH', 'EVN', 'PID', 'PV1', 'TXA', 'OBX']);
    const msh = segments[0]!.split('|');
    expect(msh[1]).toBe('^~\\&');
    expect(msh[8]).toBe('MDM^T02^MDM_T02');
    expect(msh[10]).toBe('P');
    expect(msh[11]).toBe('2.5.1');
    expect(res.text.endsWith('\r')).toBe(true);
    expect(res.text).not.toContain('\n');
  });

  it('gives every response a unique MSH-10', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await call(stack, 'GET', demoNote, { headers: { 'x-api-key': 'demo-all-key' } });
      ids.add(res.text.split('\r')[0]!.split('|')[9]!);
    }
    expect(ids.size).toBe(5);
    for (const id of ids) expect(id.length).toBeLessThanOrEqual(20);
  });

  it('echoes a caller x-request-id and generates one otherwise', async () => {
    const echoed = await call(stack, 'GET', demoNote, { headers: { 'x-api-key': 'demo-export-key', 'x-request-id': 'trace-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
    const generated = await call(stack, 'GET', demoNote, { headers: { 'x-api-key': 'demo-export-key' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('refuses an x-request-id that is not 1-128 visible ASCII characters', async () => {
    const res = await call(stack, 'GET', demoNote, { headers: { 'x-api-key': 'demo-export-key', 'x-request-id': 'x'.repeat(129) } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expectCommonHeaders(res.headers);
  });

  it.each([
    ['no key', {}, 401],
    ['unknown key', { 'x-api-key': 'not-a-key' }, 401],
    ['revoked key', { 'x-api-key': 'demo-revoked-key' }, 401],
    ['key without the export scope', { 'x-api-key': 'demo-results-key' }, 403],
    ['key of a blocked partner', { 'x-api-key': 'demo-blocked-key' }, 403],
    ['valid key', { 'x-api-key': 'demo-export-key' }, 200],
    ['key with every scope', { 'x-api-key': 'demo-all-key' }, 200],
  ])('%s -> %s with rate-limit headers', async (_label, headers, status) => {
    const res = await call(stack, 'GET', demoNote, { headers: headers as Record<string, string> });
    expect(res.status).toBe(status);
    expectCommonHeaders(res.headers);
    if (status !== 200) {
      const body = res.json();
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(body).toMatchObject({
        status,
        type: expect.stringMatching(/^\/problems\//),
        title: expect.any(String),
        detail: expect.any(String),
        requestId: res.headers.get('x-request-id'),
      });
    }
  });

  it('answers 429 with Retry-After past the key limit (demo-limited-key: 5 per 60 s)', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 7; i++) {
      last = await call(stack, 'GET', demoNote, { headers: { 'x-api-key': 'demo-limited-key' } });
      statuses.push(last.status);
    }
    // a window boundary can fall inside the loop; at most 5 successes per window either way
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
    expect(statuses).toContain(429);
    const limited = await call(stack, 'GET', demoNote, { headers: { 'x-api-key': 'demo-limited-key' } });
    if (limited.status === 429) {
      expect(limited.headers.get('x-ratelimit-limit')).toBe('5');
      expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(last!.headers.get('x-ratelimit-limit')).toBe('5');
  });

  it("answers 404 alike for an unknown note and for another patient's note", async () => {
    const unknown = await call(stack, 'GET', notePath('demo-patient-1', 'no-such-note'), { headers: { 'x-api-key': 'demo-export-key' } });
    const foreign = await call(stack, 'GET', notePath('demo-patient-1', 'demo-note-2'), { headers: { 'x-api-key': 'demo-export-key' } });
    const unknownPatient = await call(stack, 'GET', notePath('no-such-patient', 'demo-note-1'), { headers: { 'x-api-key': 'demo-export-key' } });
    for (const res of [unknown, foreign, unknownPatient]) {
      expect(res.status).toBe(404);
      expectCommonHeaders(res.headers);
    }
    const strip = (r: typeof unknown) => ({ ...r.json(), requestId: undefined });
    expect(strip(foreign)).toEqual(strip(unknown));
    expect(strip(unknownPatient)).toEqual(strip(unknown));
  });

  it('answers 400 naming every missing or empty parameter', async () => {
    const res = await call(stack, 'GET', '/exportHl7Note?patientId=', { headers: { 'x-api-key': 'demo-export-key' } });
    expect(res.status).toBe(400);
    const body = res.json<{ errors: Array<{ parameter: string }> }>();
    expect(body.errors.map((e) => e.parameter).sort()).toEqual(['noteId', 'patientId']);
  });

  it.each([
    ['application/json', 406],
    ['text/html, application/xml;q=0.9', 406],
    ['application/hl7-v2;q=0, */*', 406],
    ['*/*', 200],
    ['application/*', 200],
    ['application/hl7-v2', 200],
    ['text/plain;q=0.5, application/hl7-v2', 200],
  ])('Accept %s -> %i', async (accept, status) => {
    const res = await call(stack, 'GET', demoNote, { headers: { 'x-api-key': 'demo-export-key', accept } });
    expect(res.status).toBe(status);
  });

  it('appends an audit record (ids only) for each export served or not found', async () => {
    const ok = await call(stack, 'GET', notePath('demo-patient-2', 'demo-note-2'), {
      headers: { 'x-api-key': 'demo-export-key', 'x-request-id': 'audit-ok-1' },
    });
    const missing = await call(stack, 'GET', notePath('demo-patient-2', 'demo-note-1'), {
      headers: { 'x-api-key': 'demo-export-key', 'x-request-id': 'audit-404-1' },
    });
    expect([ok.status, missing.status]).toEqual([200, 404]);
    const db = new DynamoDBClient({ region: 'us-east-1', endpoint: stack.urls.dynamodb, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const records = await new AuditTrailReader(db, stack.tables.audit).forPatient('demo-patient-2');
    db.destroy();
    const byRequest = Object.fromEntries(records.map((r) => [r.requestId, r]));
    expect(byRequest['audit-ok-1']).toMatchObject({
      action: 'export.note',
      outcome: 'success',
      status: 200,
      partnerId: 'demo-ehr',
      resourceIds: { noteId: 'demo-note-2' },
    });
    // a request whose ids did not resolve keeps no ids (they are unverified caller text)
    expect(byRequest['audit-404-1']).toBeUndefined();
    expect(JSON.stringify(records)).not.toMatch(/Zoë|Ødegård|DEMO-000002|1992/);
  });
});
