/**
 * Issue 27: the FHIR lab resources the service exports conform to the US Core DiagnosticReport (Lab)
 * and Laboratory Result Observation profiles, and the demo patients to US Core Patient, checked
 * offline by profile-checker.ts against the published StructureDefinitions. Read through the local
 * stack (gateway emulation, authorizer, dynalite, local KMS): every demo patient's Patient read, its
 * DiagnosticReport and lab Observation searches (every page) and every report and lab Observation read
 * by id, after lab results of every value type, flag, status and time precision were posted through
 * the three doors (POST /receiveTestData, POST /receiveHl7, POST /fhir/DiagnosticReport).
 * The public US Core examples' exports are checked in test/fhir-intake/public-examples, the round-trip
 * corpus in test/integration/lab-round-trip.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Resource } from '@medplum/fhirtypes';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack, type HttpResult } from '../support/local-stack';
import { labReport } from '../fhir-intake/fixtures';
import { PROFILES, profileViolations, usCoreLabViolations } from './profile-checker';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const demo = JSON.parse(readFileSync(path.resolve(__dirname, '../../lib/local/demo-chart.json'), 'utf8')) as { patients: Array<{ patientId: string }> };

let stack: LocalStack;
const get = async (p: string): Promise<HttpResult> => call(stack, 'GET', p, { headers: { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' } });

/** every resource of a search, following `next` */
async function search(first: string): Promise<Json[]> {
  const out: Json[] = [];
  for (let next: string | undefined = first; next;) {
    const res = await get(next);
    expect(res.status).toBe(200);
    const bundle = res.json<Json>();
    out.push(...((bundle.entry ?? []) as Json[]).map((e) => e.resource as Json));
    const link = ((bundle.link ?? []) as Json[]).find((l) => l.relation === 'next')?.url as string | undefined;
    next = link ? link.slice(link.indexOf('/fhir/')) : undefined;
  }
  return out;
}

const TIMES = ['2024-04-01', '2024-04-01T08:30-06:00', '2024-04-01T08:30:15Z', '2024-04', '2024'];

/** a POST /receiveTestData body with issue 27's optional fields: every value type, flags, statuses, comments */
function jsonBody(i: number): Json {
  return {
    data: {
      senderID: 'demo-lab',
      patientID: 'demo-patient-1',
      accessionNumber: `PROFILE-${Date.now().toString(36)}-${i}`,
      status: ['final', 'preliminary', 'corrected', 'cancelled', 'amended'][i % 5],
      ResultedDateUTC: `2024-04-0${i + 2}T10:00:00Z`,
      order: { collectedAt: TIMES[i % TIMES.length], comments: ['order comment'] },
      results: [
        {
          testName: 'Potassium',
          result: '6.90',
          units: 'mmol/L',
          unitsCode: 'mmol/L',
          referenceRange: '3.5-5.1',
          code: '2823-3',
          codeSystem: 'LN',
          valueType: 'NM',
          numericValue: '6.90',
          abnormalFlags: ['HH'],
          observationStatus: ['F', 'C', 'W', 'X', 'P'][i % 5],
          observedAt: TIMES[(i + 1) % TIMES.length],
          comments: ['called to the ward'],
        },
        {
          testName: 'Creatinine',
          result: '<0.5',
          units: 'mg/dL',
          unitsCode: 'mg/dL',
          code: '2160-0',
          codeSystem: 'LN',
          valueType: 'SN',
          structuredNumeric: [
            { comparator: '<', value1: '0.5' },
            { value1: '10', separator: '-', value2: '20' },
            { value1: '1', separator: ':', value2: '160' },
          ][i % 3],
        },
        {
          testName: 'HBsAg',
          result: 'Negative',
          code: '5196-1',
          codeSystem: 'LN',
          valueType: 'CWE',
          codedValue: { code: '260385009', display: 'Negative', system: 'SCT' },
          abnormalFlags: ['N'],
        },
        { testName: 'Interpretation', result: 'Line one\nLine two', code: 'INT', codeSystem: '99ACM', valueType: 'TX', textLines: ['Line one', 'Line two'] },
        { testName: 'Color', result: 'Yellow', code: '5778-6', codeSystem: 'LN', valueType: 'ST', observationStatus: 'C' },
      ],
    },
  };
}

