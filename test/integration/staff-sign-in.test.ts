/**
 * Staff sign-in to the inbox API (issue 20): ID tokens from the local OpenID provider, groups,
 * audit records naming the staff member. The browser path is in test/e2e/inbox-page.test.ts.
 */
import { AuditTrailReader } from '../../lib/audit/audit-trail-reader';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';
import { signInStaff } from '../support/staff-sign-in';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ staffSignIn: true });
});
afterAll(async () => {
  await stack?.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function postUnmatchedPacket(): Promise<string> {
  const res = await call(stack, 'POST', '/receiveFormIntakeScope', {
    headers: { 'x-api-key': 'demo-forms-key', 'content-type': 'application/json' },
    body: JSON.stringify({
      payload: {
        sourceSystemId: 'demo-form-tool',
        formId: 'intake-1',
        formName: 'New patient intake',
        submissionId: `sub-staff-${Date.now()}-${Math.random().toString(36).slice(2)}`,
        patient: { externalPatientId: 'ft-staff-1', firstName: 'Sam', lastName: 'Twin', dob: '1990-01-01', email: 'x@example.org' },
        answers: { q1: 'yes' },
      },
    }),
  });
  expect([201, 202]).toContain(res.status);
  return res.json<{ packetId: string }>().packetId;
}

describe('staff sign-in on the inbox routes', () => {
  it('a signed-out caller gets 401 and a forged token 401', async () => {
    expect((await call(stack, 'GET', '/interopInbox')).status).toBe(401);
    const forged = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
    const res = await call(stack, 'GET', '/interopInbox', { headers: bearer(forged) });
    expect(res.status).toBe(401);
    expect(res.json().detail).toMatch(/bearer token/);
  });

  it('a reviewer reads and routes; the audit trail names the reviewer', async () => {
    const { idToken } = await signInStaff(stack, 'demo-reviewer', 'demo-reviewer-password');
    const list = await call(stack, 'GET', '/interopInbox', { headers: bearer(idToken) });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-ratelimit-limit')).toBe('600');
    const packetId = await postUnmatchedPacket();
    const detail = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: bearer(idToken) });
    expect(detail.status).toBe(200);
    const candidates = await call(stack, 'GET', `/interopInbox/${packetId}/candidates`, { headers: bearer(idToken) });
    expect(candidates.status).toBe(200);
    const routed = await call(stack, 'POST', `/interopInbox/${packetId}/route`, {
      headers: { ...bearer(idToken), 'content-type': 'application/json' },
      body: JSON.stringify({ patientId: 'demo-patient-5' }),
    });
    expect(routed.status).toBe(200);
    const after = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: bearer(idToken) });
    expect(after.json<{ state: string; history: Array<{ actor: string; staffUsername?: string }> }>()).toMatchObject({ state: 'routed_manually' });
    expect(after.json<{ history: Array<{ actor: string; staffUsername?: string }> }>().history.at(-1)).toMatchObject({
      actor: 'staff',
      staffUsername: 'demo-reviewer',
    });
    const db = new DynamoDBClient({ endpoint: stack.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const records = await new AuditTrailReader(db, stack.tables.audit).forPatient('demo-patient-5');
    db.destroy();
    expect(records.find((r) => r.action === 'inbox.route')).toMatchObject({
      staffUsername: 'demo-reviewer',
      staffSubject: 'staff-0001',
      partnerId: 'clinic-staff',
      outcome: 'success',
    });
  });

  it('a viewer reads but cannot route (403)', async () => {
    const { idToken } = await signInStaff(stack, 'demo-viewer', 'demo-viewer-password');
    const packetId = await postUnmatchedPacket();
    expect((await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: bearer(idToken) })).status).toBe(200);
    const res = await call(stack, 'POST', `/interopInbox/${packetId}/route`, {
      headers: { ...bearer(idToken), 'content-type': 'application/json' },
      body: JSON.stringify({ patientId: 'demo-patient-5' }),
    });
    expect(res.status).toBe(403);
    expect(res.json().detail).toMatch(/interop-reviewers/);
  });

  it('a staff token opens no partner route', async () => {
    const { idToken } = await signInStaff(stack, 'demo-reviewer', 'demo-reviewer-password');
    const res = await call(stack, 'GET', '/exportHl7PatientAdt?patientId=demo-patient-1', { headers: bearer(idToken) });
    expect(res.status).toBe(403);
  });

  it('a wrong password gets no token', async () => {
    await expect(signInStaff(stack, 'demo-reviewer', 'wrong')).rejects.toThrow(/sign-in refused|no authorization code/);
  });
});
