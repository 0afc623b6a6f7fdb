/**
 * Purpose of use and the accounting of disclosures over HTTP (docs/disclosures.md): demo-ehr (patient
 * access all) exports and reads demo patients with and without x-purpose-of-use; the privacy reviewer's
 * GET /disclosures lists each disclosure with its purpose; a bad purpose is a 400 naming the header
 * (an OperationOutcome on FHIR) with nothing recorded; a partner over the distinct-patient threshold
 * of the hour writes the alarm's log line (ids and counts only).
 */
import type { LocalStack } from '../../lib/local/stack';
import { setLogSink } from '../../lib/observability/logger';
import { PATIENT_READS_OVER_THRESHOLD_EVENT } from '../../lib/disclosures/disclosure-recorder';
import { call, startTestStack } from '../support/local-stack';

let stack: LocalStack;
const lines: string[] = [];
let restoreSink: ReturnType<typeof setLogSink>;

beforeAll(async () => {
  // a threshold of 2 distinct patients an hour, so that three patients raise the line
  stack = await startTestStack({ env: { PATIENT_READS_ALARM_THRESHOLD: '2' } });
  restoreSink = setLogSink((line) => lines.push(line));
}, 60_000);
afterAll(async () => {
  setLogSink(restoreSink);
  await stack?.close();
});

const ehr = { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' };
const privacy = { 'x-api-key': 'demo-privacy-key' };

interface Page {
  items: Array<Record<string, unknown>>;
  nextCursor?: string;
}

async function disclosures(query: string): Promise<Page> {
  const res = await call(stack, 'GET', `/disclosures?${query}`, { headers: privacy });
  expect(res.status).toBe(200);
  return res.json<Page>();
}

test('each export is a disclosure with its purpose: the requested one, else TREAT; the reviewer lists them, paged', async () => {
  const plain = await call(stack, 'GET', '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1', { headers: { ...ehr, 'x-request-id': 'disc-plain' } });
  expect(plain.status).toBe(200);
  const payment = await call(stack, 'GET', '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1', {
    headers: { ...ehr, 'x-request-id': 'disc-hpaymt', 'x-purpose-of-use': 'HPAYMT' },
  });
  expect(payment.status).toBe(200);
  const fhir = await call(stack, 'GET', '/fhir/Patient/demo-patient-1', {
    headers: { 'x-api-key': 'demo-fhir-key', 'x-request-id': 'disc-fhir', 'x-purpose-of-use': 'PUBHLTH' },
  });
  expect(fhir.status).toBe(200);

  const page = await disclosures('patientId=demo-patient-1');
  const mine = page.items.filter((d) => String(d.requestId).startsWith('disc-'));
  expect(mine.map((d) => [d.requestId, d.endpoint, d.purposeOfUse, d.purposeSource, d.partnerId])).toEqual([
    ['disc-plain', 'exportHl7Note', 'TREAT', 'default', 'demo-ehr'],
    ['disc-hpaymt', 'exportHl7Note', 'HPAYMT', 'requested', 'demo-ehr'],
    ['disc-fhir', 'fhirPatientRead', 'PUBHLTH', 'requested', 'demo-ehr'],
  ]);
  expect(mine[0]!.resourceIds).toEqual({ noteId: 'demo-note-1' });
  // what was sent is named by ids, never by a value of the record
  expect(JSON.stringify(page)).not.toMatch(/MDM|PID\||family|birthDate/);

  // a page of one, then the next by its cursor
  const first = await disclosures('patientId=demo-patient-1&limit=1');
  expect(first.items).toHaveLength(1);
  expect(first.nextCursor).toBeDefined();
  const second = await disclosures(`patientId=demo-patient-1&limit=1&cursor=${first.nextCursor}`);
  expect(second.items[0]!.requestId).not.toBe(first.items[0]!.requestId);

  // a range before the reads has none; another patient's accounting does not show them
  expect((await disclosures('patientId=demo-patient-1&to=2020-01-01')).items).toEqual([]);
  expect((await disclosures('patientId=demo-patient-5')).items).toEqual([]);
});

test('a bad x-purpose-of-use is a 400 naming the header (OperationOutcome on FHIR), and nothing is disclosed or recorded', async () => {
  const hl7 = await call(stack, 'GET', '/exportHl7PatientAdt?patientId=demo-patient-2', {
    headers: { ...ehr, 'x-request-id': 'disc-bad', 'x-purpose-of-use': 'SNOOP' },
  });
  expect(hl7.status).toBe(400);
  expect(hl7.headers.get('content-type')).toContain('application/problem+json');
  expect(hl7.json<{ errors: Array<{ header?: string }> }>().errors[0]!.header).toBe('x-purpose-of-use');
  const fhir = await call(stack, 'GET', '/fhir/Patient/demo-patient-2', {
    headers: { 'x-api-key': 'demo-fhir-key', 'x-request-id': 'disc-bad-fhir', 'x-purpose-of-use': 'TREAT, HPAYMT' },
  });
  expect(fhir.status).toBe(400);
  const outcome = fhir.json<{ resourceType: string }>();
  expect(outcome.resourceType).toBe('OperationOutcome');
  expect(fhir.text).toContain('x-purpose-of-use');
  const page = await disclosures('patientId=demo-patient-2');
  expect(page.items.filter((d) => String(d.requestId).startsWith('disc-bad'))).toEqual([]);
});

test('GET /disclosures is for staff only, and names a bad range', async () => {
  const partner = await call(stack, 'GET', '/disclosures?patientId=demo-patient-1', { headers: { 'x-api-key': 'demo-export-key' } });
  expect(partner.status).toBe(403);
  const bad = await call(stack, 'GET', '/disclosures?patientId=demo-patient-1&from=2026-12-31&to=2026-12-01', { headers: privacy });
  expect(bad.status).toBe(400);
  expect(bad.json<{ errors: Array<{ parameter?: string }> }>().errors[0]!.parameter).toBe('from');
  const cursor = await call(stack, 'GET', '/disclosures?patientId=demo-patient-1&cursor=bm90LWEtY3Vyc29y', { headers: privacy });
  expect(cursor.status).toBe(400);
});

test('more distinct patients in an hour than the threshold writes the alarm line: partner id and count, no patient id', async () => {
  lines.length = 0;
  for (const patientId of ['demo-patient-3', 'demo-patient-4', 'demo-patient-5']) {
    const res = await call(stack, 'GET', `/exportHl7PatientAdt?patientId=${patientId}`, {
      headers: { 'x-api-key': 'demo-export-oru-key', accept: 'application/hl7-v2' },
    });
    expect(res.status).toBe(200);
  }
  const alarms = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.event === PATIENT_READS_OVER_THRESHOLD_EVENT);
  expect(alarms.map((l) => [l.partnerId, l.count])).toEqual([['demo-ehr-oru', 3]]);
  expect(alarms.map((l) => JSON.stringify(l)).join('\n')).not.toContain('demo-patient');
  // the same patients again in the hour are not new: no further line
  lines.length = 0;
  await call(stack, 'GET', '/exportHl7PatientAdt?patientId=demo-patient-3', { headers: { 'x-api-key': 'demo-export-oru-key', accept: 'application/hl7-v2' } });
  expect(lines.filter((l) => l.includes(PATIENT_READS_OVER_THRESHOLD_EVENT))).toEqual([]);
});
