/**
 * GET /exportHl7LabResult against the local stack: results posted through POST /receiveTestData
 * (with and without a chart patient, with a 4 MB report kept in S3, reports beyond the size budget), read back as ORU^R01, checked
 * by the independent v2.5.1 validator and read back by two parsers (@medplum/core, hl7v2).
 */
import { randomBytes } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '../../lib/aws/attribute-values';
import { dynamoDbClient } from '../../lib/aws/clients';
import { IDENTIFIER_LENGTH, shortIdentifier } from '../../lib/hl7/identifiers';
import type { LocalStack } from '../../lib/local/stack';
import { parseWithHl7v2, parseWithMedplum } from '../hl7/parsers';
import { roundTripFailures } from '../hl7/round-trip';
import { validateHl7Message } from '../hl7/structure-validator';
import { exportLabResultMessage } from '../../lib/exports/lab-result-export';
import { labResultExportDependencies } from '../../lib/exports/lab-result-export-wiring';
import { DEFAULT_LAB_RESULT_MAX_BYTES, jsonStringBytes } from '../../lib/hl7';
import { ChartStore } from '../../lib/chart/chart-store';
import { call, startTestStack } from '../support/local-stack';
import { createPartnerKey } from '../support/operator-cli';

jest.setTimeout(120_000);
let stack: LocalStack;
/** demo-lab's own export key (the partner of demo-results-key and demo-hl7-key), made with the keys CLI */
let labExportKey = '';
beforeAll(async () => {
  stack = await startTestStack();
  labExportKey = (await createPartnerKey('demo-lab', ['interop:export:hl7'], 'demo-lab export')).secret;
});
afterAll(async () => {
  await stack?.close();
});

let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

async function submit(data: Record<string, unknown>): Promise<string> {
  const res = await call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
    body: JSON.stringify({ data: { senderID: 'demo-lab', status: 'final', ResultedDateUTC: '2024-03-01T09:30:00Z', accessionNumber: unique('ACC'), ...data } }),
  });
  expect(res.status).toBeLessThan(300);
  return res.json<{ resultId: string }>().resultId;
}

const exportResult = (resultId: string, key = 'demo-export-key') =>
  call(stack, 'GET', `/exportHl7LabResult?resultId=${encodeURIComponent(resultId)}`, { headers: { 'x-api-key': key, accept: 'application/hl7-v2' } });

/** The result id of the newest version item in the results table (as stored; no API lists a held result's id). */
async function newestResultId(): Promise<string> {
  const out = await dynamoDbClient().send(new ScanCommand({ TableName: stack.tables.results }));
  // version items: pk RESULT#<resultId>, sk VERSION#..., receivedAt (lib/results/result-store.ts)
  const versions = (out.Items ?? [])
    .map((item) => unmarshall(item) as { pk: string; sk: string; receivedAt?: string })
    .filter((v) => v.pk.startsWith('RESULT#') && v.sk.startsWith('VERSION#') && typeof v.receivedAt === 'string')
    .sort((a, b) => a.receivedAt!.localeCompare(b.receivedAt!));
  const newest = versions.at(-1);
  if (!newest) throw new Error('no result version');
  return newest.pk.slice('RESULT#'.length);
}

function expectValid(text: string) {
  const report = validateHl7Message(text);
  expect(report.issues).toEqual([]);
  expect(report.valid).toBe(true);
  expect(report.structure).toBe('ORU_R01');
}

