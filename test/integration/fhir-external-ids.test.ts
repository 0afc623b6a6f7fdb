/**
 * Issue 27 item 5 (leftovers): one external id per clinician, order and document, shared by HL7 and FHIR.
 * A clinician id of 40 characters is written in XCN-1 as its 15-character short form; FHIR (DocumentReference
 * author, the lab order's requester, $everything) now writes the same string, not the chart's raw id. The same
 * for a lab result's accession and placer numbers (OBR-3 / OBR-2, 22 characters) and a note's document number
 * (TXA-12). And: presentedForm urls of a DiagnosticReport are absolute on the single read as in the
 * searches and $everything (before: relative on the read).
 */
import type { Bundle, DiagnosticReport, DocumentReference, ServiceRequest } from '@medplum/fhirtypes';
import { dynamoDbClient } from '../../lib/aws/clients';
import { ChartStore } from '../../lib/chart/chart-store';
import { logicalId } from '../../lib/fhir/logical-id';
import { IDENTIFIER_LENGTH, shortIdentifier } from '../../lib/hl7/identifiers';
import { parseHl7Message, valueAt, type ParsedSegment } from '../../lib/hl7/parser';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

const PATIENT = 'demo-patient-4';
/** 40 characters: too long for XCN-1 (15) */
const CLINICIAN = 'clinician-0000-1111-2222-3333-4444-55555';
const NOTE_ID = 'external-id-note-with-a-long-note-id';
/** 30 characters: too long for EI-1 of OBR-2 / OBR-3 (22) */
const ACCESSION = 'ACCESSION-2024-000000000000042';
const PLACER = 'PLACER-ORDER-2024-0000000000042';
/** above the 16 KiB a summary holds whole: FHIR gives it by url */
const LARGE_REPORT = 'Narrative report line.\n'.repeat(1000);

const FHIR = { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' };
const HL7 = { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' };
const HL7_ORU = { 'x-api-key': 'demo-export-oru-key', accept: 'application/hl7-v2' };

let stack: LocalStack;
let resultId = '';

beforeAll(async () => {
  stack = await startTestStack();
  await new ChartStore(dynamoDbClient(), stack.tables.chart).putNote({
    patientId: PATIENT,
    noteId: NOTE_ID,
    author: { id: CLINICIAN, name: { family: 'Longid', given: 'Casey', prefix: 'Dr' } },
    createdAt: '2024-05-02T10:15:00Z',
    text: 'Follow-up visit. Stable.',
  });
  const res = await call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
    body: JSON.stringify({
      data: {
        senderID: 'demo-lab',
        patientID: PATIENT,
        accessionNumber: ACCESSION,
        status: 'final',
        ResultedDateUTC: '2024-05-03T08:00:00Z',
        order: { placerOrderNumber: { id: PLACER }, orderingProvider: { id: CLINICIAN, name: { family: 'Longid', given: 'Casey', prefix: 'Dr' } } },
        results: [{ testName: 'Glucose', code: '2345-7', codeSystem: 'LN', result: '98', units: 'mg/dL' }],
        reports: [{ source: 'text', type: 'text/plain', name: 'narrative.txt', data: LARGE_REPORT }],
      },
    }),
  });
  expect(`${res.status} ${res.status === 200 ? '' : res.text.slice(0, 400)}`).toBe('200 ');
  resultId = res.json<{ resultId: string }>().resultId;
});

afterAll(async () => {
  await stack?.close();
});

async function text(p: string, headers: Record<string, string>): Promise<string> {
  const res = await call(stack, 'GET', p, { headers });
  expect(`${res.status} ${res.status === 200 ? '' : res.text.slice(0, 300)}`).toBe('200 ');
  return res.text;
}

const segments = (message: string, name: string): ParsedSegment[] => parseHl7Message(message).segments.filter((s) => s.name === name);
const SHORT_FORM = /^_[0-9A-HJKMNP-TV-Z]+$/;

