/**
 * Held records (docs/write-authority.md, issue 26) against the local stack: what HL7 intake could not
 * file to a chart patient is listed for staff (GET /interopInbox/held), read in full, and routed to a
 * chart patient (POST /interopInbox/held/{heldId}/route): a document becomes the patient's note, an
 * identity is linked (the partner's later ORU lands on the patient), held lab results get a current
 * version for the patient. The route is audited under the chart patient and happens once.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '../../lib/aws/attribute-values';
import { dynamoDbClient } from '../../lib/aws/clients';
import { parseHl7Message, firstSegment, valueAt } from '../../lib/hl7/parser';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36).toUpperCase()}${++seq}`;
const INBOX = { 'x-api-key': 'demo-inbox-key' };

async function postHl7(text: string): Promise<void> {
  const res = await call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': 'demo-hl7-key', 'content-type': 'application/hl7-v2' }, body: text });
  expect(res.status).toBe(200);
  expect(valueAt(firstSegment(parseHl7Message(res.text), 'MSA'), 1)).toBe('AA');
}

const pid = (mrn: string, family: string, given: string) => `PID|1||${mrn}^^^DEMO-LAB^MR||${family}^${given}||19800102|F`;

interface HeldItem {
  heldId: string;
  kind: string;
  state: string;
  sender: string;
  partnerId: string;
  person: { name?: { family: string; given?: string }; birthDate?: string; sex?: string; identifiers: Array<{ value: string; authority: string }> };
  description: Record<string, unknown>;
  routedTo?: string;
}

/** The held (or routed) record whose claimed person carries this MRN, paging through the list. */
async function findHeld(mrn: string, kind: string, state = 'held'): Promise<HeldItem> {
  let cursor: string | undefined;
  for (let page = 0; page < 20; page++) {
    const res = await call(stack, 'GET', `/interopInbox/held?state=${state}&limit=5${cursor ? `&cursor=${cursor}` : ''}`, { headers: INBOX });
    expect(res.status).toBe(200);
    const body = res.json<{ items: HeldItem[]; nextCursor?: string }>();
    const hit = body.items.find((i) => i.kind === kind && i.person.identifiers.some((id) => id.value === mrn));
    if (hit) return hit;
    if (!body.nextCursor) break;
    cursor = body.nextCursor;
  }
  throw new Error(`no ${state} ${kind} record for the MRN`);
}

async function route(heldId: string, patientId: string, requestId = unique('route-')): Promise<HttpResult> {
  return call(stack, 'POST', `/interopInbox/held/${heldId}/route`, {
    headers: { ...INBOX, 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ patientId }),
  });
}

async function exported(path: string): Promise<HttpResult> {
  return call(stack, 'GET', path, { headers: { 'x-api-key': 'demo-export-key' } });
}

async function auditRecords(requestId: string): Promise<Array<Record<string, unknown>>> {
  const out = await dynamoDbClient().send(new ScanCommand({ TableName: stack.tables.audit }));
  return (out.Items ?? []).map((i) => unmarshall(i)).filter((r) => r.requestId === requestId);
}

