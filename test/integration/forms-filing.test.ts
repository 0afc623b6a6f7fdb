/**
 * Form packets file only with a relationship (docs/write-authority.md "Filing needs a relationship",
 * docs/forms.md), over HTTP with a form tool made by the operator CLIs: a packet naming a chart
 * patient it does not serve, and one the matcher would route to such a patient, wait in the inbox as
 * `no_relationship` with the patient shown to the reviewer, answered 202 like any packet; a reviewer's
 * route relates the tool, and its next packet for the patient routes by itself.
 */
import { randomUUID } from 'node:crypto';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack, type HttpResult } from '../support/local-stack';
import { createPartnerKey, operator } from '../support/operator-cli';

jest.setTimeout(120_000);

let stack: LocalStack;
let toolKey = '';

beforeAll(async () => {
  stack = await startTestStack({ backgroundWorkers: true });
  const created = await operator('partners', ['create', '--partner-id', 'kiosk-forms', '--tier', 'standard', '--form-source', 'kiosk']);
  if (created.code !== 0) throw new Error(`partners create failed (${created.code}): ${created.err}`);
  toolKey = (await createPartnerKey('kiosk-forms', ['interop:ingest:forms'])).secret;
});

afterAll(async () => {
  await stack?.close();
});

interface View {
  state: string;
  reason?: string;
  patientId?: string;
  chartPatient?: { patientId: string };
  candidates: Array<{ patientId: string }>;
}

const alex = { firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12' };

function post(payload: Record<string, unknown>): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveFormIntakeScope', {
    headers: { 'x-api-key': toolKey, 'content-type': 'application/json' },
    body: JSON.stringify({ payload: { sourceSystemId: 'kiosk', formId: 'intake', answers: { q: 'a' }, submissionId: `s-${randomUUID()}`, ...payload } }),
  });
}

async function decided(res: HttpResult): Promise<View & { packetId: string }> {
  expect(res.status).toBe(202);
  const { packetId } = res.json<{ packetId: string }>();
  const deadline = Date.now() + 10_000;
  for (;;) {
    const view = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: { 'x-api-key': 'demo-inbox-key' } });
    if (view.status === 200 && view.json<View>().state !== 'pending_match') return { ...view.json<View>(), packetId };
    if (Date.now() > deadline) throw new Error(`packet ${packetId} not decided (${view.status})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('form packets of a tool with no relationship to the patient', () => {
  it('a named chart patient and a matcher match both wait as no_relationship, the patient shown; an unknown id stays unknown_patient_id', async () => {
    const named = await decided(await post({ patientId: 'demo-patient-1', patient: alex }));
    expect(named).toMatchObject({ state: 'pending_review', reason: 'no_relationship', chartPatient: { patientId: 'demo-patient-1' } });
    const unknown = await decided(await post({ patientId: 'demo-patient-404', patient: alex }));
    expect(unknown).toMatchObject({ state: 'pending_review', reason: 'unknown_patient_id' });
    const matched = await decided(await post({ patient: { ...alex, externalPatientId: 'kiosk-1' } }));
    expect(matched).toMatchObject({ state: 'pending_review', reason: 'no_relationship' });
    expect(matched.candidates.map((c) => c.patientId)).toContain('demo-patient-1');
  });

  it("a reviewer's route relates the tool: its next packet for the patient routes without review", async () => {
    const first = await decided(await post({ patient: { ...alex, externalPatientId: 'kiosk-2' } }));
    const routed = await call(stack, 'POST', `/interopInbox/${first.packetId}/route`, {
      headers: { 'x-api-key': 'demo-inbox-key', 'content-type': 'application/json' },
      body: JSON.stringify({ patientId: 'demo-patient-1' }),
    });
    expect(routed.status).toBe(200);
    const relations = await operator('partners', ['relations', 'kiosk-forms']);
    expect(relations.out).toContain('demo-patient-1');
    expect(relations.out).toContain('held-route');
    expect(await decided(await post({ patient: { ...alex, externalPatientId: 'kiosk-2' } }))).toMatchObject({ state: 'matched', patientId: 'demo-patient-1' });
  });
});
