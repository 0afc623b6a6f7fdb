/**
 * Every HL7 export, for every demo id, served through the local stack and checked by the
 * independent v2.5.1 validator (test/hl7/structure-validator.ts, built from hl7-dictionary) and
 * parsed back by @medplum/core: structure, required fields, table values, escapes.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LocalStack } from '../../lib/local/stack';
import { validateHl7Message } from '../hl7/structure-validator';
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
  requests.push(['ORU_R01', `/exportHl7PatientSummary?${q('')}`, p.patientId]);
  requests.push(['ORU_R01', `/exportHl7PatientSummary?${q('&limit=1')}`, p.patientId]);
  for (const e of p.encounters ?? []) requests.push(['ORU_R01', `/exportHl7Encounter?${q(`&encounterId=${e.encounterId}`)}`, e.encounterId]);
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

  it.each(requests)('%s %s (%s) is a valid v2.5.1 message', async (structure, pathAndQuery) => {
    const res = await call(stack, 'GET', pathAndQuery, { headers: { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/hl7-v2; charset=utf-8');
    const report = validateHl7Message(res.text);
    expect(report.issues).toEqual([]);
    expect(report.valid).toBe(true);
    expect(report.structure).toBe(structure);
    const parsed = parseWithMedplum(res.text);
    expect(parsed.segmentNames ?? report.segmentNames).toEqual(report.segmentNames);
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
    const obrs = (text: string) => text.split('\r').filter((s) => s.startsWith('OBR|')).length;
    expect(obrs(one.text)).toBe(1);
    expect(obrs(all.text)).toBeGreaterThanOrEqual(8);
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

  it('includes the patient\'s lab results in the summary, newest first, still valid', async () => {
    const body = {
      data: {
        senderID: 'demo-lab',
        patientID: 'demo-patient-5',
        accessionNumber: 'SUMMARY-ACC-1',
        status: 'final',
        ResultedDateUTC: '2026-01-02T03:04:05Z',
        results: [
          { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' },
          { testName: 'Comment', result: 'Hemolysed | repeat ^ soon', units: '' },
        ],
      },
    };
    const posted = await call(stack, 'POST', '/receiveTestData', { headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(posted.status).toBe(200);
    const res = await call(stack, 'GET', '/exportHl7PatientSummary?patientId=demo-patient-5', { headers: { 'x-api-key': 'demo-export-key' } });
    expect(res.status).toBe(200);
    expect(validateHl7Message(res.text).issues).toEqual([]);
    const segments = res.text.split('\r');
    const obr = segments.find((s) => s.startsWith('OBR|'))!;
    expect(obr.split('|')[3]).toBe('SUMMARY-ACC-1');
    expect(segments.filter((s) => s.startsWith('OBX|')).map((s) => s.split('|')[5])).toEqual(['98', 'Hemolysed \\F\\ repeat \\S\\ soon']);
  });
});