describe('held documents', () => {
  const mrn = unique('HD');
  const controlId = unique('M');
  const noteId = `demo-lab:n-${controlId}`;
  let held: HeldItem;

  it('an MDM^T02 for an unknown patient is AA and listed as held, without the note text', async () => {
    await postHl7(
      [
        `MSH|^~\\&|EHR|DEMO-LAB-LIS|||20240301||MDM^T02|${controlId}|P|2.5.1`,
        pid(mrn, 'Heldman', 'Hana'),
        `TXA|1|PN|TEXT|20240301|||||1^Doc^Ada|||n-${controlId}`,
        'OBX|1|TX|NOTE||held note text',
      ].join('\r') + '\r',
    );
    held = await findHeld(mrn, 'document');
    expect(held).toMatchObject({
      state: 'held',
      sender: 'DEMO-LAB-LIS',
      partnerId: 'demo-lab',
      person: { name: { family: 'Heldman', given: 'Hana' }, birthDate: '1980-01-02', sex: 'F' },
      description: { author: { name: { family: 'Doc', given: 'Ada' } } },
    });
    expect(JSON.stringify(held)).not.toContain('held note text');
  });

  it('the record in full carries the note text', async () => {
    const res = await call(stack, 'GET', `/interopInbox/held/${held.heldId}`, { headers: INBOX });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ heldId: held.heldId, kind: 'document', sourceMessageId: controlId, note: { noteId, text: 'held note text' } });
  });

  it('an unknown held id or an unknown patient is 404; a bad body 400', async () => {
    expect((await route('held-20240101000000-000000000000000000000000', 'demo-patient-1')).status).toBe(404);
    expect((await route(held.heldId, 'demo-patient-nobody')).status).toBe(404);
    const bad = await call(stack, 'POST', `/interopInbox/held/${held.heldId}/route`, {
      headers: { ...INBOX, 'content-type': 'application/json' },
      body: JSON.stringify({ patient: 'demo-patient-1' }),
    });
    expect(bad.status).toBe(400);
    expect((await call(stack, 'GET', '/interopInbox/held/not-a-held-id', { headers: INBOX })).status).toBe(404);
  });

  it('the chart search of a held record finds demo-patient-1 by MRN; an unknown held id is 404', async () => {
    const res = await call(stack, 'POST', `/interopInbox/held/${held.heldId}/patientSearch`, {
      headers: { ...INBOX, 'content-type': 'application/json' },
      body: JSON.stringify({ mrn: 'demo-000001' }),
    });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ heldId: held.heldId, charts: [{ patientId: 'demo-patient-1', role: 'search' }], more: false });
    const unknown = await call(stack, 'POST', '/interopInbox/held/held-20240101000000-000000000000000000000000/patientSearch', {
      headers: { ...INBOX, 'content-type': 'application/json' },
      body: JSON.stringify({ mrn: 'demo-000001' }),
    });
    expect(unknown.status).toBe(404);
  });

  it('routed to demo-patient-1: the note is exported under the patient; the audit names the patient; again -> 409', async () => {
    expect((await exported(`/exportHl7Note?patientId=demo-patient-1&noteId=${encodeURIComponent(noteId)}`)).status).toBe(404);
    const requestId = unique('route-doc-');
    const res = await route(held.heldId, 'demo-patient-1', requestId);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ status: 'routed', heldId: held.heldId, kind: 'document', routedTo: 'demo-patient-1', noteId });

    const note = await exported(`/exportHl7Note?patientId=demo-patient-1&noteId=${encodeURIComponent(noteId)}`);
    expect(note.status).toBe(200);
    expect(note.text).toContain('held note text');

    const records = await auditRecords(requestId);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ action: 'inbox.held_route', patientId: 'demo-patient-1', resourceIds: { heldId: held.heldId, kind: 'document' } });

    const again = await route(held.heldId, 'demo-patient-1');
    expect(again.status).toBe(409);
    expect(again.json()).toMatchObject({ routedTo: 'demo-patient-1' });
    expect((await findHeld(mrn, 'document', 'routed')).routedTo).toBe('demo-patient-1');
    // the record names the chart patient it went to (the inbox page shows a name, not an id)
    const detail = await call(stack, 'GET', `/interopInbox/held/${held.heldId}`, { headers: INBOX });
    expect(detail.json()).toMatchObject({
      routedTo: 'demo-patient-1',
      routedChart: { patientId: 'demo-patient-1', name: { family: 'Sample', given: 'Alex' }, mrn: 'DEMO-000001', assigningAuthority: 'DEMO-HOSP' },
    });
  });
});

