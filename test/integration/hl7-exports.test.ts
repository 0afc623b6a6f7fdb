/**
 * Every HL7 export, for every demo id, served through the local stack and checked by the
 * independent v2.5.1 validator (test/hl7/structure-validator.ts, built from hl7-dictionary) and
 * parsed back by @medplum/core: structure, required fields, table values, escapes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LocalStack } from '../../lib/local/stack';
import { validateExport } from '../hl7/receiver-rules';
import { parseWithMedplum } from '../hl7/parsers';
import { call, startTestStack } from '../support/local-stack';

interface DemoPatient {
  patientId: string;
  encounters?: Array<{ encounterId: string }>;
  notes?: Array<{ noteId: string }>;
  assessments?: Array<{ assessmentId: string }>;
}
const demo = JSON.parse(readFileSync(path.resolve(__dirname, '../../lib/local/demo-chart.json'), 'utf8')) as { patients: DemoPatient[] };

const requests: Array<[string, string, string]> = [];
for (const p of demo.patients) {
  const q = (extra: string) => `patientId=${p.patientId}${extra}`;
  requests.push(['ADT_A01', `/exportHl7PatientAdt?${q('')}`, p.patientId]);
  requests.push(['BATCH', `/exportHl7PatientSummary?${q('')}`, p.patientId]);
  requests.push(['BATCH', `/exportHl7PatientSummary?${q('&limit=1')}`, p.patientId]);
  requests.push(['BATCH', `/exportHl7PatientSummary?${q('&limit=200')}`, p.patientId]);
  for (const e of p.encounters ?? []) requests.push(['ADT_A01', `/exportHl7Encounter?${q(`&encounterId=${e.encounterId}`)}`, e.encounterId]);
  for (const n of p.notes ?? []) requests.push(['MDM_T02', `/exportHl7Note?${q(`&noteId=${n.noteId}`)}`, n.noteId]);
  for (const a of p.assessments ?? []) requests.push(['ORU_R01', `/exportHl7Assessment?${q(`&assessmentId=${a.assessmentId}`)}`, a.assessmentId]);
}

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

describe('HL7 exports of every demo record', () => {
  it('covers all five exports', () => {
    const paths = new Set(requests.map(([, p]) => p.split('?')[0]));
    expect(paths.size).toBe(5);
  });

  it.each(requests)('%s %s (%s) is valid v2.5.1 and passes the receiver rules', async (structure, pathAndQuery) => {
    const res = await call(stack, 'GET', pathAndQuery, { headers: { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/hl7-v2; charset=utf-8');
    const report = validateExport(res.text);
    expect(report.issues).toEqual([]);
    expect(report.valid).toBe(true);
    if (structure === 'BATCH') {
      expect(res.text.startsWith('FHS|')).toBe(true);
      expect(report.structures[0]).toBe('ADT_A01');
      expect(res.headers.get('x-summary-truncated')).toBe('false');
    } else {
      expect(report.structures).toEqual([structure]);
      const parsed = parseWithMedplum(res.text);
      expect(parsed.segmentNames[0]).toBe('MSH');
    }
  });

  it('answers 400 naming the range for a bad summary limit', async () => {
    for (const limit of ['0', '-1', '1.5', '201', 'ten', '']) {
      const res = await call(stack, 'GET', `/exportHl7PatientSummary?patientId=demo-patient-1&limit=${limit}`, { headers: { 'x-api-key': 'demo-export-key' } });
      expect(res.status).toBe(400);
      expect(res.json<{ detail: string }>().detail).toContain('1 to 200');
    }
  });

  it('limits the summary to the newest `limit` records', async () => {
    const one = await call(stack, 'GET', '/exportHl7PatientSummary?patientId=demo-patient-1&limit=1', { headers: { 'x-api-key': 'demo-export-key' } });
    const all = await call(stack, 'GET', '/exportHl7PatientSummary?patientId=demo-patient-1&limit=200', { headers: { 'x-api-key': 'demo-export-key' } });
    const messages = (text: string) => text.split('\r').filter((s) => s.startsWith('MSH|')).length;
    expect(messages(one.text)).toBe(2);
    expect(one.headers.get('x-summary-records')).toBe('1/1');
    expect(messages(all.text)).toBeGreaterThanOrEqual(9);
  });

  it('refuses a lab codeSystem without its code (400 naming the field)', async () => {
    const body = {
      data: {
        senderID: 'demo-lab',
        patientID: 'demo-patient-5',
        accessionNumber: 'SUMMARY-ACC-2',
        status: 'final',
        ResultedDateUTC: '2026-01-02T03:04:05Z',
        results: [{ testName: 'Glucose', result: '98', codeSystem: 'LN' }],
      },
    };
    const posted = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(posted.status).toBe(400);
    expect(posted.text).toContain('codeSystem');
  });

  it.each([
    ['/exportHl7Encounter?patientId=demo-patient-1&encounterId=demo-encounter-2'],
    ['/exportHl7Assessment?patientId=demo-patient-1&assessmentId=demo-assessment-2'],
    ['/exportHl7PatientAdt?patientId=no-such-patient'],
    ['/exportHl7PatientSummary?patientId=no-such-patient'],
  ])('%s -> 404 without revealing existence', async (pathAndQuery) => {
    const res = await call(stack, 'GET', pathAndQuery, { headers: { 'x-api-key': 'demo-export-key' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  it("includes the patient's lab results in the summary, newest first, still valid", async () => {
    const body = {
      data: {
        senderID: 'demo-lab',
        patientID: 'demo-patient-5',
        accessionNumber: 'SUMMARY-ACC-1',
        status: 'final',
        ResultedDateUTC: '2026-01-02T03:04:05Z',
        results: [
          { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99', code: '2345-7', codeSystem: 'LN' },
          { testName: 'Potassium', result: '<2.5', units: 'mmol/L' },
          { testName: 'Comment', result: 'Hemolysed | repeat ^ soon', units: '' },
        ],
      },
    };
    const posted = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(posted.status).toBe(200);
    const res = await call(stack, 'GET', '/exportHl7PatientSummary?patientId=demo-patient-5', { headers: { 'x-api-key': 'demo-export-key' } });
    expect(res.status).toBe(200);
    expect(validateExport(res.text).issues).toEqual([]);
    const segments = res.text.split('\r');
    const obr = segments.find((s) => s.startsWith('OBR|'))!;
    // OBR-3: the lab's accession number in the lab's namespace (its sender id when it sent none), never the chart's
    expect(obr.split('|')[3]).toBe('SUMMARY-ACC-1^demo-lab');
    expect(obr.split('|')[7]).toBe('20260102030405+0000');
    expect(obr.split('|')[25]).toBe('F');
    // the comment row travels as an NTE of the OBR, not as an observation
    // coded OBX-3 from results[].code, a local code otherwise; SN for the comparator value
    expect(segments.filter((s) => s.startsWith('OBX|')).map((s) => s.split('|').slice(2, 6).join('|'))).toEqual([
      'NM|2345-7^Glucose^LN||98',
      'SN|POTASSIUM^Potassium^L||<^2.5',
    ]);
    expect(segments.filter((s) => s.startsWith('NTE|'))).toEqual(['NTE|1|L|Comment: Hemolysed \\F\\ repeat \\S\\ soon']);
  });
});