describe('issue 27 item 5: one external id per clinician, order and document in HL7 and FHIR', () => {
  const clinician = shortIdentifier(CLINICIAN, IDENTIFIER_LENGTH.xcn);

  it('the ids are too long for their HL7 fields, so HL7 writes their short forms', () => {
    expect(CLINICIAN).toHaveLength(40);
    expect(clinician).toMatch(SHORT_FORM);
    expect(clinician).toHaveLength(15);
  });

  it('note: TXA-5 (MDM) = the summary = FHIR DocumentReference.author; TXA-12 = DocumentReference.identifier', async () => {
    const mdm = await text(`/exportHl7Note?patientId=${PATIENT}&noteId=${NOTE_ID}`, HL7);
    const txa = segments(mdm, 'TXA')[0];
    expect(valueAt(txa, 5, 1)).toBe(clinician);
    const documentNumber = valueAt(txa, 12, 1);
    const namespace = valueAt(txa, 12, 2);
    expect(documentNumber).toMatch(SHORT_FORM);

    const summary = await text(`/exportHl7PatientSummary?patientId=${PATIENT}&limit=200`, HL7_ORU);
    const noteGroup = segments(summary, 'OBR').find((obr) => valueAt(obr, 3, 1) === documentNumber);
    expect(noteGroup).toBeDefined();
    expect(summary).toContain(clinician);
    expect(summary).not.toContain(CLINICIAN);

    const doc = JSON.parse(await text(`/fhir/DocumentReference/${PATIENT}..${NOTE_ID}`, FHIR)) as DocumentReference;
    expect(doc.author?.[0]?.identifier).toEqual({ system: 'urn:interop:clinician', value: clinician });
    expect(doc.identifier).toEqual([{ system: `urn:interop:document-number:${namespace}`, value: documentNumber }]);
  });

  it('lab result: OBR-16 / OBR-3 / OBR-2 of the single export and the summary = FHIR requester / accession / placer', async () => {
    const oru = await text(`/exportHl7LabResult?resultId=${encodeURIComponent(resultId)}`, HL7);
    const obr = segments(oru, 'OBR')[0];
    expect(valueAt(obr, 16, 1)).toBe(clinician);
    const accession = valueAt(obr, 3, 1);
    const placer = valueAt(obr, 2, 1);
    expect(accession).toBe(shortIdentifier(ACCESSION, IDENTIFIER_LENGTH.ei));
    expect(placer).toBe(shortIdentifier(PLACER, IDENTIFIER_LENGTH.ei));
    expect([accession, placer].every((id) => SHORT_FORM.test(id) && id.length === 22)).toBe(true);

    const summary = await text(`/exportHl7PatientSummary?patientId=${PATIENT}&limit=200`, HL7_ORU);
    const labGroup = segments(summary, 'OBR').find((s) => valueAt(s, 3, 1) === accession);
    expect([valueAt(labGroup, 2, 1), valueAt(labGroup, 16, 1)]).toEqual([placer, clinician]);

    const report = JSON.parse(await text(`/fhir/DiagnosticReport/${logicalId(PATIENT, resultId)}`, FHIR)) as DiagnosticReport;
    const order = report.contained?.find((r) => r.resourceType === 'ServiceRequest') as ServiceRequest | undefined;
    expect(order?.requester?.identifier?.value).toBe(clinician);
    // the lab's own numbers unchanged, and the HL7 form beside them (secondary, the same system)
    expect(report.identifier?.map((id) => [id.type?.coding?.[0]?.code, id.use, id.value])).toEqual([
      ['ACSN', 'usual', ACCESSION],
      ['ACSN', 'secondary', accession],
      ['PLAC', 'usual', PLACER],
      ['PLAC', 'secondary', placer],
    ]);
    expect(order?.identifier?.map((id) => [id.use, id.value])).toEqual([
      ['usual', PLACER],
      ['secondary', placer],
    ]);
  });

  it('$everything writes the same strings; the raw long clinician id never, the lab numbers only beside their HL7 form', async () => {
    const body = await text(`/fhir/Patient/${PATIENT}/$everything?_count=200`, FHIR);
    const bundle = JSON.parse(body) as Bundle;
    expect(bundle.link?.some((l) => l.relation === 'next')).toBe(false);
    expect(body).not.toContain(CLINICIAN);
    expect(body).toContain(`"value":"${clinician}"`);
    for (const [raw, type] of [
      [ACCESSION, 'ACSN'],
      [PLACER, 'PLAC'],
    ] as const) {
      const short = shortIdentifier(raw, IDENTIFIER_LENGTH.ei);
      expect(body.split(`"value":"${raw}"`).length - 1).toBe(body.split(`"value":"${short}"`).length - 1);
      expect(body).toContain(type);
    }
  });
});

describe('presentedForm urls are absolute on every read', () => {
  const expected = () => `${stack.urls.api}/exportHl7LabResult?resultId=${encodeURIComponent(resultId)}`;

  it('DiagnosticReport read, search and $everything give the same absolute url of the large report', async () => {
    const read = JSON.parse(await text(`/fhir/DiagnosticReport/${logicalId(PATIENT, resultId)}`, FHIR)) as DiagnosticReport;
    expect(read.presentedForm).toEqual([{ contentType: 'text/plain', url: expected(), size: expect.any(Number), title: 'narrative.txt' }]);

    const search = JSON.parse(await text(`/fhir/DiagnosticReport?patient=${PATIENT}&_count=200`, FHIR)) as Bundle;
    const everything = JSON.parse(await text(`/fhir/Patient/${PATIENT}/$everything?_count=200`, FHIR)) as Bundle;
    for (const bundle of [search, everything]) {
      const found = bundle.entry?.map((e) => e.resource).find((r) => r?.resourceType === 'DiagnosticReport' && r.id === read.id) as DiagnosticReport;
      expect(found.presentedForm).toEqual(read.presentedForm);
    }
  });

  it('the url answers: the single-result export it names is this server’s', async () => {
    const res = await call(stack, 'GET', expected().slice(stack.urls.api.length), { headers: HL7 });
    expect(res.status).toBe(200);
    expect(res.text).toContain(`${shortIdentifier(ACCESSION, IDENTIFIER_LENGTH.ei)}^`);
  });
});
