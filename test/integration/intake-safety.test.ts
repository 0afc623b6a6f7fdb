/**
 * Issue 12, the cases of items 2 (lab half), 4 and 7, each through the path a partner takes: HTTP
 * into the local stack (local API Gateway, real authorizer, dynalite, fauxqs, local KMS). Each test
 * failed on the code before the fix.
 */
import { Scopes } from '../../lib/config/service';
import type { LocalStack } from '../../lib/local/stack';
import { createKey } from '../reliability/support';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
const HOUR = 3600_000;

function labBody(data: Record<string, unknown>): Record<string, unknown> {
  return {
    data: {
      senderID: 'demo-lab',
      patientID: 'demo-patient-1',
      accessionNumber: unique('SAFE'),
      status: 'final',
      ResultedDateUTC: iso(-HOUR),
      results: { testName: 'Potassium', result: '4.0', units: 'mmol/L' },
      ...data,
    },
  };
}

function post(body: unknown, key = 'demo-results-key'): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveTestData', { headers: { 'x-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function summary(patientId: string): Promise<HttpResult> {
  return call(stack, 'GET', `/exportHl7PatientSummary?patientId=${patientId}&limit=200`, {
    headers: { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' },
  });
}

/** OBX-5 values of a summary message. */
function observationValues(message: string): string[] {
  return message
    .split('\r')
    .filter((s) => s.startsWith('OBX|'))
    .map((s) => s.split('|')[5] ?? '');
}

describe('item 2 (lab): intake answers reveal nothing about the chart', () => {
  it('a known and an unknown patient id get the same status and the same body shape, without patientMatched', async () => {
    const known = await post(labBody({ patientID: 'demo-patient-1' }));
    const unknown = await post(labBody({ patientID: 'demo-patient-77' }));
    expect([known.status, unknown.status]).toEqual([200, 200]);
    const shape = (r: HttpResult) => Object.keys(r.json()).sort();
    expect(shape(unknown)).toEqual(shape(known));
    expect(known.json()).not.toHaveProperty('patientMatched');
    expect(unknown.json()).not.toHaveProperty('patientMatched');
    expect(known.text).not.toMatch(/matched/i);
    expect(unknown.text).not.toMatch(/matched/i);
    // every value but the ids is the same
    const { requestId: _a, resultId: _b, version: _c, ...restKnown } = known.json();
    const { requestId: _d, resultId: _e, version: _f, ...restUnknown } = unknown.json();
    expect(restUnknown).toEqual(restKnown);
  });
});

describe('item 4: the current version is decided by status precedence and receipt order, not the sender clock', () => {
  it('ResultedDateUTC more than 5 minutes in the future is a 400 naming the field (23 h was accepted before)', async () => {
    for (const offset of [23 * HOUR, 6 * 60_000]) {
      const res = await post(labBody({ status: 'preliminary', ResultedDateUTC: iso(offset) }));
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.json<{ errors: Array<{ pointer: string }> }>().errors).toEqual([
        { pointer: '/data/ResultedDateUTC', message: 'must not be more than 5 minutes in the future' },
      ]);
    }
    expect((await post(labBody({ ResultedDateUTC: iso(4 * 60_000) }))).status).toBe(200);
  });

  it('a correction received after a preliminary dated in the future is current, and the summary shows it', async () => {
    const accessionNumber = unique('SKEW');
    const prelim = await post(
      labBody({
        patientID: 'demo-patient-2',
        accessionNumber,
        status: 'preliminary',
        ResultedDateUTC: iso(4 * 60_000),
        results: { testName: 'Potassium', result: '7.9', units: 'mmol/L' },
      }),
    );
    expect(prelim.json()).toMatchObject({ current: true });
    const corrected = await post(
      labBody({
        patientID: 'demo-patient-2',
        accessionNumber,
        status: 'corrected',
        ResultedDateUTC: iso(-HOUR),
        results: { testName: 'Potassium', result: '4.1', units: 'mmol/L' },
      }),
    );
    expect(corrected.status).toBe(200);
    expect(corrected.json()).toMatchObject({ current: true, duplicate: false });
    const res = await summary('demo-patient-2');
    expect(res.status).toBe(200);
    const values = observationValues(res.text);
    expect(values).toContain('4.1');
    expect(values).not.toContain('7.9');
  });

  it('for the same status, the version received last is current even when it says it was resulted earlier', async () => {
    const accessionNumber = unique('RECEIPT');
    const first = await post(labBody({ accessionNumber, status: 'final', ResultedDateUTC: iso(-HOUR), results: { testName: 'Sodium', result: '140' } }));
    const second = await post(labBody({ accessionNumber, status: 'F', ResultedDateUTC: iso(-2 * HOUR), results: { testName: 'Sodium', result: '138' } }));
    expect(first.json()).toMatchObject({ current: true });
    expect(second.json()).toMatchObject({ current: true });
    expect(second.json<{ resultId: string }>().resultId).toBe(first.json<{ resultId: string }>().resultId);
  });

  it('the full order: preliminary < final < corrected = amended = cancelled (latest received among those wins)', async () => {
    const accessionNumber = unique('ORDER');
    const send = async (status: string, hoursAgo: number) =>
      (
        await post(labBody({ accessionNumber, status, ResultedDateUTC: iso(-hoursAgo * HOUR), results: { testName: 'Hb', result: `${status}-${hoursAgo}` } }))
      ).json<{ current: boolean }>().current;
    expect(await send('final', 5)).toBe(true);
    expect(await send('preliminary', 1)).toBe(false); // a late preliminary never replaces a final
    expect(await send('cancelled', 6)).toBe(true); // an explicit cancellation replaces the final
    expect(await send('final', 1)).toBe(false); // ...and a final does not undo it
    expect(await send('corrected', 7)).toBe(true); // a correction after the cancellation reinstates
    expect(await send('amended', 8)).toBe(true); // equal precedence: the later receipt wins
    expect(await send('X', 9)).toBe(true);
    expect(await send('C', 2)).toBe(true);
    expect(await send('P', 0)).toBe(false);
  });
});