const ORU = (i: number) =>
  [
    `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20241107101500-0600||ORU^R01^ORU_R01|PROFILE-${Date.now()}-${i}|P|2.5.1`,
    'PID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex||19800412|F',
    `OBR|1|PLC-${i}|FIL-${Date.now()}-${i}|24323-8^Metabolic panel^LN|||${['20241107', '202411070910', '20241107091015-0600'][i % 3]}|||||||||||||||20241107101500-0600|||F`,
    'OBX|1|NM|2823-3^Potassium^LN||6.9|mmol/L^mmol/L^UCUM|3.5-5.1|HH|||F|||20241107091000-0600',
    'OBX|2|SN|2160-0^Creatinine^LN||<^0.5|mg/dL^mg/dL^UCUM|0.6-1.2|L|||C',
    'OBX|3|CWE|5196-1^HBsAg^LN||260385009^Negative^SCT||||||W',
    'OBX|4|ST|5778-6^Color^LN||Yellow||||||X',
    'NTE|1||comment on the colour',
  ].join('\r') + '\r';

beforeAll(async () => {
  stack = await startTestStack();
  for (let i = 0; i < 5; i += 1) {
    const res = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify(jsonBody(i)),
    });
    expect(`${res.status} ${res.status === 200 ? '' : res.text}`).toBe('200 ');
  }
  for (let i = 0; i < 3; i += 1) {
    const res = await call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': 'demo-hl7-key', 'content-type': 'application/hl7-v2' }, body: ORU(i) });
    expect(res.text).toMatch(/MSA\|(AA|CA)\|/);
  }
  const fhir = await call(stack, 'POST', '/fhir/DiagnosticReport', {
    headers: { 'x-api-key': 'demo-fhir-intake-key', 'content-type': 'application/fhir+json' },
    body: JSON.stringify(labReport(`PROFILE-FHIR-${Date.now().toString(36)}`)),
  });
  expect(fhir.status).toBe(201);
});
afterAll(async () => {
  await stack?.close();
});

describe('US Core conformance of what the FHIR reads serve', () => {
  it('every demo patient: US Core Patient, 0 violations', async () => {
    const violations: string[] = [];
    for (const { patientId } of demo.patients) {
      const res = await get(`/fhir/Patient/${patientId}`);
      expect(res.status).toBe(200);
      violations.push(...profileViolations(res.json<Resource>(), PROFILES.patient).map((v) => `${patientId}: ${v}`));
    }
    expect(demo.patients.length).toBeGreaterThan(1);
    expect(violations).toEqual([]);
  });

  it('every DiagnosticReport and lab Observation, searched and read by id: US Core Lab profiles, 0 violations', async () => {
    const resources: Json[] = [];
    for (const { patientId } of demo.patients) {
      const reports = await search(`/fhir/DiagnosticReport?patient=${patientId}&category=LAB&_count=50`);
      const observations = await search(`/fhir/Observation?patient=${patientId}&category=laboratory&_count=50`);
      resources.push(...reports, ...observations);
      for (const r of [...reports, ...observations]) {
        const read = await get(`/fhir/${String(r.resourceType)}/${String(r.id)}`);
        expect(read.status).toBe(200);
        resources.push(read.json<Json>());
      }
    }
    const reports = resources.filter((r) => r.resourceType === 'DiagnosticReport');
    const observations = resources.filter((r) => r.resourceType === 'Observation');
    // 9 results posted above (5 JSON, 3 HL7, 1 FHIR), each searched and read
    expect(reports.length).toBe(18);
    expect(observations.length).toBe(2 * (5 * 5 + 3 * 4 + 8));
    expect(resources.flatMap((r) => usCoreLabViolations(r).map((v) => `${String(r.id)}: ${v}`))).toEqual([]);
    // a test observed at `2024` (coarser than us-core-1's day) keeps its precision as the Period of that year
    expect(observations.some((o) => o.effectivePeriod?.start === '2024' && o.effectivePeriod?.end === '2024')).toBe(true);
  });
});