describe('GET /exportHl7LabResult', () => {
  it('a matched result: PID from the chart, OBX per test with decrypted values, valid, both parsers read it back', async () => {
    const resultId = await submit({
      patientID: 'demo-patient-1',
      results: [
        { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' },
        { testName: 'Comment | with ^ delimiters & more', result: 'see note\nline two' },
      ],
    });
    const res = await exportResult(resultId);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/hl7-v2; charset=utf-8');
    expectValid(res.text);
    const segments = res.text.split('\r').filter(Boolean);
    expect(segments.map((s) => s.slice(0, 3))).toEqual(['MSH', 'PID', 'OBR', 'OBX', 'OBX']);
    expect(segments[0]).toContain('|ORU^R01^ORU_R01|');
    const medplum = parseWithMedplum(res.text);
    expect(medplum.value({ segment: 'PID', field: 3, component: 5 })).toBe('MR');
    // OBR-2 is an EI of at most 22 characters: the 35-character result id goes in its stable short form
    expect(medplum.value({ segment: 'OBR', field: 2, component: 1 })).toBe(shortIdentifier(resultId, IDENTIFIER_LENGTH.ei));
    expect(medplum.value({ segment: 'OBR', field: 2, component: 2 })).toBe('INTEROP');
    expect(
      roundTripFailures(res.text, [
        { at: { segment: 'OBX', field: 5 }, value: '98' },
        { at: { segment: 'OBX', field: 6 }, value: 'mg/dL' },
        { at: { segment: 'OBX', field: 7 }, value: '70-99' },
        { at: { segment: 'OBX', occurrence: 1, field: 3, component: 2 }, value: 'Comment | with ^ delimiters & more' },
        { at: { segment: 'OBX', occurrence: 1, field: 5 }, value: 'see note\nline two', kind: 'lines' },
      ]),
    ).toEqual([]);
  });

  it('an unmatched result, read by its own partner: PID-3 is the lab patient id assigned by the sender; valid', async () => {
    // within CX-1's 15 characters, so PID-3 carries the sender's id as it is
    const labPatient = unique('LP');
    expect(labPatient.length).toBeLessThanOrEqual(IDENTIFIER_LENGTH.cx);
    const resultId = await submit({ patientID: labPatient, results: { testName: 'Potassium', result: '4.1', units: 'mmol/L' } });
    const res = await exportResult(resultId, labExportKey);
    expect(res.status).toBe(200);
    expectValid(res.text);
    expect(
      roundTripFailures(res.text, [
        { at: { segment: 'PID', field: 3, component: 1 }, value: labPatient },
        { at: { segment: 'PID', field: 3, component: 4 }, value: 'demo-lab' },
        { at: { segment: 'PID', field: 3, component: 5 }, value: 'PI' },
        { at: { segment: 'OBX', field: 5 }, value: '4.1' },
      ]),
    ).toEqual([]);
  });

  it("a result not filed to the chart is its own partner's only: another partner's export key gets the 404 of an unknown id", async () => {
    const unmatched = await submit({ patientID: unique('LP'), results: { testName: 'HIV-1 RNA', result: 'DETECTED' } });
    const held = await call(stack, 'POST', '/receiveHl7', {
      headers: { 'x-api-key': 'demo-hl7-key', 'content-type': 'application/hl7-v2' },
      body: [
        `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|HOSP|20240301093000||ORU^R01^ORU_R01|${unique('M')}|P|2.5.1`,
        `PID|1||${unique('L')}^^^DEMO-LAB^MR||Unknown^Person||19800101|F`,
        `OBR|1||${unique('ACC')}|HIV^HIV-1 RNA^L|||20240301080000|||||||||||||||20240301093000|||F`,
        'OBX|1|ST|HIV^HIV-1 RNA^L||DETECTED||||||F',
      ].join('\r'),
    });
    expect(held.status).toBe(200);
    expect(held.text).toContain('MSA|AA|');
    const heldResultId = await newestResultId();
    expect(heldResultId).not.toBe(unmatched);
    const unknown = await exportResult('lr_00000000000000000000000000000000');
    expect(unknown.status).toBe(404);
    for (const resultId of [unmatched, heldResultId]) {
      for (const key of ['demo-export-key', 'demo-export-oru-key']) {
        const other = await exportResult(resultId, key);
        expect(other.status).toBe(404);
        expect(other.json<Record<string, unknown>>()).toEqual({ ...unknown.json<Record<string, unknown>>(), requestId: expect.any(String) });
        expect(other.text).not.toContain('DETECTED');
      }
      expect((await exportResult(resultId, labExportKey)).status).toBe(200);
    }
    // a chart result stays every exporter's
    const filed = await submit({ patientID: 'demo-patient-1', results: { testName: 'Glucose', result: '98' } });
    expect((await exportResult(filed, 'demo-export-key')).status).toBe(200);
  });

  it('a result stored for a patient id the chart did not know stays unfiled once the chart has that patient: no patient-scoped read shows it', async () => {
    const patientId = unique('late-pt');
    const accession = unique('LATE');
    const unfiled = await submit({ patientID: patientId, accessionNumber: accession, results: { testName: 'HIV-1 RNA', result: 'DETECTED' } });
    // the chart gets a patient with that id afterwards (an import after the lab's result)
    await new ChartStore(dynamoDbClient(), stack.tables.chart).putPatient({
      patientId,
      mrn: unique('M').slice(0, 15),
      assigningAuthority: 'DEMO-HOSP',
      name: { family: 'Later', given: 'Lee' },
      birthDate: '1990-01-01',
      sex: 'F',
    });
    const get = (path: string, key: string, accept: string) => call(stack, 'GET', path, { headers: { 'x-api-key': key, accept } });
    const summary = await get(`/exportHl7PatientSummary?patientId=${encodeURIComponent(patientId)}`, 'demo-export-key', 'application/hl7-v2');
    expect(summary.status).toBe(200);
    expect(summary.text).not.toContain(accession);
    expect(summary.text).not.toContain('DETECTED');
    for (const path of [
      `/fhir/DiagnosticReport?patient=${encodeURIComponent(patientId)}`,
      `/fhir/Observation?patient=${encodeURIComponent(patientId)}`,
      `/fhir/Patient/${encodeURIComponent(patientId)}/$everything`,
    ]) {
      const res = await get(path, 'demo-fhir-key', 'application/fhir+json');
      expect(res.status).toBe(200);
      expect(res.text).not.toContain(accession);
      expect(res.text).not.toContain('DETECTED');
    }
    expect((await exportResult(unfiled, 'demo-export-key')).status).toBe(404);
    expect((await exportResult(unfiled, labExportKey)).status).toBe(200);
  });

  it('a 4 MB (base64) PDF report (kept in S3) comes back whole as OBX ED, plus a text report as TX; valid and round-trips', async () => {
    // 4,128,768 bytes of base64 report data (3 MiB − 48 KiB of PDF bytes): about the largest a lab can send inside the 4 MiB request limit
    const pdf = randomBytes(3 * 1024 * 1024 - 48 * 1024).toString('base64');
    expect(pdf.length).toBe(4 * 1024 * 1024 - 64 * 1024);
    const text = 'Narrative report\nwith | delimiters ^ and ~ & \\ escapes';
    const resultId = await submit({
      patientID: 'demo-patient-2',
      results: { testName: 'Pathology', result: 'see report' },
      reports: [
        { source: 'base64', type: 'application/pdf', name: 'Pathology report', data: pdf },
        { source: 'text', type: 'text/plain', name: 'Narrative', data: text },
      ],
    });
    const res = await exportResult(resultId);
    expect(res.status).toBe(200);
    expectValid(res.text);
    const hl7v2 = parseWithHl7v2(res.text);
    expect(hl7v2.value({ segment: 'OBX', occurrence: 1, field: 2 })).toBe('ED');
    expect(hl7v2.value({ segment: 'OBX', occurrence: 1, field: 5, component: 2 })).toBe('AP');
    expect(hl7v2.value({ segment: 'OBX', occurrence: 1, field: 5, component: 3 })).toBe('PDF');
    expect(hl7v2.value({ segment: 'OBX', occurrence: 1, field: 5, component: 4 })).toBe('Base64');
    expect(
      roundTripFailures(res.text, [
        { at: { segment: 'OBX', occurrence: 1, field: 5, component: 5 }, value: pdf },
        { at: { segment: 'OBX', occurrence: 1, field: 3, component: 2 }, value: 'Pathology report' },
        { at: { segment: 'OBX', occurrence: 2, field: 5 }, value: text, kind: 'formatted' },
      ]),
    ).toEqual([]);
  });

  it('issue 28: the export never passes its size budget: reports beyond it are left out, an NTE and the headers say so', async () => {
    // three 300 KB PDFs (each kept in S3); a lowered budget (injected) that holds one of them
    const pdfs = [0, 1, 2].map(() => randomBytes(225 * 1024).toString('base64'));
    const resultId = await submit({
      patientID: 'demo-patient-2',
      results: { testName: 'Pathology', result: 'see reports' },
      reports: pdfs.map((data, i) => ({ source: 'base64', type: 'application/pdf', name: `Part ${i + 1}`, data })),
    });
    const whole = await exportResult(resultId);
    expect(whole.status).toBe(200);
    expect(whole.headers.get('x-export-truncated')).toBe('false');
    expect(whole.headers.get('x-export-reports')).toBe('3/3');
    expect(jsonStringBytes(whole.text)).toBeLessThanOrEqual(DEFAULT_LAB_RESULT_MAX_BYTES);

    const maxBytes = 500_000;
    const principal = { keyId: 'k', partnerId: 'demo-ehr', scopes: ['interop:export:hl7' as const], allowedSenderIds: [], patientAccess: 'all' as const };
    const cut = await exportLabResultMessage(labResultExportDependencies(), { resultId }, { principal, now: new Date(), maxBytes });
    expect(cut).toMatchObject({ cut: true, reportsIncluded: 1, reportsAvailable: 3 });
    expect(jsonStringBytes(cut.message)).toBeLessThanOrEqual(maxBytes);
    expectValid(cut.message);
    const segments = cut.message.split('\r').filter(Boolean);
    expect(segments.map((s) => s.slice(0, 3))).toEqual(['MSH', 'PID', 'OBR', 'NTE', 'OBX', 'OBX']);
    expect(segments[3]).toContain("This message holds 1 of the result's 3 reports: it was cut at its size budget of 500000 bytes.");
    expect(roundTripFailures(cut.message, [{ at: { segment: 'OBX', occurrence: 1, field: 5, component: 5 }, value: pdfs[0]! }])).toEqual([]);
  });

  it('issue 27: a result sent with the optional lab model fields comes back in its v2.5.1 places (code, UCUM units, flags, status, NTE, order)', async () => {
    const resultId = await submit({
      patientID: 'demo-patient-1',
      order: {
        placerOrderNumber: { id: 'ORD-55', namespace: 'CLINIC' },
        accessionNamespace: 'ACME_LIS',
        universalService: { code: '24323-8', display: 'Comprehensive metabolic panel', system: 'LN' },
        collectedAt: '2024-03-01T07:45-06:00',
        comments: ['Fasting specimen.'],
      },
      results: [
        {
          testName: 'Potassium',
          result: '6.9',
          units: 'mmol/L',
          referenceRange: '3.5-5.1',
          code: '2823-3',
          codeSystem: 'LN',
          valueType: 'NM',
          numericValue: '6.90',
          unitsCode: 'mmol/L',
          abnormalFlags: ['HH'],
          observationStatus: 'C',
          observedAt: '2024-03-01',
          comments: ['Called to the ward.'],
        },
      ],
    });
    const res = await exportResult(resultId);
    expect(res.status).toBe(200);
    expectValid(res.text);
    expect(
      res.text
        .split('\r')
        .filter(Boolean)
        .map((s) => s.slice(0, 3)),
    ).toEqual(['MSH', 'PID', 'OBR', 'NTE', 'OBX', 'NTE']);
    expect(
      roundTripFailures(res.text, [
        { at: { segment: 'OBR', field: 2, component: 1 }, value: 'ORD-55' },
        { at: { segment: 'OBR', field: 2, component: 2 }, value: 'CLINIC' },
        { at: { segment: 'OBR', field: 3, component: 2 }, value: 'ACME_LIS' },
        { at: { segment: 'OBR', field: 4, component: 1 }, value: '24323-8' },
        { at: { segment: 'OBR', field: 7 }, value: '202403010745-0600' },
        { at: { segment: 'OBR', field: 22 }, value: '20240301093000+0000' },
        { at: { segment: 'NTE', field: 3 }, value: 'Fasting specimen.' },
        { at: { segment: 'OBX', field: 2 }, value: 'NM' },
        { at: { segment: 'OBX', field: 3, component: 1 }, value: '2823-3' },
        { at: { segment: 'OBX', field: 3, component: 3 }, value: 'LN' },
        { at: { segment: 'OBX', field: 5 }, value: '6.90' },
        { at: { segment: 'OBX', field: 6, component: 1 }, value: 'mmol/L' },
        { at: { segment: 'OBX', field: 6, component: 3 }, value: 'UCUM' },
        { at: { segment: 'OBX', field: 8 }, value: 'HH' },
        { at: { segment: 'OBX', field: 11 }, value: 'C' },
        { at: { segment: 'OBX', field: 14 }, value: '20240301' },
        { at: { segment: 'NTE', occurrence: 1, field: 3 }, value: 'Called to the ward.' },
      ]),
    ).toEqual([]);
  });

  it('404 for an unknown result id, 400 for a missing or bad one, 403 without the export scope; every export audited', async () => {
    expect((await exportResult('lr_doesnotexist')).status).toBe(404);
    const missing = await call(stack, 'GET', '/exportHl7LabResult', { headers: { 'x-api-key': 'demo-export-key' } });
    expect(missing.status).toBe(400);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
    expect((await exportResult('x'.repeat(500))).status).toBe(400);
    expect((await exportResult('lr_any', 'demo-results-key')).status).toBe(403);
    const audit = await dynamoDbClient().send(new ScanCommand({ TableName: stack.tables.audit }));
    const actions = (audit.Items ?? []).map((i) => unmarshall(i)).filter((r) => r.action === 'export.lab-result');
    expect(actions.length).toBeGreaterThanOrEqual(3);
    expect(actions.some((r) => r.status === 404)).toBe(true);
  });
});
