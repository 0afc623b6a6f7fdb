/**
 * Patient access over HTTP (docs/write-authority.md "Relationships"): a partner made with the
 * operator CLIs, with patient access `related` and a relationship with demo-patient-2 only, reads
 * that patient through every HL7 export and FHIR read, and no other: a patient it is not related
 * to and one that does not exist get the same policy 403 (reads naming the patient) or the same
 * 404 (records named by their own id), and a Patient search leaves them out. A partner holding
 * only interop:read:own-results reads back the results it sent, and only those.
 */
import { dynamoDbClient } from '../../lib/aws/clients';
import { logicalId } from '../../lib/fhir/logical-id';
import { ApiKeyStore } from '../../lib/keys/api-key-store';
import type { LocalStack } from '../../lib/local/stack';
import { PATIENT_BLOCKED_DETAIL } from '../../lib/relationships/patient-access';
import { relationshipTable } from '../../lib/relationships/relationship-wiring';
import { relate } from '../../lib/relationships/relationships';
import { call, startTestStack, type HttpResult } from '../support/local-stack';
import { createPartnerKey, operator } from '../support/operator-cli';

jest.setTimeout(120_000);

let stack: LocalStack;
let readerKey = '';
let ownKey = '';
let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

async function createPartner(partnerId: string, extra: string[] = []): Promise<void> {
  const run = await operator('partners', ['create', '--partner-id', partnerId, '--tier', 'standard', ...extra]);
  if (run.code !== 0) throw new Error(`partners create failed (${run.code}): ${run.err}`);
  // patient access `related`, as the partners CLI sets it (written here so the test holds whatever the CLI's default)
  await new ApiKeyStore(dynamoDbClient(), stack.tables.keys).updatePartner(partnerId, { patientAccess: 'related' });
}

async function relateTo(partnerId: string, patientId: string): Promise<void> {
  const now = new Date();
  await relate(relationshipTable(), { partnerId, patientId, purpose: 'TREAT', source: 'operator', since: now.toISOString(), createdBy: 'test' }, { now });
}

const get = (key: string, path: string, accept?: string): Promise<HttpResult> =>
  call(stack, 'GET', path, { headers: { 'x-api-key': key, ...(accept ? { accept } : {}) } });

async function submitResult(key: string, senderID: string, patientID: string, testName: string): Promise<string> {
  const res = await call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({
      data: {
        senderID,
        status: 'final',
        ResultedDateUTC: '2024-03-01T09:30:00Z',
        accessionNumber: unique('ACC'),
        patientID,
        results: { testName, result: '4.1' },
      },
    }),
  });
  expect(res.status).toBeLessThan(300);
  return res.json<{ resultId: string }>().resultId;
}