describe('held identities', () => {
  const mrn = unique('HI');

  it('an ADT^A04 for an unknown MRN, routed to demo-patient-2: the next ORU of the sender for that MRN lands on demo-patient-2', async () => {
    await postHl7([`MSH|^~\\&|LAB|DEMO-LAB-LIS|||20240301||ADT^A04|${unique('A')}|P|2.5.1`, 'EVN|A04|20240301', pid(mrn, 'Identa', 'Ida')].join('\r') + '\r');
    const held = await findHeld(mrn, 'identity');
    expect(held.description).toEqual({});
    const detail = await call(stack, 'GET', `/interopInbox/held/${held.heldId}`, { headers: INBOX });
    expect(detail.json()).toMatchObject({ kind: 'identity', demographics: { name: { family: 'Identa', given: 'Ida' }, mrn } });

    const requestId = unique('route-id-');
    const res = await route(held.heldId, 'demo-patient-2', requestId);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'identity', routedTo: 'demo-patient-2' });
    expect((await auditRecords(requestId))[0]).toMatchObject({ action: 'inbox.held_route', patientId: 'demo-patient-2', resourceIds: { kind: 'identity' } });

    const accession = unique('ACC');
    await postHl7(
      [
        `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${unique('O')}|P|2.5.1`,
        pid(mrn, 'Identa', 'Ida'),
        `OBR|1|ORD1|${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
        'OBX|1|NM|2345-7^Glucose^LN||98|mg/dL^^UCUM|70-99|N|||F',
      ].join('\r') + '\r',
    );
    const summary = await exported('/exportHl7PatientSummary?patientId=demo-patient-2&limit=200');
    expect(summary.status).toBe(200);
    expect(summary.text).toContain(accession);
    expect((await route(held.heldId, 'demo-patient-2')).status).toBe(409);

    // staff end the link: the record is back in the queue, the sender's next ORU for the MRN is held again
    const unlinked = await call(stack, 'POST', `/interopInbox/held/${held.heldId}/unlink`, { headers: INBOX });
    expect(unlinked.status).toBe(200);
    expect(unlinked.json()).toMatchObject({ status: 'unlinked', unlinkedFrom: 'demo-patient-2', relationshipEnded: false });
    expect((await findHeld(mrn, 'identity')).heldId).toBe(held.heldId);
    const after = unique('ACC');
    await postHl7(
      [
        `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${unique('O')}|P|2.5.1`,
        pid(mrn, 'Identa', 'Ida'),
        `OBR|1|ORD1|${after}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
        'OBX|1|NM|2345-7^Glucose^LN||99|mg/dL^^UCUM|70-99|N|||F',
      ].join('\r') + '\r',
    );
    expect((await exported('/exportHl7PatientSummary?patientId=demo-patient-2&limit=200')).text).not.toContain(after);
    // a second unlink has no link to end
    expect((await call(stack, 'POST', `/interopInbox/held/${held.heldId}/unlink`, { headers: INBOX })).status).toBe(409);
  });
});

describe('held lab results', () => {
  const mrn = unique('HL');
  const accession = unique('ACC');

  it('an ORU for an unknown patient is held; routed to demo-patient-3 it is a current result of the patient', async () => {
    await postHl7(
      [
        `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${unique('O')}|P|2.5.1`,
        pid(mrn, 'Labbe', 'Lou'),
        `OBR|1|ORD1|${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
        'OBX|1|NM|2345-7^Glucose^LN||123|mg/dL^^UCUM|70-99|H|||F',
      ].join('\r') + '\r',
    );
    const held = await findHeld(mrn, 'lab-result');
    expect(held.description).toEqual({ resultCount: 1 });
    expect((await exported('/exportHl7PatientSummary?patientId=demo-patient-3&limit=200')).text).not.toContain(accession);

    const requestId = unique('route-lab-');
    const res = await route(held.heldId, 'demo-patient-3', requestId);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ kind: 'lab-result', routedTo: 'demo-patient-3', resultIds: [expect.stringMatching(/^lr_/)] });
    expect((await auditRecords(requestId))[0]).toMatchObject({ patientId: 'demo-patient-3', resourceIds: { kind: 'lab-result' } });

    const summary = await exported('/exportHl7PatientSummary?patientId=demo-patient-3&limit=200');
    expect(summary.text).toContain(accession);
    expect((await route(held.heldId, 'demo-patient-3')).status).toBe(409);
  });
});