describe('item 7: line separators, repeated parameters, wrong methods, rate window', () => {
  it('NEL (a C1 control) in a lab value is refused (record rules); U+2028 and U+2029 are kept and never split a segment of the summary', async () => {
    const refused = await post(labBody({ patientID: 'demo-patient-1', results: [{ testName: 'Comment', result: 'line one\u0085line two' }] }));
    expect(refused.status).toBe(400);
    expect(refused.json<{ errors: Array<{ pointer: string }> }>().errors.map((e) => e.pointer)).toContain('/data/results/0/result');
    const value = 'line one\u2028line two\u2029line three';
    const res0 = await post(
      labBody({
        patientID: 'demo-patient-1',
        results: [
          { testName: 'Comment', result: value },
          { testName: 'Other\u2028name', result: '1' },
        ],
      }),
    );
    expect(res0.status).toBe(200);
    const res = await summary('demo-patient-1');
    expect(res.status).toBe(200);
    const segments = res.text.split('\r').filter((s) => s !== '');
    // a consumer splitting on any Unicode line break sees exactly the segments
    const lines = res.text.split(/\r\n|\r|\n|\u0085|\u2028|\u2029/).filter((s) => s !== '');
    expect(lines.length).toBe(segments.length);
    expect(res.text).toMatch(/line one.+line two.+line three/);
  });

  it.each([
    ['/exportHl7Note?patientId=demo-patient-2&noteId=demo-note-2&patientId=demo-patient-2', 'patientId'],
    ['/exportHl7Note?patientId=demo-patient-2&noteId=demo-note-2&noteId=demo-note-2', 'noteId'],
    ['/exportHl7PatientSummary?patientId=demo-patient-1&limit=5&limit=5', 'limit'],
  ])('a repeated identical query parameter is a 400 naming it: %s', async (url, parameter) => {
    const res = await call(stack, 'GET', url, { headers: { 'x-api-key': 'demo-export-key' } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.json<{ errors: unknown[] }>().errors).toEqual([{ parameter, message: 'must be sent once' }]);
  });

  it('a repeated identical inbox parameter is a 400 naming it', async () => {
    const res = await call(stack, 'GET', '/interopInbox?state=pending_review&state=pending_review', { headers: { 'x-api-key': 'demo-inbox-key' } });
    expect(res.status).toBe(400);
    expect(res.json<{ errors: unknown[] }>().errors).toEqual([{ parameter: 'state', message: 'must be sent once' }]);
  });

  it.each([
    ['HEAD', '/exportHl7Note?patientId=demo-patient-2&noteId=demo-note-2', 'GET'],
    ['PUT', '/exportHl7Note?patientId=demo-patient-2&noteId=demo-note-2', 'GET'],
    ['DELETE', '/exportHl7PatientAdt?patientId=demo-patient-1', 'GET'],
    ['PATCH', '/exportHl7PatientSummary?patientId=demo-patient-1', 'GET'],
    ['HEAD', '/receiveTestData', 'POST'],
    ['PUT', '/receiveTestData', 'POST'],
    ['DELETE', '/receiveFormIntakeScope', 'POST'],
    ['PATCH', '/interopInbox/fp_x', 'GET'],
    ['GET', '/interopInbox/fp_x/route', 'POST'],
  ])('%s %s answers 405 with Allow: %s', async (method, url, allow) => {
    const res = await call(stack, method, url, {
      headers: { 'x-api-key': 'demo-all-key', 'content-type': 'application/json' },
      body: method === 'PUT' || method === 'PATCH' ? '{}' : undefined,
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    if (method !== 'HEAD') expect(res.json()).toMatchObject({ type: '/problems/method-not-allowed', status: 405, title: 'Method not allowed' });
  });

  it('a key never gets more than its limit in any window of its length, across a window boundary', async () => {
    const secret = unique('safety-rate');
    const windowSeconds = 4;
    await createKey(stack, { secret, partnerId: 'demo-ehr', scopes: [Scopes.exportHl7], rateLimit: 5, rateWindowSeconds: windowSeconds });
    const get = async () => (await call(stack, 'GET', '/exportHl7PatientAdt?patientId=demo-patient-1', { headers: { 'x-api-key': secret } })).status;
    // the old fixed window restarted at multiples of the window: 5 just before a boundary, 5 just after
    const msToBoundary = () => windowSeconds * 1000 - (Date.now() % (windowSeconds * 1000));
    if (msToBoundary() < 1500 || msToBoundary() > 2500)
      await new Promise((r) => setTimeout(r, (msToBoundary() + windowSeconds * 1000 - 2000) % (windowSeconds * 1000)));
    const started = Date.now();
    const before = [];
    for (let i = 0; i < 5; i++) before.push(await get());
    await new Promise((r) => setTimeout(r, msToBoundary() + 50));
    const after = [];
    for (let i = 0; i < 5; i++) after.push(await get());
    const elapsed = Date.now() - started;
    expect(elapsed).toBeLessThan(windowSeconds * 1000); // all ten requests inside one window's length
    expect(before).toEqual([200, 200, 200, 200, 200]);
    expect(after).toEqual([429, 429, 429, 429, 429]);
  });
});
