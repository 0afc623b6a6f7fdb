/**
 * Reliability suite 4: the authentication and authorisation matrix, over real HTTP.
 *
 * Every endpoint x { no key, unknown key, revoked key, key without the endpoint's scope, key of a
 * blocked partner, valid key }: 401 / 401 / 401 / 403 / 403 / the endpoint's success status. Every
 * refusal is problem+json with the rate-limit headers, and writes nothing (no table but the
 * rate-limit counters changes, no audit record, no S3 object, no queue message).
 *
 * Existence is never revealed: an export asking for another patient's note / encounter /
 * assessment (demo-note-2 under demo-patient-1, and the reverse) answers 404 with a body identical
 * (requestId aside) to an unknown id and to an unknown patient; the same for the two patient-only
 * exports (unknown patients), and for the inbox (a packet routed at intake, never in the inbox,
 * looks like an unknown id, to reading and to routing).
 */
import type { LocalStack } from '../../lib/local/stack';
import { call, type HttpResult } from '../support/local-stack';
import { diffSnapshots, formBody, inboxPacket, labBody, problemIssues, snapshot, startReliabilityStack, Tally, type Res } from './support';
import { questionnaireResponse, smallReport } from '../fhir-intake/fixtures';

let stack: LocalStack;
const tally = new Tally('auth-matrix');

beforeAll(async () => {
  stack = await startReliabilityStack();
});

afterAll(async () => {
  await stack?.close();
});

function asRes(res: HttpResult): Res {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k] = v));
  return { status: res.status, headers, body: res.text, json: res.json };
}

interface EndpointCase {
  name: string;
  method: 'GET' | 'POST';
  /** path + query, and body, of a valid request (fresh resources per call) */
  request(): Promise<{ path: string; body?: unknown }>;
  validKey: string;
  withoutScope: string;
  success: number[];
  /** error body format: problem+json, or OperationOutcome on the FHIR routes */
  format?: 'fhir';
}

const EXPORT = { validKey: 'demo-export-key', withoutScope: 'demo-results-key', success: [200] };
const INBOX = { validKey: 'demo-inbox-key', withoutScope: 'demo-all-key' };
const FHIR = { validKey: 'demo-fhir-key', withoutScope: 'demo-export-key', success: [200], format: 'fhir' as const };
const FHIR_INTAKE = { validKey: 'demo-fhir-intake-key', withoutScope: 'demo-fhir-key', success: [201], format: 'fhir' as const };

