/**
 * Reviewers see and end a patient's partner relationships (docs/write-authority.md "Relationships"),
 * over HTTP: a relationship made with `npm run partners -- relate` is listed, holding; ending it
 * through POST /interopInbox/relationships/end refuses the partner's next read of the patient at
 * once, the record stays listed (ended, by whom), a second end is 404 as for an unknown patient.
 */
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';
import { createPartnerKey, operator, relatePartner } from '../support/operator-cli';

jest.setTimeout(120_000);

let stack: LocalStack;
let hieKey = '';
const INBOX = { 'x-api-key': 'demo-inbox-key' };

beforeAll(async () => {
  stack = await startTestStack();
  const created = await operator('partners', ['create', '--partner-id', 'review-hie', '--tier', 'standard', '--patient-access', 'related']);
  if (created.code !== 0) throw new Error(`partners create failed (${created.code}): ${created.err}`);
  hieKey = (await createPartnerKey('review-hie', ['interop:export:fhir'])).secret;
  await relatePartner('review-hie', 'demo-patient-3');
});

afterAll(async () => {
  await stack?.close();
});

interface Listed {
  partnerId: string;
  source: string;
  holding: boolean;
  endedBy?: string;
}

const list = async (patientId: string) => {
  const res = await call(stack, 'GET', `/interopInbox/relationships?patientId=${patientId}`, { headers: INBOX });
  expect(res.status).toBe(200);
  return res.json<{ items: Listed[] }>().items;
};
const end = (patientId: string, partnerId: string) =>
  call(stack, 'POST', `/interopInbox/relationships/end?patientId=${patientId}&partnerId=${partnerId}`, { headers: INBOX });
const read = () => call(stack, 'GET', '/fhir/Patient/demo-patient-3', { headers: { 'x-api-key': hieKey } });

describe('staff relationship review', () => {
  it('lists the relationship, ends it, and the partner is refused from the next request on', async () => {
    expect((await list('demo-patient-3')).find((r) => r.partnerId === 'review-hie')).toMatchObject({ source: 'operator', holding: true });
    expect((await read()).status).toBe(200);

    const ended = await end('demo-patient-3', 'review-hie');
    expect(ended.status).toBe(200);
    expect(ended.json<{ relationship: { endedAt?: string } }>().relationship.endedAt).toBeDefined();
    expect((await read()).status).toBe(403);
    expect((await list('demo-patient-3')).find((r) => r.partnerId === 'review-hie')).toMatchObject({ holding: false, endedBy: expect.any(String) });

    const again = await end('demo-patient-3', 'review-hie');
    const unknown = await end('no-such-patient-9', 'review-hie');
    expect([again.status, unknown.status]).toEqual([404, 404]);
    expect(again.json<{ detail: string }>().detail).toBe(unknown.json<{ detail: string }>().detail);
  });

  it('a partner key is refused both routes; a malformed id is a 400 naming it', async () => {
    const asPartner = await call(stack, 'GET', '/interopInbox/relationships?patientId=demo-patient-3', { headers: { 'x-api-key': hieKey } });
    expect(asPartner.status).toBe(403);
    const bad = await call(stack, 'POST', '/interopInbox/relationships/end?patientId=demo-patient-3', { headers: INBOX });
    expect(bad.status).toBe(400);
    expect(bad.json<{ errors: Array<{ parameter: string }> }>().errors).toEqual([expect.objectContaining({ parameter: 'partnerId' })]);
    expect(await list('no-such-patient-9')).toEqual([]);
  });
});
