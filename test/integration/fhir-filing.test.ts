/**
 * FHIR lab intake files only with a relationship (docs/write-authority.md "Filing needs a
 * relationship"), over HTTP with a partner made by the operator CLIs: a report whose subject names a
 * chart patient (by `Patient/<id>` or by the chart's MRN on a contained Patient) that the partner is
 * not related to is answered exactly as a filed one, the chart's readers see nothing of it, and staff
 * see it held for review; once related, the same partner's report files.
 */
import type { LocalStack } from '../../lib/local/stack';
import { CHART_PATIENT, smallReport, type Json } from '../fhir-intake/fixtures';
import { call, startTestStack, type HttpResult } from '../support/local-stack';
import { createPartnerKey, operator, relatePartner } from '../support/operator-cli';

jest.setTimeout(120_000);

let stack: LocalStack;
let strangerKey = '';
let seq = 0;
const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++seq}`;

beforeAll(async () => {
  stack = await startTestStack();
  const created = await operator('partners', ['create', '--partner-id', 'fhir-stranger', '--tier', 'standard', '--sender-id', 'STRANGER-LIS']);
  if (created.code !== 0) throw new Error(`partners create failed (${created.code}): ${created.err}`);
  strangerKey = (await createPartnerKey('fhir-stranger', ['interop:ingest:fhir'])).secret;
});

afterAll(async () => {
  await stack?.close();
});

const post = (key: string, body: Json): Promise<HttpResult> =>
  call(stack, 'POST', '/fhir/DiagnosticReport', { headers: { 'x-api-key': key, 'content-type': 'application/fhir+json' }, body: JSON.stringify(body) });

/** a report naming demo-patient-1 by id (no contained Patient) */
function byChartId(accession: string): Json {
  const report = smallReport(accession);
  report.contained = (report.contained as Json[]).filter((r) => r.resourceType !== 'Patient');
  report.subject = { reference: 'Patient/demo-patient-1' };
  return report;
}

async function chartReports(): Promise<string> {
  const res = await call(stack, 'GET', '/fhir/DiagnosticReport?patient=demo-patient-1&_count=200', { headers: { 'x-api-key': 'demo-fhir-key' } });
  expect(res.status).toBe(200);
  return res.text;
}

async function heldOf(partnerId: string): Promise<Array<{ reason: string; kind: string }>> {
  const res = await call(stack, 'GET', '/interopInbox/held?state=held&limit=100', { headers: { 'x-api-key': 'demo-inbox-key' } });
  expect(res.status).toBe(200);
  return res.json<{ items: Array<{ reason: string; kind: string; partnerId: string }> }>().items.filter((i) => i.partnerId === partnerId);
}

/** the answer without what differs per request (ids, times) */
const shape = (res: HttpResult) => ({
  status: res.status,
  location: (res.headers.get('location') ?? '').replace(/lr\.5F[0-9a-f]{32}/, 'ID').replace(/\/_history\/.*$/, ''),
  issue: res.json<Json>().issue?.map((i: Json) => [i.severity, i.code]),
});

describe('POST /fhir/DiagnosticReport from a partner with no relationship to the patient', () => {
  it('Patient/<chart id> and the chart MRN are answered as filed, the chart shows neither, staff see both held', async () => {
    const strangerById = await post(strangerKey, byChartId(unique('STR-ID')));
    const labById = await post('demo-fhir-intake-key', byChartId(unique('LAB-ID')));
    expect(shape(strangerById)).toEqual(shape(labById));
    expect(strangerById.status).toBe(201);
    const byMrnAccession = unique('STR-MRN');
    const strangerByMrn = await post(strangerKey, smallReport(byMrnAccession, CHART_PATIENT));
    expect(strangerByMrn.status).toBe(201);

    const reports = await chartReports();
    expect(reports).not.toContain('STR-ID');
    expect(reports).not.toContain(byMrnAccession);
    expect(reports).toContain('LAB-ID');
    expect((await heldOf('fhir-stranger')).map((h) => [h.kind, h.reason])).toEqual([
      ['lab-result', 'no-relationship'],
      ['lab-result', 'no-relationship'],
    ]);
  });

  it('once related with `partners relate`, the same partner files into the chart', async () => {
    await relatePartner('fhir-stranger', 'demo-patient-1');
    const accession = unique('STR-RELATED');
    expect((await post(strangerKey, byChartId(accession))).status).toBe(201);
    expect(await chartReports()).toContain(accession);
  });

  it('an absolute reference to another server is a 400 OperationOutcome naming the subject, nothing stored', async () => {
    const report = byChartId(unique('STR-ABS'));
    report.subject = { reference: 'https://other.example/fhir/Patient/demo-patient-1' };
    const res = await post(strangerKey, report);
    expect(res.status).toBe(400);
    expect(res.json<Json>().issue[0]).toMatchObject({ severity: 'error', expression: ['DiagnosticReport.subject.reference'] });
    expect(await chartReports()).not.toContain('STR-ABS');
  });
});