const endpoints: EndpointCase[] = [
  { name: 'exportHl7PatientAdt', method: 'GET', request: async () => ({ path: '/exportHl7PatientAdt?patientId=demo-patient-1' }), ...EXPORT },
  { name: 'exportHl7PatientSummary', method: 'GET', request: async () => ({ path: '/exportHl7PatientSummary?patientId=demo-patient-1&limit=5' }), ...EXPORT },
  {
    name: 'exportHl7Encounter',
    method: 'GET',
    request: async () => ({ path: '/exportHl7Encounter?patientId=demo-patient-1&encounterId=demo-encounter-1' }),
    ...EXPORT,
  },
  { name: 'exportHl7Note', method: 'GET', request: async () => ({ path: '/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1' }), ...EXPORT },
  {
    name: 'exportHl7Assessment',
    method: 'GET',
    request: async () => ({ path: '/exportHl7Assessment?patientId=demo-patient-1&assessmentId=demo-assessment-1' }),
    ...EXPORT,
  },
  {
    name: 'receiveTestData',
    method: 'POST',
    request: async () => ({ path: '/receiveTestData', body: labBody() }),
    validKey: 'demo-results-key',
    withoutScope: 'demo-export-key',
    success: [200],
  },
  {
    name: 'receiveFormIntakeScope',
    method: 'POST',
    request: async () => ({ path: '/receiveFormIntakeScope', body: formBody() }),
    validKey: 'demo-forms-key',
    withoutScope: 'demo-results-key',
    success: [202],
  },
  { name: 'listInteropInbox', method: 'GET', request: async () => ({ path: '/interopInbox?state=pending_match&limit=5' }), ...INBOX, success: [200] },
  { name: 'getInboxPacket', method: 'GET', request: async () => ({ path: `/interopInbox/${await inboxPacket()}` }), ...INBOX, success: [200] },
  {
    name: 'routeInboxPacket',
    method: 'POST',
    request: async () => ({ path: `/interopInbox/${await inboxPacket()}/route`, body: { patientId: 'demo-patient-2' } }),
    ...INBOX,
    success: [200],
  },
  { name: 'fhirPatientRead', method: 'GET', request: async () => ({ path: '/fhir/Patient/demo-patient-1' }), ...FHIR },
  { name: 'fhirPatientEverything', method: 'GET', request: async () => ({ path: '/fhir/Patient/demo-patient-1/$everything?_count=5' }), ...FHIR },
  { name: 'fhirEncounterRead', method: 'GET', request: async () => ({ path: '/fhir/Encounter/demo-patient-1..demo-encounter-1' }), ...FHIR },
  { name: 'fhirEncounterSearch', method: 'GET', request: async () => ({ path: '/fhir/Encounter?patient=demo-patient-1' }), ...FHIR },
  { name: 'fhirDocumentReferenceRead', method: 'GET', request: async () => ({ path: '/fhir/DocumentReference/demo-patient-1..demo-note-1' }), ...FHIR },
  { name: 'fhirDocumentReferenceSearch', method: 'GET', request: async () => ({ path: '/fhir/DocumentReference?patient=demo-patient-1' }), ...FHIR },
  { name: 'fhirObservationRead', method: 'GET', request: async () => ({ path: '/fhir/Observation/demo-patient-1..demo-assessment-1' }), ...FHIR },
  { name: 'fhirDiagnosticReportRead', method: 'GET', request: async () => ({ path: `/fhir/DiagnosticReport/${await labReportId()}` }), ...FHIR },
  { name: 'fhirDiagnosticReportSearch', method: 'GET', request: async () => ({ path: '/fhir/DiagnosticReport?patient=demo-patient-1' }), ...FHIR },
  {
    name: 'fhirPatientSearch',
    method: 'GET',
    request: async () => ({ path: `/fhir/Patient?identifier=${encodeURIComponent('urn:interop:mrn:DEMO-HOSP|DEMO-000001')}` }),
    ...FHIR,
  },
  {
    name: 'fhirObservationSearch',
    method: 'GET',
    request: async () => ({ path: '/fhir/Observation?patient=demo-patient-1&category=laboratory&date=ge2024' }),
    ...FHIR,
  },
  { name: 'fhirObservationLabRead', method: 'GET', request: async () => ({ path: `/fhir/Observation/${await labReportId()}..1` }), ...FHIR },
  { name: 'fhirRouteNotFound', method: 'GET', request: async () => ({ path: '/fhir/Condition?patient=demo-patient-1' }), ...FHIR, success: [404] },
  // FHIR intake (issue 29): a fresh accession / submission id per call
  {
    name: 'receiveFhirDiagnosticReport',
    method: 'POST',
    request: async () => ({ path: '/fhir/DiagnosticReport', body: smallReport(freshId('AM')) }),
    ...FHIR_INTAKE,
  },
  {
    name: 'receiveFhirQuestionnaireResponse',
    method: 'POST',
    request: async () => ({ path: '/fhir/QuestionnaireResponse', body: questionnaireResponse(freshId('AMQ')) }),
    ...FHIR_INTAKE,
  },
  {
    name: 'receiveFhirBundle',
    method: 'POST',
    request: async () => ({
      path: '/fhir',
      body: { resourceType: 'Bundle', type: 'batch', entry: [{ resource: smallReport(freshId('AMB')), request: { method: 'POST', url: 'DiagnosticReport' } }] },
    }),
    ...FHIR_INTAKE,
    success: [200],
  },
];

