/**
 * Issue 27 K2, beside the round trip (lab-round-trip.test.ts): a summary larger than the inline budget is
 * stored in encrypted summary parts and read back whole by every summary reader (HL7 summary, FHIR); a
 * version whose parts are not all there is an internal failure (500, no stack, no PHI), never a shorter
 * summary.
 */
import { DeleteItemCommand, ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from '../../lib/aws/clients';
import { parseHl7Message, valueAt } from '../../lib/hl7/parser';
import type { LocalStack } from '../../lib/local/stack';
import { SUMMARY_MAX_BYTES } from '../../lib/results/result-store';
import { call, startTestStack } from '../support/local-stack';

const PATIENT = 'demo-patient-2';
/** the most a result may hold (intake refuses more: docs/lab-results.md) */
const TESTS = 200;
/** a name that must never reach an error body */
const MARKER = 'Zebrafinch-QX7';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

const results = Array.from({ length: TESTS }, (_, i) => ({
  testName: `${MARKER} analyte ${i + 1}`,
  result: `${i + 1}.25`,
  units: 'mg/dL',
  unitsCode: 'mg/dL',
  referenceRange: '1-10',
  code: `PANEL-${i + 1}`,
  codeSystem: '99LAB',
  valueType: 'NM',
  numericValue: `${i + 1}.25`,
  abnormalFlags: ['H'],
  comments: [`comment ${i + 1} `.repeat(40)],
}));

async function summaryParts(): Promise<Record<string, AttributeValue>[]> {
  const out = await dynamoDbClient().send(new ScanCommand({ TableName: stack.tables.results }));
  return (out.Items ?? []).filter((item) => item.sk?.S?.startsWith('SUMMARYPART#'));
}

describe('issue 27 K2: summary parts', () => {
  let resultId = '';

  it('stores a 200-test result (over 32 KiB of summary) with its summary in parts, answered 200', async () => {
    expect(JSON.stringify(results).length).toBeGreaterThan(2 * SUMMARY_MAX_BYTES);
    const res = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        data: { senderID: 'demo-lab', patientID: PATIENT, accessionNumber: 'PARTS-200', status: 'final', ResultedDateUTC: '2024-03-01T09:30:00Z', results },
      }),
    });
    expect(`${res.status} ${res.status === 200 ? '' : res.text.slice(0, 600)}`).toBe('200 ');
    resultId = res.json<{ resultId: string }>().resultId;
    const parts = await summaryParts();
    expect(parts.length).toBeGreaterThanOrEqual(1);
    // parts hold ciphertext only: no test name in any attribute
    expect(JSON.stringify(parts)).not.toContain(MARKER);
  });

  it('the HL7 summary and FHIR carry all 200 tests, values and comments whole', async () => {
    const summary = await call(stack, 'GET', `/exportHl7PatientSummary?patientId=${PATIENT}&limit=200`, {
      headers: { 'x-api-key': 'demo-export-oru-key', accept: 'application/hl7-v2' },
    });
    expect(summary.status).toBe(200);
    const segments = parseHl7Message(summary.text).segments;
    const obr = segments.findIndex((s) => s.name === 'OBR' && valueAt(s, 3, 1) === 'PARTS-200');
    const obx = segments.slice(obr + 1).filter((s, i, all) => s.name === 'OBX' && !all.slice(0, i).some((p) => p.name === 'OBR'));
    expect(obx.map((s) => valueAt(s, 5))).toEqual(results.map((r) => r.numericValue));
    const fhir = await call(stack, 'GET', `/fhir/DiagnosticReport?patient=${PATIENT}`, {
      headers: { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' },
    });
    expect(fhir.status).toBe(200);
    const report = fhir
      .json<{ entry: Array<{ resource: { identifier: Array<{ value: string }>; result: unknown[]; contained: Array<{ note?: Array<{ text: string }> }> } }> }>()
      .entry.map((e) => e.resource)
      .find((r) => r.identifier.some((i) => i.value === 'PARTS-200'));
    expect(report?.result).toHaveLength(TESTS);
    expect(report?.contained[TESTS - 1]?.note?.[0]?.text).toBe(results[TESTS - 1]!.comments[0]);
  });

  it('a missing part is a 500 (problem+json without stack or PHI), never a shorter summary', async () => {
    const [first] = await summaryParts();
    await dynamoDbClient().send(new DeleteItemCommand({ TableName: stack.tables.results, Key: { pk: first!.pk!, sk: first!.sk! } }));
    const res = await call(stack, 'GET', `/exportHl7PatientSummary?patientId=${PATIENT}&limit=200`, {
      headers: { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' },
    });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.text).not.toContain(MARKER);
    expect(res.text).not.toContain('at ');
    expect(resultId).toMatch(/^lr_/);
  });
});
