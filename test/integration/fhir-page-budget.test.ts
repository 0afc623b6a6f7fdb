/**
 * FHIR pages stay within their byte budget (FHIR_PAGE_MAX_BYTES, 5,000,000 bytes, below Lambda's 6 MB
 * answer limit): a patient with three lab results of about 2 MB each (40 tests with 50,000-character
 * values) would make one $everything, DiagnosticReport or Observation page of about 6 MB. Each page
 * now ends before the entry that would pass the budget and its `next` link continues there: every
 * page is at most 5,000,000 bytes and following the links gives every record exactly once.
 */
import type { Bundle, DiagnosticReport, Observation, Resource } from '@medplum/fhirtypes';
import { dynamoDbClient } from '../../lib/aws/clients';
import { ChartStore } from '../../lib/chart/chart-store';
import { FHIR_PAGE_MAX_BYTES } from '../../lib/exports/fhir-page-budget';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

const PATIENT = 'demo-patient-5';
const FHIR = { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' };
const RESULTS = 3;
const TESTS = 40;
const VALUE_CHARS = 50_000;
/** long notes (each within DynamoDB's 400 KB item; base64 in FHIR makes them a third larger) */
const NOTES = 14;
const NOTE_CHARS = 300_000;

let stack: LocalStack;
const resultIds: string[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  for (let r = 0; r < RESULTS; r++) {
    const results = Array.from({ length: TESTS }, (_, t) => ({
      testName: `Narrative ${r + 1}.${t + 1}`,
      result: `${r + 1}.${t + 1} `.padEnd(VALUE_CHARS, 'x'),
    }));
    const res = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        data: {
          senderID: 'demo-lab',
          patientID: PATIENT,
          accessionNumber: `BUDGET-${r + 1}`,
          status: 'final',
          ResultedDateUTC: `2024-0${r + 1}-10T08:00:00Z`,
          results,
        },
      }),
    });
    expect(`${res.status} ${res.status === 200 ? '' : res.text.slice(0, 400)}`).toBe('200 ');
    resultIds.push(res.json<{ resultId: string }>().resultId);
  }
  const chart = new ChartStore(dynamoDbClient(), stack.tables.chart);
  for (let n = 0; n < NOTES; n++) {
    await chart.putNote({
      patientId: PATIENT,
      noteId: `budget-note-${String(n + 1).padStart(2, '0')}`,
      author: { id: 'demo-clinician-1', name: { family: 'Practitioner', given: 'Pat' } },
      createdAt: `2023-01-${String(n + 1).padStart(2, '0')}T09:00:00Z`,
      text: `Note ${n + 1}. `.padEnd(NOTE_CHARS, 'n'),
    });
  }
});

afterAll(async () => {
  await stack?.close();
});

/** Every page from `first` on, following `next`: the bytes of each answer and the resources of all. */
async function pages(first: string): Promise<{ sizes: number[]; resources: Resource[] }> {
  const sizes: number[] = [];
  const resources: Resource[] = [];
  let next: string | undefined = first;
  while (next) {
    const res = await call(stack, 'GET', next, { headers: FHIR });
    expect(`${res.status} ${res.status === 200 ? '' : res.text.slice(0, 300)}`).toBe('200 ');
    sizes.push(Buffer.byteLength(res.text, 'utf8'));
    const bundle = res.json<Bundle>();
    resources.push(...(bundle.entry ?? []).map((e) => e.resource!));
    const link = bundle.link?.find((l) => l.relation === 'next')?.url;
    next = link ? link.slice(stack.urls.api.length) : undefined;
    if (sizes.length > 20) throw new Error('paging does not end');
  }
  return { sizes, resources };
}

const keys = (resources: Resource[]) => resources.map((r) => `${r.resourceType}/${r.id}`);

describe('FHIR pages stay within 5,000,000 bytes, and paging gives every record once', () => {
  it('the results together are larger than one page may be', () => {
    expect(FHIR_PAGE_MAX_BYTES).toBe(5_000_000);
    expect(RESULTS * TESTS * VALUE_CHARS).toBeGreaterThan(FHIR_PAGE_MAX_BYTES);
  });

  it('DiagnosticReport?patient=&_count=200: several pages, each within the budget, all three results once', async () => {
    const { sizes, resources } = await pages(`/fhir/DiagnosticReport?patient=${PATIENT}&_count=200`);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(FHIR_PAGE_MAX_BYTES);
    const reports = resources as DiagnosticReport[];
    expect(reports.map((r) => r.identifier?.[0]?.value)).toEqual(['BUDGET-3', 'BUDGET-2', 'BUDGET-1']);
    expect(new Set(keys(reports)).size).toBe(RESULTS);
  });

  it('Patient/$everything?_count=200: the Patient once, every chart record and result once, each page within the budget', async () => {
    const { sizes, resources } = await pages(`/fhir/Patient/${PATIENT}/$everything?_count=200`);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(FHIR_PAGE_MAX_BYTES);
    // the same records as one page of 200 would hold without the budget: the patient, its chart records, the results
    const chart = await pages(`/fhir/Encounter?patient=${PATIENT}&_count=200`);
    const notes = await pages(`/fhir/DocumentReference?patient=${PATIENT}&_count=200`);
    const reportIds = keys(resources.filter((r) => r.resourceType === 'DiagnosticReport'));
    expect(reportIds).toHaveLength(RESULTS);
    expect(keys(resources.filter((r) => r.resourceType === 'Patient'))).toEqual([`Patient/${PATIENT}`]);
    expect(
      keys(resources)
        .filter((k) => k.startsWith('Encounter/') || k.startsWith('DocumentReference/'))
        .sort(),
    ).toEqual(keys([...chart.resources, ...notes.resources]).sort());
    expect(new Set(keys(resources)).size).toBe(resources.length);
  });

  it('DocumentReference?patient=&_count=200 with long notes: several pages, each within the budget, every note once', async () => {
    const { sizes, resources } = await pages(`/fhir/DocumentReference?patient=${PATIENT}&_count=200`);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(FHIR_PAGE_MAX_BYTES);
    const ids = keys(resources);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((k) => k.includes('budget-note-'))).toHaveLength(NOTES);
  });

  it('Observation?patient=&category=laboratory&_count=200: every lab Observation once, each page within the budget', async () => {
    const { sizes, resources } = await pages(`/fhir/Observation?patient=${PATIENT}&category=laboratory&_count=200`);
    expect(sizes.length).toBeGreaterThan(1);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(FHIR_PAGE_MAX_BYTES);
    const names = (resources as Observation[]).map((o) => o.code.text);
    expect(names).toHaveLength(RESULTS * TESTS);
    expect(new Set(names).size).toBe(RESULTS * TESTS);
  });
});