let freshIds = 0;
function freshId(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${++freshIds}`;
}

/** A lab result of demo-patient-1 stored once, as its DiagnosticReport id. */
let labReport: string | undefined;
async function labReportId(): Promise<string> {
  if (labReport) return labReport;
  const res = await call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
    body: JSON.stringify(labBody()),
  });
  if (res.status !== 200) throw new Error(`lab result not stored: ${res.status}`);
  const search = await call(stack, 'GET', '/fhir/DiagnosticReport?patient=demo-patient-1&_count=1', { headers: { 'x-api-key': 'demo-fhir-key' } });
  labReport = search.json<{ entry: Array<{ resource: { id: string } }> }>().entry[0]!.resource.id;
  return labReport;
}

type Cell = 'no key' | 'unknown key' | 'revoked key' | 'key without the scope' | 'blocked partner' | 'valid key';
const CELLS: Array<{ cell: Cell; key: (e: EndpointCase) => string | undefined; expect: (e: EndpointCase) => number[] }> = [
  { cell: 'no key', key: () => undefined, expect: () => [401] },
  { cell: 'unknown key', key: () => 'rel-no-such-key-7f3a', expect: () => [401] },
  { cell: 'revoked key', key: () => 'demo-revoked-key', expect: () => [401] },
  { cell: 'key without the scope', key: (e) => e.withoutScope, expect: () => [403] },
  { cell: 'blocked partner', key: () => 'demo-blocked-key', expect: () => [403] },
  { cell: 'valid key', key: (e) => e.validKey, expect: (e) => e.success },
];

function rateLimitHeaderIssues(res: Res): string[] {
  return ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].filter((h) => !/^\d+$/.test(res.headers[h] ?? '')).map((h) => `${h} missing`);
}

describe('auth matrix: every endpoint x every kind of caller', () => {
  for (const e of endpoints) {
    it(`${e.method} ${e.name}: 401/401/401/403/403/${e.success.join('|')}`, async () => {
      const issues: string[] = [];
      for (const c of CELLS) {
        const { path, body } = await e.request();
        const key = c.key(e);
        const refused = c.cell !== 'valid key';
        const before = refused ? await snapshot(stack) : undefined;
        const res = asRes(
          await call(stack, e.method, path, {
            headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
            body: body !== undefined ? JSON.stringify(body) : undefined,
          }),
        );
        const cellIssues: string[] = [];
        if (!c.expect(e).includes(res.status)) cellIssues.push(`status ${res.status}, want ${c.expect(e).join('|')}: ${res.body.slice(0, 160)}`);
        cellIssues.push(...rateLimitHeaderIssues(res));
        if (refused) {
          cellIssues.push(...problemIssues(res, c.expect(e), e.format));
          cellIssues.push(...diffSnapshots(before!, await snapshot(stack), ['rateLimit']).map((d) => `refusal wrote: ${d}`));
          if (res.status === 401 && res.headers['www-authenticate'] !== undefined) cellIssues.push('unexpected WWW-Authenticate');
        }
        tally.record(cellIssues, () => `${e.name} / ${c.cell}`);
        issues.push(...cellIssues.map((i) => `${c.cell}: ${i}`));
      }
      expect(issues).toEqual([]);
    });
  }
});

describe('auth matrix: GET /fhir/metadata is public but counted', () => {
  it('every kind of caller gets the CapabilityStatement with the rate-limit headers; nothing but the counters is written', async () => {
    const issues: string[] = [];
    for (const c of CELLS) {
      const key = c.key({ validKey: 'demo-fhir-key', withoutScope: 'demo-export-key' } as EndpointCase);
      const before = await snapshot(stack);
      const res = asRes(await call(stack, 'GET', '/fhir/metadata', { headers: key ? { 'x-api-key': key } : {} }));
      const cellIssues: string[] = [];
      if (res.status !== 200) cellIssues.push(`status ${res.status}`);
      if (res.status === 200 && res.json<{ resourceType: string }>().resourceType !== 'CapabilityStatement') cellIssues.push('not a CapabilityStatement');
      cellIssues.push(...rateLimitHeaderIssues(res));
      cellIssues.push(...diffSnapshots(before, await snapshot(stack), ['rateLimit']).map((d) => `wrote: ${d}`));
      tally.record(cellIssues, () => `fhirMetadata / ${c.cell}`);
      issues.push(...cellIssues.map((i) => `${c.cell}: ${i}`));
    }
    expect(issues).toEqual([]);
  });
});

describe('auth matrix: existence of another patient’s records is not revealed', () => {
  async function problem(path: string, key = 'demo-export-key', method: 'GET' | 'POST' = 'GET', body?: unknown): Promise<{ res: Res; comparable: string }> {
    const res = asRes(
      await call(stack, method, path, {
        headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      }),
    );
    const { requestId: _r, ...rest } = res.json();
    return { res, comparable: JSON.stringify({ status: res.status, contentType: res.headers['content-type'], body: rest }) };
  }

  const idExports = [
    { name: 'exportHl7Note', param: 'noteId', mine: 'demo-note-1', theirs: 'demo-note-2', theirsOwner: 'demo-patient-2', mineOwner: 'demo-patient-1' },
    {
      name: 'exportHl7Encounter',
      param: 'encounterId',
      mine: 'demo-encounter-1',
      theirs: 'demo-encounter-2',
      theirsOwner: 'demo-patient-2',
      mineOwner: 'demo-patient-1',
    },
    {
      name: 'exportHl7Assessment',
      param: 'assessmentId',
      mine: 'demo-assessment-1',
      theirs: 'demo-assessment-2',
      theirsOwner: 'demo-patient-2',
      mineOwner: 'demo-patient-1',
    },
  ];

  for (const x of idExports) {
    it(`${x.name}: another patient's ${x.param} (both directions) answers exactly like an unknown id`, async () => {
      const url = (patientId: string, id: string) => `/${x.name}?patientId=${patientId}&${x.param}=${id}`;
      // sanity: the ids exist under their own patients
      expect((await call(stack, 'GET', url(x.mineOwner, x.mine), { headers: { 'x-api-key': 'demo-export-key' } })).status).toBe(200);
      expect((await call(stack, 'GET', url(x.theirsOwner, x.theirs), { headers: { 'x-api-key': 'demo-export-key' } })).status).toBe(200);
      const variants = [
        await problem(url(x.mineOwner, x.theirs)), // patient 1 asking for patient 2's record
        await problem(url(x.theirsOwner, x.mine)), // and the reverse
        await problem(url(x.mineOwner, 'no-such-record')), // an unknown id
        await problem(url('no-such-patient', x.mine)), // an unknown patient
      ];
      const issues: string[] = [];
      for (const v of variants) issues.push(...problemIssues(v.res, 404));
      if (new Set(variants.map((v) => v.comparable)).size !== 1) issues.push(`answers differ: ${variants.map((v) => v.comparable).join(' | ')}`);
      tally.record(issues, () => `${x.name} cross-patient`);
      expect(issues).toEqual([]);
    });
  }

  it('exportHl7PatientAdt and exportHl7PatientSummary: every unknown patient answers the same 404', async () => {
    const issues: string[] = [];
    for (const name of ['exportHl7PatientAdt', 'exportHl7PatientSummary']) {
      const variants = [
        await problem(`/${name}?patientId=no-such-patient`),
        await problem(`/${name}?patientId=demo-patient-999`),
        await problem(`/${name}?patientId=DEMO-000001`),
      ];
      for (const v of variants) issues.push(...problemIssues(v.res, 404));
      if (new Set(variants.map((v) => v.comparable)).size !== 1) issues.push(`${name} answers differ`);
    }
    tally.record(issues, () => 'patient-only exports unknown patient');
    expect(issues).toEqual([]);
  });

  it('the inbox: a packet routed at intake (never in the inbox) looks like an unknown id, to reading and to routing', async () => {
    const routed = await call(stack, 'POST', '/receiveFormIntakeScope', {
      headers: { 'x-api-key': 'demo-forms-key', 'content-type': 'application/json' },
      body: JSON.stringify(formBody({ patientId: 'demo-patient-1' }, { firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12' })),
    });
    expect(routed.status).toBe(202);
    const routedId = routed.json<{ packetId: string }>().packetId;
    const unknownId = 'fp_0123456789abcdef0123456789abcdef';
    const issues: string[] = [];
    const reads = [
      await problem(`/interopInbox/${routedId}`, 'demo-inbox-key'),
      await problem(`/interopInbox/${unknownId}`, 'demo-inbox-key'),
      await problem('/interopInbox/not-a-packet-id', 'demo-inbox-key'),
    ];
    for (const v of reads) issues.push(...problemIssues(v.res, 404));
    if (new Set(reads.map((v) => v.comparable)).size !== 1) issues.push(`reads differ: ${reads.map((v) => v.comparable).join(' | ')}`);
    const routes = [
      await problem(`/interopInbox/${routedId}/route`, 'demo-inbox-key', 'POST', { patientId: 'demo-patient-2' }),
      await problem(`/interopInbox/${unknownId}/route`, 'demo-inbox-key', 'POST', { patientId: 'demo-patient-2' }),
    ];
    for (const v of routes) issues.push(...problemIssues(v.res, 404));
    if (new Set(routes.map((v) => v.comparable)).size !== 1) issues.push(`routes differ: ${routes.map((v) => v.comparable).join(' | ')}`);
    tally.record(issues, () => 'inbox existence');
    expect(issues).toEqual([]);
  });

  const fhirReads = [
    { type: 'Encounter', mine: 'demo-encounter-1', theirs: 'demo-encounter-2' },
    { type: 'DocumentReference', mine: 'demo-note-1', theirs: 'demo-note-2' },
    { type: 'Observation', mine: 'demo-assessment-1', theirs: 'demo-assessment-2' },
  ];
  async function outcome(path: string): Promise<{ res: Res; comparable: string }> {
    const res = asRes(await call(stack, 'GET', path, { headers: { 'x-api-key': 'demo-fhir-key' } }));
    const { text: _narrative, ...rest } = res.json<{ text?: unknown }>(); // the narrative quotes the request id
    return { res, comparable: JSON.stringify({ status: res.status, contentType: res.headers['content-type'], body: rest }) };
  }
  for (const x of fhirReads) {
    it(`FHIR ${x.type}: another patient's record (both directions) answers exactly like an unknown id`, async () => {
      expect((await call(stack, 'GET', `/fhir/${x.type}/demo-patient-1..${x.mine}`, { headers: { 'x-api-key': 'demo-fhir-key' } })).status).toBe(200);
      expect((await call(stack, 'GET', `/fhir/${x.type}/demo-patient-2..${x.theirs}`, { headers: { 'x-api-key': 'demo-fhir-key' } })).status).toBe(200);
      const variants = [
        await outcome(`/fhir/${x.type}/demo-patient-1..${x.theirs}`),
        await outcome(`/fhir/${x.type}/demo-patient-2..${x.mine}`),
        await outcome(`/fhir/${x.type}/demo-patient-1..no-such-record`),
        await outcome(`/fhir/${x.type}/no-such-patient..${x.mine}`),
        await outcome(`/fhir/${x.type}/${x.mine}`),
      ];
      const issues: string[] = [];
      for (const v of variants) issues.push(...problemIssues(v.res, 404, 'fhir'));
      if (new Set(variants.map((v) => v.comparable)).size !== 1) issues.push(`answers differ: ${variants.map((v) => v.comparable).join(' | ')}`);
      tally.record(issues, () => `FHIR ${x.type} cross-patient`);
      expect(issues).toEqual([]);
    });
  }

  it('FHIR DiagnosticReport: a lab result read under another patient answers like an unknown id', async () => {
    const id = await labReportId();
    const result = id.split('..')[1]!;
    const variants = [
      await outcome(`/fhir/DiagnosticReport/demo-patient-2..${result}`),
      await outcome('/fhir/DiagnosticReport/demo-patient-1..lr.5F0123456789abcdef0123456789abcdef'),
      await outcome(`/fhir/DiagnosticReport/no-such-patient..${result}`),
      await outcome('/fhir/Patient/no-such-patient/$everything').then((v) => ({ ...v, comparable: v.comparable.replace('Patient', 'DiagnosticReport') })),
    ];
    const issues: string[] = [];
    for (const v of variants) issues.push(...problemIssues(v.res, 404, 'fhir'));
    if (new Set(variants.slice(0, 3).map((v) => v.comparable)).size !== 1) issues.push(`answers differ: ${variants.map((v) => v.comparable).join(' | ')}`);
    tally.record(issues, () => 'FHIR DiagnosticReport cross-patient');
    expect(issues).toEqual([]);
  });

  it('prints the suite summary', () => {
    tally.print();
    expect(tally.failed).toBe(0);
    expect(tally.total).toBeGreaterThanOrEqual(60);
  });
});