/** what a refusal says, without what differs per request */
function refusal(res: HttpResult): { status: number; body: unknown } {
  const body = JSON.parse(res.text.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<request id>')) as Record<string, unknown>;
  for (const volatile of ['instance', 'requestId', 'id', 'meta']) delete body[volatile];
  return { status: res.status, body };
}

let demoLabResult = '';
let ownResult = '';

beforeAll(async () => {
  stack = await startTestStack();
  await createPartner('reach-ehr');
  await relateTo('reach-ehr', 'demo-patient-2');
  readerKey = (await createPartnerKey('reach-ehr', ['interop:export:hl7', 'interop:export:fhir'])).secret;
  await createPartner('reach-lab', ['--sender-id', 'REACH-LAB']);
  await relateTo('reach-lab', 'demo-patient-1');
  ownKey = (await createPartnerKey('reach-lab', ['interop:ingest:results', 'interop:read:own-results'])).secret;
  demoLabResult = await submitResult('demo-results-key', 'demo-lab', 'demo-patient-1', 'Sodium');
  ownResult = await submitResult(ownKey, 'REACH-LAB', 'demo-patient-1', 'Potassium');
});

afterAll(async () => {
  await stack?.close();
});

const HL7 = 'application/hl7-v2';
const PATIENT_READS: Array<[string, (patientId: string) => string, string | undefined]> = [
  ['ADT', (p) => `/exportHl7PatientAdt?patientId=${p}`, HL7],
  ['summary', (p) => `/exportHl7PatientSummary?patientId=${p}`, HL7],
  ['note', (p) => `/exportHl7Note?patientId=${p}&noteId=demo-note-1`, HL7],
  ['encounter', (p) => `/exportHl7Encounter?patientId=${p}&encounterId=demo-encounter-1`, HL7],
  ['Patient read', (p) => `/fhir/Patient/${p}`, undefined],
  ['$everything', (p) => `/fhir/Patient/${p}/$everything`, undefined],
  ['Encounter search', (p) => `/fhir/Encounter?patient=${p}`, undefined],
  ['DocumentReference search', (p) => `/fhir/DocumentReference?patient=Patient/${p}`, undefined],
  ['Observation search', (p) => `/fhir/Observation?patient=${p}`, undefined],
  ['DiagnosticReport search', (p) => `/fhir/DiagnosticReport?patient=${p}`, undefined],
];

describe('a partner with patient access related', () => {
  it.each(PATIENT_READS)('%s: the related patient is read; an unrelated and an unknown patient get the same policy 403', async (_name, path, accept) => {
    const related = await get(readerKey, path('demo-patient-2'), accept);
    expect(related.status).not.toBe(403);
    const unrelated = await get(readerKey, path('demo-patient-1'), accept);
    const unknown = await get(readerKey, path('no-such-patient-9'), accept);
    expect(unrelated.status).toBe(403);
    expect(unrelated.text).toContain(PATIENT_BLOCKED_DETAIL);
    expect(refusal(unknown)).toEqual(refusal(unrelated));
    // a partner of the organisation (patient access all) still reads the patient
    const owner = await get(path('demo-patient-1').startsWith('/fhir') ? 'demo-fhir-key' : 'demo-export-key', path('demo-patient-1'), accept);
    expect(owner.status).not.toBe(403);
  });

  it('a record named by its own id, of a patient it may not read, is the same 404 as an unknown id', async () => {
    const encounter = logicalId('demo-patient-1', 'demo-encounter-1');
    expect((await get('demo-fhir-key', `/fhir/Encounter/${encounter}`)).status).toBe(200);
    const unrelated = await get(readerKey, `/fhir/Encounter/${encounter}`);
    const unknown = await get(readerKey, `/fhir/Encounter/${logicalId('demo-patient-1', 'no-such-encounter')}`);
    expect(unrelated.status).toBe(404);
    expect(refusal(unrelated)).toEqual(refusal(unknown));
    const report = logicalId('demo-patient-1', demoLabResult);
    expect((await get('demo-fhir-key', `/fhir/DiagnosticReport/${report}`)).status).toBe(200);
    expect((await get(readerKey, `/fhir/DiagnosticReport/${report}`)).status).toBe(404);
  });

  it('Patient?identifier= finds the related patient and leaves the others out', async () => {
    const search = (mrn: string, key = readerKey) => get(key, `/fhir/Patient?identifier=${encodeURIComponent(`urn:interop:mrn:DEMO-HOSP|${mrn}`)}`);
    const total = (res: HttpResult) => res.json<{ total?: number; entry?: unknown[] }>().entry?.length ?? 0;
    expect(total(await search('DEMO-000001', 'demo-fhir-key'))).toBe(1);
    expect(total(await search('DEMO-000001'))).toBe(0);
    expect(total(await search('DEMO-000002'))).toBe(1);
    expect(total(await get(readerKey, '/fhir/Patient?_id=demo-patient-1,demo-patient-2'))).toBe(1);
  });

  it("another partner's lab result of an unrelated patient is the same 404 as an unknown result id", async () => {
    expect((await get('demo-export-key', `/exportHl7LabResult?resultId=${demoLabResult}`, HL7)).status).toBe(200);
    const unrelated = await get(readerKey, `/exportHl7LabResult?resultId=${demoLabResult}`, HL7);
    const unknown = await get(readerKey, `/exportHl7LabResult?resultId=lr_${'0'.repeat(32)}`, HL7);
    expect(unrelated.status).toBe(404);
    expect(refusal(unrelated)).toEqual(refusal(unknown));
  });
});

describe('interop:read:own-results', () => {
  it('reads back the results this partner sent, as HL7 and FHIR, without an export scope', async () => {
    const hl7 = await get(ownKey, `/exportHl7LabResult?resultId=${ownResult}`, HL7);
    expect(hl7.status).toBe(200);
    expect(hl7.text).toContain('Potassium');
    expect((await get(ownKey, `/fhir/DiagnosticReport/${logicalId('demo-patient-1', ownResult)}`)).status).toBe(200);
    const search = await get(ownKey, '/fhir/DiagnosticReport?patient=demo-patient-1');
    expect(search.status).toBe(200);
    const ids = (search.json<{ entry?: Array<{ resource: { id: string } }> }>().entry ?? []).map((e) => e.resource.id);
    expect(ids).toEqual([logicalId('demo-patient-1', ownResult)]);
  });

  it("never another partner's result, nor any other export", async () => {
    expect((await get(ownKey, `/exportHl7LabResult?resultId=${demoLabResult}`, HL7)).status).toBe(404);
    expect((await get(ownKey, `/fhir/DiagnosticReport/${logicalId('demo-patient-1', demoLabResult)}`)).status).toBe(404);
    expect((await get(ownKey, '/exportHl7PatientSummary?patientId=demo-patient-1', HL7)).status).toBe(403);
    expect((await get(ownKey, '/fhir/Patient/demo-patient-1')).status).toBe(403);
  });
});
